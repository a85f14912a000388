"""Time-major convolutions over packed rows against PyTorch's own convolutions."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from speech.engines.vits.layers import Layout, TimeConv, TimeConvTranspose


@pytest.mark.parametrize(
    ("cin", "cout", "kernel", "dilation"), [(8, 16, 3, 1), (16, 16, 7, 12), (16, 1, 7, 1)]
)
def test_dense_conv_matches_conv1d(cin: int, cout: int, kernel: int, dilation: int) -> None:
    torch.manual_seed(0)
    conv = TimeConv(cin, cout, kernel, dilation=dilation)
    torch.nn.init.normal_(conv.weight)
    torch.nn.init.normal_(conv.bias)
    x = torch.randn(50, cin)
    residual = torch.randn(50, cout)
    expected = F.conv1d(x.t()[None], conv.weight, conv.bias, padding=conv.padding, dilation=dilation)[0].t()
    assert torch.allclose(conv(x), expected, atol=1e-4)
    assert torch.allclose(conv(x, residual=residual), expected + residual, atol=1e-4)
    leaky = F.conv1d(
        F.leaky_relu(x, 0.1).t()[None], conv.weight, conv.bias, padding=conv.padding, dilation=dilation
    )
    assert torch.allclose(conv(x, slope=0.1), leaky[0].t(), atol=1e-4)


def test_depthwise_conv_matches_grouped_conv1d() -> None:
    conv = TimeConv(12, 12, 3, dilation=9, groups=12)
    torch.nn.init.normal_(conv.weight)
    torch.nn.init.normal_(conv.bias)
    x = torch.randn(40, 12)
    expected = F.conv1d(x.t()[None], conv.weight, conv.bias, padding=9, dilation=9, groups=12)[0].t()
    assert torch.allclose(conv(x), expected, atol=1e-5)


@pytest.mark.parametrize(("kernel", "stride"), [(16, 8), (8, 4), (12, 4)])
def test_transposed_conv_matches_conv_transpose1d(kernel: int, stride: int) -> None:
    up = TimeConvTranspose(6, 4, kernel, stride, (kernel - stride) // 2)
    torch.nn.init.normal_(up.weight)
    torch.nn.init.normal_(up.bias)
    x = torch.randn(9, 6)
    expected = F.conv_transpose1d(
        x.t()[None], up.weight, up.bias, stride=stride, padding=(kernel - stride) // 2
    )
    assert torch.allclose(up(x), expected[0].t(), atol=1e-4)


def test_gaps_isolate_packed_items() -> None:
    conv = TimeConv(4, 4, 5, dilation=2)
    torch.nn.init.normal_(conv.weight)
    a, b = torch.randn(7, 4), torch.randn(11, 4)
    layout = Layout.packed([7, 11], gap=4, device=torch.device("cpu"), dtype=torch.float32)
    packed = torch.full((layout.rows, 4), 5.0)  # garbage in the gaps: zeroed before the product
    packed[layout.starts[0] : layout.starts[0] + 7] = a
    packed[layout.starts[1] : layout.starts[1] + 11] = b
    out = conv(packed, layout=layout)
    assert torch.allclose(out[layout.starts[0] : layout.starts[0] + 7], conv(a), atol=1e-5)
    assert torch.allclose(out[layout.starts[1] : layout.starts[1] + 11], conv(b), atol=1e-5)


def test_layout_window_and_scale() -> None:
    layout = Layout.packed([3, 5], gap=2, device=torch.device("cpu"), dtype=torch.float32)
    assert (layout.rows, layout.starts) == (14, (2, 7))
    window = layout.window(4, 10)
    assert (window.starts, window.lengths) == ((0, 3), (1, 3))
    scaled = layout.scaled(4)
    assert (scaled.rows, scaled.starts, scaled.lengths) == (56, (8, 28), (12, 20))
    assert int(scaled.mask.sum()) == 32 and scaled.gap_rows is not None and len(scaled.gap_rows) == 24
