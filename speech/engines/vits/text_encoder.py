"""The prior text encoder ``enc_p``: phoneme ids to a hidden sequence and the prior's mean and
log-scale per phoneme.

A transformer encoder (post-norm) whose attention uses relative positions and whose
feed-forward blocks are 3-tap convolutions, so each phoneme also sees its neighbours.
Rows are a strided ``Layout``: a padded batch seen as one time-major sequence.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from speech.engines.vits.attention import RelativeMultiHeadAttention
from speech.engines.vits.config import ModelShape
from speech.engines.vits.layers import ChannelLayerNorm, Layout, TimeConv


class ConvFeedForward(nn.Module):
    def __init__(self, channels: int, filter_channels: int, kernel_size: int) -> None:
        super().__init__()
        self.conv_1 = TimeConv(channels, filter_channels, kernel_size)
        self.conv_2 = TimeConv(filter_channels, channels, kernel_size)

    def forward(self, x: torch.Tensor, layout: Layout) -> torch.Tensor:
        x = torch.relu_(self.conv_1(x * layout.mask))
        out: torch.Tensor = self.conv_2(x * layout.mask)
        return out * layout.mask


class Encoder(nn.Module):
    def __init__(self, shape: ModelShape) -> None:
        super().__init__()
        n = shape.n_layers
        self.attn_layers = nn.ModuleList(
            RelativeMultiHeadAttention(shape.hidden, shape.n_heads, shape.window_size) for _ in range(n)
        )
        self.norm_layers_1 = nn.ModuleList(ChannelLayerNorm(shape.hidden) for _ in range(n))
        self.ffn_layers = nn.ModuleList(
            ConvFeedForward(shape.hidden, shape.filter, shape.kernel_size) for _ in range(n)
        )
        self.norm_layers_2 = nn.ModuleList(ChannelLayerNorm(shape.hidden) for _ in range(n))

    def forward(self, x: torch.Tensor, layout: Layout) -> torch.Tensor:
        batch = len(layout.lengths)
        masked_keys = None
        if layout.gap_rows is not None:
            masked_keys = layout.mask.view(batch, 1, 1, -1) == 0
        x = x * layout.mask
        for attn, norm_1, ffn, norm_2 in zip(
            self.attn_layers, self.norm_layers_1, self.ffn_layers, self.norm_layers_2, strict=True
        ):
            x = norm_1(x + attn(x, layout, masked_keys))
            x = norm_2(x + ffn(x, layout))
        return x * layout.mask


class TextEncoder(nn.Module):
    def __init__(self, shape: ModelShape) -> None:
        super().__init__()
        self.hidden = shape.hidden
        self.out_channels = shape.inter_channels
        self.emb = nn.Embedding(shape.n_vocab, shape.hidden)
        self.encoder = Encoder(shape)
        self.proj = TimeConv(shape.hidden, shape.inter_channels * 2, 1)

    def forward(self, ids: torch.Tensor, layout: Layout) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``ids`` [rows] in ``layout`` -> (hidden, prior mean, prior log-scale), each [rows, channels]."""
        x = self.emb(ids) * math.sqrt(self.hidden)
        x = self.encoder(x, layout)
        stats = self.proj(x) * layout.mask
        return x, stats[:, : self.out_channels], stats[:, self.out_channels :]
