"""A time-major convolution is the ``nn.Conv1d`` it replaces, and keeps the layout it is given;
``auto`` holds the blocks time-major only where that was measured faster (``time_major.py``)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from speech.engines.kokoro.engine import resolve_time_major
from speech.engines.kokoro.time_major import TimeMajorConv1d, to_channel_first, to_time_major


@pytest.mark.parametrize(("kernel", "dilation"), [(3, 1), (7, 3), (11, 5)])
@pytest.mark.parametrize("bias", [True, False])
def test_it_is_the_conv1d_it_replaces(kernel: int, dilation: int, bias: bool) -> None:
    torch.manual_seed(kernel + dilation)
    conv = nn.Conv1d(16, 24, kernel, dilation=dilation, padding=(kernel - 1) * dilation // 2, bias=bias)
    x = torch.randn(2, 16, 301)
    with torch.inference_mode():
        reference = conv(x)
        ours = TimeMajorConv1d(conv)(to_time_major(x))
    assert ours.is_contiguous(memory_format=torch.channels_last)  # the next block reads it as it is
    torch.testing.assert_close(to_channel_first(ours), reference, rtol=1e-5, atol=1e-5)


def test_the_layout_round_trip_keeps_every_value() -> None:
    x = torch.randn(3, 8, 50)
    there = to_time_major(x)
    assert there.shape == (3, 8, 1, 50) and there.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(to_channel_first(there), x)


def test_a_grouped_or_reflecting_convolution_is_refused() -> None:
    with pytest.raises(ValueError, match="plain zero-padded"):
        TimeMajorConv1d(nn.Conv1d(8, 8, 3, padding=1, groups=2))
    with pytest.raises(ValueError, match="plain zero-padded"):
        TimeMajorConv1d(nn.Conv1d(8, 8, 3, padding=1, padding_mode="reflect"))


@pytest.mark.parametrize(("amx", "dtype", "spectral", "device", "expected"), [
    (True, "bfloat16", False, "cpu", True),  # measured: the generator 0.73x its channel-first time
    (True, "float32", True, "cpu", False),  # float32 computes in the frequency domain
    (True, "bfloat16", True, "cpu", False),  # spectral asked for: no direct convolutions to lay out
    (False, "bfloat16", True, "cpu", False),  # AVX-512 BF16 without AMX: spectral
    (False, "bfloat16", False, "cpu", False),  # direct by hand without AMX: not measured, channel-first
    (True, "bfloat16", False, "cuda", False),  # cuDNN picks its own
])
def test_auto_lays_the_blocks_out_time_major_only_on_amx(
    monkeypatch: pytest.MonkeyPatch, amx: bool, dtype: str, spectral: bool, device: str, expected: bool
) -> None:
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx)
    assert resolve_time_major(device, dtype, spectral) is expected
