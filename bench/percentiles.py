"""Percentiles that say when they cannot be told.

A p95 over 3 samples is the maximum, and over 16 it is the second largest at best: printing
it as a p95 misleads. ``p95`` answers only from ``MIN_P95_SAMPLES`` samples up (nearest rank,
so at least one sample lies above it), and ``None`` below, which the benches print as "n/a".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

MIN_P95_SAMPLES = 20  # the smallest count whose nearest-rank p95 is not the maximum


def p95(samples: Sequence[float]) -> float | None:
    """The nearest-rank 95th percentile, or ``None`` with fewer than ``MIN_P95_SAMPLES`` samples."""
    if len(samples) < MIN_P95_SAMPLES:
        return None
    ordered = sorted(samples)
    return ordered[math.ceil(0.95 * len(ordered)) - 1]


def rounds_for_p95(concurrency: int) -> int:
    """Rounds of ``concurrency`` requests that give a p95 its samples."""
    return max(1, math.ceil(MIN_P95_SAMPLES / max(concurrency, 1)))


def fmt(value: float | None, width: int = 9) -> str:
    return f"{'n/a':>{width}}" if value is None else f"{value:{width}.1f}"
