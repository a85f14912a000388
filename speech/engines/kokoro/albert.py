"""PL-BERT, Kokoro's phoneme-level text encoder: an ALBERT with one layer shared by 12 passes.

Shapes are Kokoro's (vocabulary 178, embeddings 128, hidden 768, 12 heads, feed-forward 2048,
GELU with the tanh approximation). Module names follow the exported graph's initializer names
so that the weights load by name. Padding keys are masked out of attention; padded queries
give values nobody reads.
"""

from __future__ import annotations

import math
from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

VOCAB = 178
EMBED = 128
HIDDEN = 768
HEADS = 12
FFN = 2048
PASSES = 12
MAX_POSITIONS = 512


class _Embeddings(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, EMBED)
        self.position_embeddings = nn.Embedding(MAX_POSITIONS, EMBED)
        self.token_type_embeddings = nn.Embedding(2, EMBED)
        self.LayerNorm = nn.LayerNorm(EMBED, eps=1e-12)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.word_embeddings(ids) + self.token_type_embeddings.weight[0] + self.position_embeddings(positions)
        return self.LayerNorm(x)


class _Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.query = nn.Linear(HIDDEN, HIDDEN)
        self.key = nn.Linear(HIDDEN, HIDDEN)
        self.value = nn.Linear(HIDDEN, HIDDEN)
        self.dense = nn.Linear(HIDDEN, HIDDEN)
        self.LayerNorm = nn.LayerNorm(HIDDEN, eps=1e-12)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        batch, steps, _ = x.shape
        head = HIDDEN // HEADS

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(batch, steps, HEADS, head).transpose(1, 2)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(head) + bias
        context = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(batch, steps, HIDDEN)
        return self.LayerNorm(x + self.dense(context))


class _Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attention = _Attention()
        self.ffn = nn.Linear(HIDDEN, FFN)
        self.ffn_output = nn.Linear(FFN, HIDDEN)
        self.full_layer_layer_norm = nn.LayerNorm(HIDDEN, eps=1e-12)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        x = self.attention(x, bias)
        return self.full_layer_layer_norm(x + self.ffn_output(F.gelu(self.ffn(x), approximate="tanh")))


class _Group(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.albert_layers = nn.ModuleList([_Layer()])


class _Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding_hidden_mapping_in = nn.Linear(EMBED, HIDDEN)
        self.albert_layer_groups = nn.ModuleList([_Group()])


class Albert(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embeddings = _Embeddings()
        self.encoder = _Encoder()

    def forward(self, ids: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        """``ids`` ``[B, T]``, ``valid`` ``[B, T]`` bool; returns ``[B, T, 768]``."""
        bias = torch.zeros(valid.shape, dtype=torch.float32, device=ids.device)
        bias = bias.masked_fill(~valid, torch.finfo(torch.float32).min)[:, None, None, :]
        x = self.encoder.embedding_hidden_mapping_in(self.embeddings(ids))
        group = cast(_Group, self.encoder.albert_layer_groups[0])
        layer = cast(_Layer, group.albert_layers[0])
        for _ in range(PASSES):
            x = layer(x, bias)
        return x
