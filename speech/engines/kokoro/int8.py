"""Kokoro's int8 convolutions on CPU, computed as the shipped onnxruntime graph computes them.

Why not torch's dynamic ``Conv1d`` (``torch.ao.nn.quantized.dynamic``): it quantizes its input
on the fly, as it should, but then *requantizes its output at the input's scale and zero point*
before handing back float32 (on the fbgemm, onednn and x86 engines alike, torch 2.13). Every
output outside the input's range is clipped and the rest lands on a grid sized for the input: a
conv whose input spans [0, 1] and whose true output is 5 returns 2. That, not int8 as such, made
Kokoro's CPU path sound far worse than float32 (DNSMOS P.808 3.35 against 4.21 for ``af_heart``,
while onnxruntime on the same int8 weights reads 4.19; ``python -m bench.quality``).

``Int8Conv1d`` does what the graph's ``DynamicQuantizeLinear`` + ``ConvInteger`` do: the input
quantized per call to 8-bit unsigned over ``[min(x, 0), max(x, 0)]``, the weights int8 per
output channel (finer than the graph's per tensor), int32 accumulation, and a float32 output
scaled by input scale times weight scale: no second rounding. The op is oneDNN's
``qconv1d_pointwise`` with a float32 output, x86 only.

On a CPU without VNNI (an AVX2 CPU such as an AMD Zen 3) oneDNN multiplies with
``vpmaddubsw``, which adds two u8 x s8 products into a *saturating* int16: two products near
255 x 127 overflow it, and the sum sticks at 32767. There the audio fell to 4.6 dB of magnitude
SNR against float32 (16 dB with VNNI; ``test_precision_drift.py``). So without VNNI the
weights take 7 bits (-63 to 63): two products then stay within int16 (2 x 255 x 63 = 32130).
The weights, not the activations (fbgemm's ``reduce_range``): a weight's scale is its output
channel's, an activation's the whole tensor's, so a bit costs the weights less (15.2 dB here,
against 12.5 with 7-bit activations).
"""

from __future__ import annotations

import os
from typing import cast

import torch
from torch import nn

#: oneDNN ISA caps below which it has no VNNI instructions, whatever the CPU has.
_WITHOUT_VNNI = {"SSE41", "AVX", "AVX2"}


def weight_levels() -> int:
    """The largest weight magnitude: 127 where oneDNN multiplies with VNNI, else 63 (see above)."""
    capped = os.environ.get("ONEDNN_MAX_CPU_ISA", "").upper() in _WITHOUT_VNNI
    return 127 if torch.cpu._is_vnni_supported() and not capped else 63


def quantize_activations(x: torch.Tensor) -> tuple[torch.Tensor, float, int]:
    """``x`` as uint8 with the scale and zero point of the range ``[min(x, 0), max(x, 0)]``
    (ONNX ``DynamicQuantizeLinear``: zero is exact, so a convolution's zero padding is too)."""
    low, high = (float(v) for v in torch.aminmax(x))
    low, high = min(low, 0.0), max(high, 0.0)
    scale = (high - low) / 255 or 1.0
    zero_point = int(round(-low / scale))
    q = torch.round(x * (1.0 / scale)).add_(zero_point).clamp_(0, 255).to(torch.uint8)
    return q, scale, zero_point


class Int8Conv1d(nn.Module):
    """An ``nn.Conv1d``'s int8 twin (see the module docstring); padding is zeros, as Kokoro's."""

    def __init__(self, conv: nn.Conv1d) -> None:
        super().__init__()
        weight = conv.weight.detach().float()
        top = weight_levels()
        scales = weight.abs().amax(dim=(1, 2)).clamp(min=1e-12) / top
        self.stride = [conv.stride[0]]
        self.padding = [cast(tuple[int, ...], conv.padding)[0]]
        self.dilation = [conv.dilation[0]]
        self.groups = conv.groups
        self.out_channels = conv.out_channels
        quantized = torch.round(weight / scales[:, None, None]).clamp_(-top, top).to(torch.int8)
        self.register_buffer("weight_scales", scales.contiguous())
        self.register_buffer("weight_zero_points", torch.zeros(conv.out_channels, dtype=torch.long))
        self.register_buffer("bias", None if conv.bias is None else conv.bias.detach().float().contiguous())
        self.packed = torch.ops.onednn.qconv_prepack(
            quantized, scales, 1.0, 0, self.stride, self.padding, self.dilation, self.groups, None
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, scale, zero_point = quantize_activations(x)
        return torch.ops.onednn.qconv1d_pointwise(
            q, scale, zero_point, self.packed, self.weight_scales, self.weight_zero_points, self.bias,
            self.stride, self.padding, self.dilation, self.groups, 1.0, 0, torch.float32, "none", [], "",
        )
