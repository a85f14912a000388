"""One walk over a module tree that swaps its plain ``nn.Conv1d`` layers for another form of
the same convolution: the spectral, time-major and int8 paths each say which layers and how,
and share this walk instead of keeping three."""

from __future__ import annotations

from collections.abc import Callable

from torch import nn


def swap_convolutions(module: nn.Module, replacement: Callable[[nn.Conv1d], nn.Module | None]) -> int:
    """Each ``nn.Conv1d`` inside ``module`` (exactly that type: a layer already swapped is left
    alone) replaced by ``replacement(conv)`` where that is not ``None``; returns how many were."""
    swapped = 0
    for name, child in module.named_children():
        if type(child) is nn.Conv1d:
            new = replacement(child)
            if new is not None:
                setattr(module, name, new)
                swapped += 1
        else:
            swapped += swap_convolutions(child, replacement)
    return swapped
