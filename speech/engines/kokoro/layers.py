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

from speech.engines.vits import layers as vits_layers


def time_mask(lengths: torch.Tensor, size: int) -> torch.Tensor | None:
    """``[B, 1, T]`` float mask, 1 on each item's valid positions; ``None`` when every item fills
    all ``size`` positions (one item alone, or equal lengths), so that no pass is spent on it."""
    if bool((lengths == size).all()):
        return None
    steps = torch.arange(size, device=lengths.device)
    return (steps[None, :] < lengths[:, None]).unsqueeze(1).to(torch.float32)


def masked(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """``x`` with the padding set to zero."""
    return x if mask is None else x * mask.to(x.dtype)


def time_stats(x: torch.Tensor, mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and (biased) variance over time, from the valid positions only."""
    if mask is None:
        # Two vectorised reductions (the mean and the mean square): several times faster on
        # CPU than torch.var_mean's Welford loop. These activations' means are within a few
        # standard deviations of zero, so float32 keeps the variance to ~1e-6 (parity-tested).
        mean = x.mean(dim=-1, keepdim=True)
        square = (x * x).mean(dim=-1, keepdim=True)
        return mean, (square - mean * mean).clamp_(min=0)
    mask = mask.to(x.dtype)
    count = mask.sum(dim=-1, keepdim=True).clamp(min=1)
    mean = (x * mask).sum(dim=-1, keepdim=True) / count
    centred = (x - mean) * mask
    return mean, (centred * centred).sum(dim=-1, keepdim=True) / count


class AdaIN1d(nn.Module):
    """Instance norm whose scale and shift come from the style vector: ``(1 + gamma) * norm + beta``,
    applied as one fused multiply-add per element."""

    def __init__(self, style_dim: int, channels: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.fc = nn.Linear(style_dim, channels * 2)

    def forward(self, x: torch.Tensor, style: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        gamma, beta = self.fc(style).unsqueeze(-1).chunk(2, dim=1)
        mean, var = time_stats(x, mask)
        scale = (1 + gamma) * torch.rsqrt(var + self.eps)
        return torch.addcmul(beta - mean * scale, x, scale)


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

    def forward(self, x: torch.Tensor, style: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``lengths`` are the input's; an upsampling block's output has twice as many."""
        mask = time_mask(lengths, x.shape[-1])
        shortcut = F.interpolate(x, scale_factor=2.0, mode="nearest") if self.upsample else x
        if self.learned_sc:
            shortcut = self.conv1x1(shortcut)
        h = F.leaky_relu(self.norm1(x, style, mask), 0.2, inplace=True)
        if self.upsample:
            h = self.pool(masked(h, mask))
            lengths = lengths * 2
            mask = time_mask(lengths, h.shape[-1])
        h = self.conv1(masked(h, mask))
        h = F.leaky_relu(self.norm2(h, style, mask), 0.2, inplace=True)
        h = self.conv2(masked(h, mask))
        return masked((h + shortcut).mul_(1 / math.sqrt(2)), mask)


def packed_lstm(lstm: nn.LSTM, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """A bidirectional LSTM over ``[B, T, C]`` that sees each item's valid steps only; the output
    is zero past each item's end."""
    total = x.shape[1]
    packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
    out, _ = lstm(packed)
    out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=total)
    return out
