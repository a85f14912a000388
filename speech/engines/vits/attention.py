"""Multi-head self-attention with windowed relative positions (the VITS text encoder's).

Each head adds to the content scores a learned score for the key's offset from the query
(offsets beyond +/- ``window`` score zero), and adds to its output a learned vector per offset
weighted by the attention the query paid at that offset. Offsets are handled with gathers on
``[.., time, 2*window+1]`` tensors instead of the reference's pad-and-reshape tricks: same
numbers, and no ``[time, 2*time-1]`` intermediates.

Input rows are a strided ``Layout`` (item ``b`` at row ``b * stride``), so the batch is a plain
``[batch, stride, channels]`` view; keys past an item's length are masked out.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from speech.engines.vits.layers import Layout, TimeConv


class RelativeMultiHeadAttention(nn.Module):
    def __init__(self, channels: int, n_heads: int, window_size: int) -> None:
        super().__init__()
        if channels % n_heads:
            raise ValueError("channels must divide into heads")
        self.n_heads = n_heads
        self.k_channels = channels // n_heads
        self.window_size = window_size
        self.conv_q = TimeConv(channels, channels, 1)
        self.conv_k = TimeConv(channels, channels, 1)
        self.conv_v = TimeConv(channels, channels, 1)
        self.conv_o = TimeConv(channels, channels, 1)
        n_rel = 2 * window_size + 1
        # Shared by all heads (the reference's ``heads_share=True``): shape [1, n_rel, k].
        self.emb_rel_k = nn.Parameter(torch.zeros(1, n_rel, self.k_channels))
        self.emb_rel_v = nn.Parameter(torch.zeros(1, n_rel, self.k_channels))

    def forward(self, x: torch.Tensor, layout: Layout, masked_keys: torch.Tensor | None) -> torch.Tensor:
        """``x`` [batch * stride, channels]; ``masked_keys`` [batch, 1, 1, stride], true past each length."""
        batch = len(layout.lengths)
        time = layout.rows // batch
        heads, k_channels = self.n_heads, self.k_channels

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(batch, time, heads, k_channels).transpose(1, 2)  # [b, h, t, k]

        q = split(self.conv_q(x)) * (1.0 / math.sqrt(k_channels))
        k = split(self.conv_k(x))
        v = split(self.conv_v(x))

        w = self.window_size
        steps = torch.arange(time, device=x.device)
        # Score of key j for query i gets rel_logits[i, j - i + w] when |j - i| <= w.
        offsets = steps.unsqueeze(0) - steps.unsqueeze(1) + w  # [i, j]
        in_window = (offsets >= 0) & (offsets <= 2 * w)
        rel_logits = torch.matmul(q, self.emb_rel_k[0].transpose(0, 1))  # [b, h, t, 2w+1]
        local = torch.gather(rel_logits, 3, offsets.clamp(0, 2 * w).expand(batch, heads, time, time))
        scores = torch.matmul(q, k.transpose(-2, -1)) + local * in_window
        if masked_keys is not None:
            scores = scores.masked_fill(masked_keys, -1e4)
        p_attn = torch.softmax(scores, dim=-1)
        out = torch.matmul(p_attn, v)

        # Attention paid at offset r (key i + r - w) weights the learned value vector r.
        keys = steps.unsqueeze(1) + torch.arange(2 * w + 1, device=x.device).unsqueeze(0) - w  # [i, r]
        key_valid = (keys >= 0) & (keys < time)
        rel_weights = torch.gather(p_attn, 3, keys.clamp(0, time - 1).expand(batch, heads, time, 2 * w + 1))
        out = out + torch.matmul(rel_weights * key_valid, self.emb_rel_v[0])
        out = out.transpose(1, 2).reshape(batch * time, heads * k_channels)
        result: torch.Tensor = self.conv_o(out)
        return result
