"""The CPU int8 path: every convolution but the last is torch's dynamic int8 Conv1d, handed its
input in contiguous memory (``speech.engines.kokoro.model.ContiguousDynamicConv1d``: the op's
scale reductions on a strided view cost about as much as the convolution), with the same output."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.ao.nn.quantized.dynamic import Conv1d as DynamicConv1d

from speech.engines.kokoro.model import ContiguousDynamicConv1d, KokoroModel


def _pair() -> tuple[DynamicConv1d, ContiguousDynamicConv1d]:
    torch.manual_seed(0)
    weight = torch.randn(8, 6, 3)
    packed = torch.quantize_per_channel(
        weight, (weight.abs().amax(dim=(1, 2)) / 127).double(), torch.zeros(8, dtype=torch.long), 0, torch.qint8
    )
    bias = torch.randn(8)
    plain, contiguous = DynamicConv1d(6, 8, 3, padding=1), ContiguousDynamicConv1d(6, 8, 3, padding=1)
    for conv in (plain, contiguous):
        conv.set_weight_bias(packed, bias)
    return plain, contiguous


def test_a_strided_input_reaches_the_op_contiguous_with_the_same_output(monkeypatch: pytest.MonkeyPatch) -> None:
    plain, contiguous = _pair()
    strided = torch.randn(1, 40, 6).transpose(1, 2)  # (N, C, L) as a view, as the decoder makes them
    assert not strided.is_contiguous()
    expected = plain(strided)
    seen: list[bool] = []
    op = DynamicConv1d.forward

    def record(self: DynamicConv1d, input: torch.Tensor, reduce_range: bool = True) -> torch.Tensor:
        seen.append(input.is_contiguous())
        return op(self, input, reduce_range)

    monkeypatch.setattr(DynamicConv1d, "forward", record)
    assert torch.equal(contiguous(strided), expected)
    assert seen == [True]


def test_quantize_dynamic_converts_every_convolution_but_the_last() -> None:
    model = KokoroModel()
    model.quantize_dynamic()
    convs = [m for m in model.modules() if isinstance(m, nn.Conv1d | DynamicConv1d)]
    dynamic = [m for m in convs if isinstance(m, DynamicConv1d)]
    assert dynamic and all(type(m) is ContiguousDynamicConv1d for m in dynamic)
    assert [m for m in convs if type(m) is nn.Conv1d] == [model.decoder.generator.conv_post]
