"""Kokoro's prosody predictor and its acoustic text encoder.

``DurationEncoder``: three style-conditioned BiLSTM layers over PL-BERT's features, the style
appended to every step. ``ProsodyPredictor`` then gives each phoneme a duration (50 sigmoid
bins summed) and, once phonemes are expanded to frames, the F0 and energy curves at twice the
frame rate. ``TextEncoder`` (embedding, three conv + layer norm blocks, BiLSTM) gives the
decoder its per-phoneme content. LSTMs see each item's valid steps only, so padding never reaches an item's states.
"""

from __future__ import annotations

from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

from speech.engines.kokoro.layers import (
    AdainResBlk1d,
    AdaLayerNorm,
    ChannelLayerNorm,
    bidirectional_lstm,
    masked,
    time_mask,
)

STYLE = 128
HIDDEN = 512
MAX_DURATION = 50


def _bilstm(inputs: int, hidden: int) -> nn.LSTM:
    return nn.LSTM(inputs, hidden // 2, num_layers=1, batch_first=True, bidirectional=True)


class DurationEncoder(nn.Module):
    def __init__(self, layers: int = 3) -> None:
        super().__init__()
        blocks: list[nn.Module] = []
        for _ in range(layers):
            blocks += [_bilstm(HIDDEN + STYLE, HIDDEN), AdaLayerNorm(STYLE, HIDDEN)]
        self.lstms = nn.ModuleList(blocks)

    def forward(self, x: torch.Tensor, style: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``x`` ``[B, T, 512]`` -> ``[B, T, 640]`` (features with the style appended)."""
        mask = time_mask(lengths, x.shape[1])
        mask = None if mask is None else mask.transpose(1, 2)  # [B, T, 1]
        styles = style[:, None, :].expand(-1, x.shape[1], -1)
        x = masked(torch.cat([x, styles], dim=-1), mask)
        for block in self.lstms:
            if isinstance(block, AdaLayerNorm):
                x = masked(torch.cat([block(x, style), styles], dim=-1), mask)
            else:
                x = bidirectional_lstm(cast(nn.LSTM, block), x, lengths)
        return x


class LinearNorm(nn.Module):
    def __init__(self, inputs: int, outputs: int) -> None:
        super().__init__()
        self.linear_layer = nn.Linear(inputs, outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear_layer(x)


class ProsodyPredictor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.text_encoder = DurationEncoder()
        self.lstm = _bilstm(HIDDEN + STYLE, HIDDEN)
        self.duration_proj = LinearNorm(HIDDEN, MAX_DURATION)
        self.shared = _bilstm(HIDDEN + STYLE, HIDDEN)
        self.F0 = nn.ModuleList(
            [
                AdainResBlk1d(HIDDEN, HIDDEN, STYLE),
                AdainResBlk1d(HIDDEN, HIDDEN // 2, STYLE, upsample=True),
                AdainResBlk1d(HIDDEN // 2, HIDDEN // 2, STYLE),
            ]
        )
        self.N = nn.ModuleList(
            [
                AdainResBlk1d(HIDDEN, HIDDEN, STYLE),
                AdainResBlk1d(HIDDEN, HIDDEN // 2, STYLE, upsample=True),
                AdainResBlk1d(HIDDEN // 2, HIDDEN // 2, STYLE),
            ]
        )
        self.F0_proj = nn.Conv1d(HIDDEN // 2, 1, 1)
        self.N_proj = nn.Conv1d(HIDDEN // 2, 1, 1)

    def durations(self, d: torch.Tensor, lengths: torch.Tensor, speed: torch.Tensor) -> torch.Tensor:
        """Frames per phoneme, ``[B, T]`` long, at least 1 on valid phonemes and 0 on padding."""
        x = bidirectional_lstm(self.lstm, d, lengths)
        raw = torch.sigmoid(self.duration_proj(x)).sum(dim=-1) / speed[:, None]
        frames = torch.round(raw).clamp(min=1).long()
        mask = time_mask(lengths, d.shape[1])
        return frames if mask is None else frames * mask[:, 0].long()

    def curves(
        self, en: torch.Tensor, style: torch.Tensor, frames: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """F0 and energy ``[B, 2F]`` from frame features ``en`` ``[B, 640, F]``."""
        x = bidirectional_lstm(self.shared, en.transpose(1, 2), frames).transpose(1, 2)
        curves = []
        for blocks, proj in ((self.F0, self.F0_proj), (self.N, self.N_proj)):
            h, lengths = x, frames
            for block in blocks:
                h = block(h, style, lengths)
                if block.upsample:
                    lengths = lengths * 2
            curves.append(masked(proj(h), time_mask(lengths, h.shape[-1]))[:, 0])
        return curves[0], curves[1]


class TextEncoder(nn.Module):
    def __init__(self, vocab: int = 178, channels: int = HIDDEN, kernel: int = 5, depth: int = 3) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, channels)
        self.cnn = nn.ModuleList(
            [
                nn.Sequential(nn.Conv1d(channels, channels, kernel, padding=kernel // 2), ChannelLayerNorm(channels))
                for _ in range(depth)
            ]
        )
        self.lstm = _bilstm(channels, channels)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``[B, T]`` ids -> ``[B, 512, T]``, zero past each item's end."""
        mask = time_mask(lengths, ids.shape[1])
        x = masked(self.embedding(ids).transpose(1, 2), mask)
        for block in self.cnn:
            x = masked(F.leaky_relu(block(x), 0.2), mask)
        x = bidirectional_lstm(self.lstm, x.transpose(1, 2), lengths).transpose(1, 2)
        return masked(x, mask)
