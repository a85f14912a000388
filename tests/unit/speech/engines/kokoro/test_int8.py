"""The CPU int8 path: every convolution but the last is ``Int8Conv1d``, which computes as the
shipped graph's ``DynamicQuantizeLinear`` + ``ConvInteger`` do (8-bit input quantized per call,
int8 weights, int32 sums, a float32 output with no second rounding).

torch's dynamic ``Conv1d`` requantized its output at its input's scale: an output larger than
the input's range came back clipped. The first test is the one that would catch that again."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from speech.engines.kokoro import int8
from speech.engines.kokoro.int8 import Int8Conv1d, quantize_activations
from speech.engines.kokoro.model import KokoroModel

if not hasattr(torch.ops.onednn, "qconv1d_pointwise"):  # pragma: no cover - an x86 build without oneDNN
    pytest.skip("oneDNN's quantized convolution is not in this torch build", allow_module_level=True)


def _snr_db(reference: torch.Tensor, ours: torch.Tensor) -> float:
    return float(10 * torch.log10(reference.pow(2).sum() / (reference - ours).pow(2).sum()))


def test_an_output_larger_than_the_input_range_is_not_clipped() -> None:
    conv = nn.Conv1d(8, 4, 3, padding=1)
    with torch.no_grad():
        conv.weight.fill_(0.5)
        conv.bias.zero_()
    x = torch.rand(1, 8, 50)  # inputs in [0, 1), outputs about 6
    expected = conv(x).detach()
    got = Int8Conv1d(conv)(x)
    assert expected.abs().max() > 4 * x.abs().max()
    # 8-bit input steps of 1/255 over 24 products: a few hundredths at most, never a clip.
    torch.testing.assert_close(got, expected, atol=0.05, rtol=0.0)


@pytest.mark.parametrize(("channels", "kernel", "dilation", "stride"), [(64, 3, 1, 1), (32, 7, 3, 1), (22, 12, 1, 6)])
def test_output_is_the_float_convolution_within_8_bit_quantization_noise(
    channels: int, kernel: int, dilation: int, stride: int
) -> None:
    """8-bit activations and 8-bit per-channel weights leave about 35-40 dB SNR on random data
    (we measure ~38); 30 dB would still pass a conv with one extra bit lost (7-bit activations
    read ~32) but not any clipping or scale error."""
    torch.manual_seed(0)
    conv = nn.Conv1d(channels, 48, kernel, stride=stride, padding=(kernel - 1) * dilation // 2, dilation=dilation)
    x = torch.randn(1, channels, 300).transpose(1, 2).contiguous().transpose(1, 2)  # strided, as the decoder makes them
    expected = conv(x).detach()
    got = Int8Conv1d(conv)(x)
    assert got.shape == expected.shape and got.dtype == torch.float32
    assert _snr_db(expected, got) >= 30


def test_the_largest_products_do_not_saturate_on_this_cpu() -> None:
    """Activations at the top of their range against weights at the top of theirs: where oneDNN
    multiplies without VNNI (an AVX2 CPU) two such u8 x s8 products overflow its int16 pair sum,
    and with full-range weights the output stuck at a fraction of the truth. On a VNNI CPU this
    passes either way; on an AVX2 one it is the test that fails."""
    conv = nn.Conv1d(64, 8, 3, padding=1, bias=False)
    with torch.no_grad():
        conv.weight.fill_(1.0)
    x = torch.ones(1, 64, 40)  # every activation quantizes to 255, every weight to the top level
    expected = conv(x).detach()
    torch.testing.assert_close(Int8Conv1d(conv)(x), expected, atol=0.05 * float(expected.max()), rtol=0.0)


@pytest.mark.parametrize(("vnni", "cap", "top"), [
    (True, "", 127), (False, "", 63), (True, "AVX2", 63), (True, "avx512_core_amx", 127),
])
def test_weights_keep_a_bit_back_where_onednn_has_no_vnni(
    monkeypatch: pytest.MonkeyPatch, vnni: bool, cap: str, top: int
) -> None:
    monkeypatch.setattr(torch.cpu, "_is_vnni_supported", lambda: vnni)
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", cap)
    assert int8.weight_levels() == top
    conv = nn.Conv1d(4, 2, 3, padding=1)
    assert torch.allclose(Int8Conv1d(conv).weight_scales, conv.weight.detach().abs().amax(dim=(1, 2)) / top)


def test_activations_quantize_zero_exactly_over_a_range_that_holds_zero() -> None:
    q, scale, zero_point = quantize_activations(torch.tensor([0.5, 1.0, 2.0]))  # all positive: range [0, 2]
    assert zero_point == 0 and scale == pytest.approx(2 / 255)
    assert q.dtype == torch.uint8 and q.tolist() == [64, 128, 255]
    q, scale, zero_point = quantize_activations(torch.tensor([-1.0, 0.0, 3.0]))
    assert (float(q[1]) - zero_point) * scale == 0.0


def test_quantize_dynamic_converts_every_convolution_but_the_last() -> None:
    model = KokoroModel()
    model.quantize_dynamic()
    convs = [m for m in model.modules() if isinstance(m, nn.Conv1d | Int8Conv1d)]
    assert [m for m in convs if isinstance(m, Int8Conv1d)]
    assert [m for m in convs if type(m) is nn.Conv1d] == [model.decoder.generator.conv_post]
