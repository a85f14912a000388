"""Building blocks shared by Kokoro's predictor and decoder, written for padded batches.

Every block takes ``lengths`` (valid positions per item at the block's own time resolution)
and keeps the padding at zero after each convolution, so a position past an item's end looks
to the next convolution exactly like the zero padding that item sees when it runs alone.
Instance norms take their statistics over the valid positions only. Together these make a
batched item's output equal to its unbatched output, to float rounding.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from speech.engines.kokoro import kernels
from speech.engines.kokoro.kernels import masked as masked
from speech.engines.vits import layers as vits_layers


def time_mask(lengths: torch.Tensor, size: int) -> torch.Tensor | None:
    """``[B, 1, T]`` float mask, 1 on each item's valid positions.

    On the CPU it is ``None`` when every item fills all ``size`` positions (one item alone, or
    equal lengths), so that no pass is spent on it. On a GPU the mask is always built: asking
    whether it is needed would wait for the device (a host sync per block), and the fused
    kernels apply it at no extra cost."""
    if lengths.device.type == "cpu" and bool((lengths == size).all()):
        return None
    steps = torch.arange(size, device=lengths.device)
    return (steps[None, :] < lengths[:, None]).unsqueeze(1).to(torch.float32)


class AdaIN1d(nn.Module):
    """Instance norm whose scale and shift come from the style vector: ``(1 + gamma) * norm + beta``,
    applied as one fused multiply-add per element."""

    def __init__(self, style_dim: int, channels: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.fc = nn.Linear(style_dim, channels * 2)

    def affine(self, style: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``gamma`` and ``beta``, ``[B, C, 1]`` each."""
        gamma, beta = self.fc(style).unsqueeze(-1).chunk(2, dim=1)
        return gamma, beta

    def forward(self, x: torch.Tensor, style: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        return kernels.adain(x, *self.affine(style), mask, self.eps)


class AdaLayerNorm(nn.Module):
    """Layer norm over channels (no affine) with a style-given scale and shift, ``[B, T, C]``."""

    def __init__(self, style_dim: int, channels: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.channels = channels
        self.eps = eps
        self.fc = nn.Linear(style_dim, channels * 2)

    def forward(self, x: torch.Tensor, style: torch.Tensor) -> torch.Tensor:
        gamma, beta = self.fc(style).unsqueeze(1).chunk(2, dim=-1)
        return (1 + gamma) * F.layer_norm(x, (self.channels,), eps=self.eps) + beta


class ChannelLayerNorm(vits_layers.ChannelLayerNorm):
    """VITS's channel layer norm (weights gamma and beta, as StyleTTS2 names them too) over the
    channels of a ``[B, C, T]`` tensor."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.transpose(1, -1)).transpose(1, -1)


class AdainResBlk1d(nn.Module):
    """StyleTTS2's residual block: AdaIN, LeakyReLU(0.2), conv, twice; optional 2x upsampling
    (nearest on the shortcut, a depthwise transposed conv on the residual path)."""

    def __init__(self, dim_in: int, dim_out: int, style_dim: int, *, upsample: bool = False) -> None:
        super().__init__()
        self.upsample = upsample
        self.learned_sc = dim_in != dim_out
        self.conv1 = nn.Conv1d(dim_in, dim_out, 3, 1, 1)
        self.conv2 = nn.Conv1d(dim_out, dim_out, 3, 1, 1)
        self.norm1 = AdaIN1d(style_dim, dim_in)
        self.norm2 = AdaIN1d(style_dim, dim_out)
        if self.learned_sc:
            self.conv1x1 = nn.Conv1d(dim_in, dim_out, 1, 1, 0, bias=False)
        if upsample:
            self.pool = nn.ConvTranspose1d(dim_in, dim_in, 3, stride=2, groups=dim_in, padding=1, output_padding=1)
        self.kernels = kernels.EAGER

    def forward(self, x: torch.Tensor, style: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``lengths`` are the input's; an upsampling block's output has twice as many."""
        mask = time_mask(lengths, x.shape[-1])
        shortcut = F.interpolate(x, scale_factor=2.0, mode="nearest") if self.upsample else x
        if self.learned_sc:
            shortcut = self.conv1x1(shortcut)
        ops = self.kernels
        h = ops.adain_leaky(x, *self.norm1.affine(style), mask, self.norm1.eps, 0.2)
        if self.upsample:
            h = self.pool(h)
            lengths = lengths * 2
            mask = time_mask(lengths, h.shape[-1])
            h = masked(h, mask)
        h = self.conv1(h)
        h = self.conv2(ops.adain_leaky(h, *self.norm2.affine(style), mask, self.norm2.eps, 0.2))
        return ops.residual(h, shortcut, mask, 1 / math.sqrt(2))


def _directions(lstm: nn.LSTM) -> tuple[nn.LSTM, nn.LSTM]:
    """One-layer unidirectional LSTMs with copies of ``lstm``'s forward and reverse weights, built
    on first use (after the weights are loaded and moved). Copies, not shared tensors: cuDNN wants
    each LSTM's weights in one flat buffer, and would compact shared ones on every call."""
    cached = lstm.__dict__.get("_lector_directions")
    if cached is None:
        with torch.inference_mode(False):  # plain tensors, even when first called under inference
            cached = _copy_directions(lstm)
        lstm.__dict__["_lector_directions"] = cached  # a plain attribute: not a submodule, not in state_dict
    return cached


def _copy_directions(lstm: nn.LSTM) -> tuple[nn.LSTM, nn.LSTM]:
    halves = []
    for suffix in ("", "_reverse"):
        half = nn.LSTM(lstm.input_size, lstm.hidden_size, num_layers=1, batch_first=True)
        half = half.to(next(lstm.parameters()).device)
        with torch.no_grad():
            for name in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"):
                getattr(half, name).copy_(getattr(lstm, name + suffix))
        half.flatten_parameters()
        halves.append(half.eval())
    return halves[0], halves[1]


def bidirectional_lstm(lstm: nn.LSTM, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """A bidirectional LSTM over ``[B, T, C]`` that sees each item's valid steps only; the output
    is zero past each item's end.

    Each direction runs unpacked on the padded batch. The forward one reads an item's steps
    before its padding, so the padding never reaches the outputs we keep. The backward one reads
    each item reversed within its own length (padding still last), and its output is put back in
    order. Packed sequences gave the same result, but cuDNN runs a packed batch as one launch per
    time step: on an H100 the host spent 10 ms a call issuing them, a quarter of a batch's time."""
    forward, backward = _directions(lstm)
    steps = torch.arange(x.shape[1], device=x.device)[None, :]
    valid = steps < lengths[:, None]
    order = torch.where(valid, lengths[:, None] - 1 - steps, steps)  # its own inverse
    gather = order[..., None].expand(-1, -1, x.shape[-1])
    ahead, _ = forward(x)
    behind, _ = backward(x.gather(1, gather))
    behind = behind.gather(1, order[..., None].expand(-1, -1, behind.shape[-1]))
    return torch.cat([ahead, behind], dim=-1) * valid[..., None].to(x.dtype)
