"""The one walk that swaps a model's convolutions: it reaches nested layers, keeps what the
rule declines and what is already swapped, and counts what it replaced."""

from __future__ import annotations

from torch import nn

from speech.engines.kokoro.conv_swap import swap_convolutions


class Swapped(nn.Module):
    def __init__(self, conv: nn.Conv1d) -> None:
        super().__init__()
        self.kernel = conv.kernel_size[0]


def test_nested_convolutions_are_swapped_where_the_rule_says() -> None:
    model = nn.Sequential(
        nn.Conv1d(4, 4, 7, padding=3),
        nn.ModuleList([nn.Conv1d(4, 4, 3, padding=1), nn.Sequential(nn.Conv1d(4, 4, 11, padding=5))]),
        nn.Linear(4, 4),
    )
    swapped = swap_convolutions(model, lambda conv: Swapped(conv) if conv.kernel_size[0] >= 7 else None)
    assert swapped == 2
    assert isinstance(model[0], Swapped) and model[0].kernel == 7
    assert type(model[1][0]) is nn.Conv1d  # declined by the rule
    assert isinstance(model[1][1][0], Swapped) and model[1][1][0].kernel == 11
    assert type(model[2]) is nn.Linear


def test_a_second_walk_leaves_swapped_layers_alone() -> None:
    model = nn.Sequential(nn.Conv1d(2, 2, 3), nn.Conv1d(2, 2, 5))
    assert swap_convolutions(model, Swapped) == 2
    assert swap_convolutions(model, Swapped) == 0
    assert all(isinstance(layer, Swapped) for layer in model)
