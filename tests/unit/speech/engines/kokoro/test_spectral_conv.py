"""``SpectralConv1d`` is the convolution it replaces, to float32 rounding, at every shape the
generator gives it, and a padded batch's item gets what it gets alone.

The tolerance, 1e-5 of the output's norm: the blockwise products sum in another order than a
direct kernel does, which moves an output by a few parts in 1e7 (4e-7 measured at every shape
here); a wrong tap, phase or block boundary moves it by a whole part in ten or more.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from speech.engines.kokoro.spectral_conv import BLOCK, SpectralConv1d, replace_long_convolutions

TOLERANCE = 1e-5


def _conv(channels_in: int, channels_out: int, kernel: int, dilation: int, *, bias: bool = True) -> nn.Conv1d:
    torch.manual_seed(kernel * 100 + dilation * 10 + channels_in)
    return nn.Conv1d(
        channels_in, channels_out, kernel, dilation=dilation, padding=(kernel - 1) * dilation // 2, bias=bias
    )


def _relative_error(ours: torch.Tensor, reference: torch.Tensor) -> float:
    return float((ours - reference).norm() / reference.norm())


@pytest.mark.parametrize("kernel", [7, 11])
@pytest.mark.parametrize("dilation", [1, 3, 5])
@pytest.mark.parametrize("steps", [1, 5, BLOCK - 1, 3 * BLOCK + 17, 2000])
def test_it_is_the_direct_convolution(kernel: int, dilation: int, steps: int) -> None:
    conv = _conv(24, 16, kernel, dilation)
    x = torch.randn(2, 24, steps)
    with torch.inference_mode():
        reference, ours = conv(x), SpectralConv1d(conv)(x)
    assert ours.shape == reference.shape
    assert _relative_error(ours, reference) < TOLERANCE


def test_without_a_bias_and_from_a_time_major_input() -> None:
    conv = _conv(32, 32, 11, 3, bias=False)
    x = torch.randn(1, 600, 32).transpose(1, 2)  # any layout in
    with torch.inference_mode():
        assert _relative_error(SpectralConv1d(conv)(x), conv(x)) < TOLERANCE


def test_a_padded_batch_item_gets_what_it_gets_alone() -> None:
    """The layers keep the padding at zero; past an item's end the convolution reads zeros, as
    alone, and no block mixes two items."""
    conv = _conv(16, 16, 11, 5)
    spectral = SpectralConv1d(conv)
    short, long = torch.randn(1, 16, 700), torch.randn(1, 16, 1300)
    batch = torch.zeros(2, 16, 1300)
    batch[0, :, :700], batch[1] = short[0], long[0]
    with torch.inference_mode():
        together = spectral(batch)
        alone = spectral(short), spectral(long)
    assert _relative_error(together[0, :, :700], alone[0][0]) < TOLERANCE
    assert _relative_error(together[1], alone[1][0]) < TOLERANCE


@pytest.mark.parametrize("dilation", [1, 5])
def test_the_output_is_channel_first_in_memory(dilation: int) -> None:
    """The layout the direct convolutions and the elementwise chains after it read fastest (a
    time-major one cost oneDNN a reorder: ``conv_post`` took 2.5x as long)."""
    with torch.inference_mode():
        y = SpectralConv1d(_conv(8, 8, 7, dilation))(torch.randn(1, 8, 300))
    assert y.stride(2) == 1 and y.stride(1) >= 300


@pytest.mark.parametrize("conv", [
    nn.Conv1d(8, 8, 7, stride=2, padding=3),
    nn.Conv1d(8, 8, 7, groups=2, padding=3),
    nn.Conv1d(8, 8, 7, padding=0),
])
def test_it_refuses_what_it_does_not_compute(conv: nn.Conv1d) -> None:
    with pytest.raises(ValueError, match="stride-1, single-group"):
        SpectralConv1d(conv)


def test_only_long_stride_one_convolutions_are_replaced() -> None:
    module = nn.ModuleDict({
        "long": _conv(8, 8, 11, 5),
        "seven": _conv(8, 8, 7, 1),
        "short": _conv(8, 8, 3, 1),
        "strided": nn.Conv1d(8, 8, 12, stride=6, padding=3),
        "nested": nn.ModuleList([_conv(8, 8, 7, 3)]),
    })
    assert replace_long_convolutions(module) == 3
    kinds = {name: type(child).__name__ for name, child in module.items()}
    assert kinds == {
        "long": "SpectralConv1d", "seven": "SpectralConv1d", "short": "Conv1d", "strided": "Conv1d", "nested": "ModuleList",
    }
    assert isinstance(module["nested"][0], SpectralConv1d)
