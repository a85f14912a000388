"""Chunk edges: faded so that no chunk clicks against the silence around it."""

from __future__ import annotations

import numpy as np

from speech.audio.fade import fade_edges

RATE = 24000


def test_edges_are_faded_so_no_click() -> None:
    x = fade_edges(np.full(int(0.2 * RATE), 0.8, np.float32), RATE, fade_ms=5)
    assert abs(x[0]) < 0.01 and abs(x[-1]) < 0.01
    assert np.max(np.abs(np.diff(x))) < 0.8 * np.pi / (0.005 * RATE) * 1.1  # ramp slope, no jump


def test_fade_is_symmetric_and_bounded_by_half_the_chunk() -> None:
    short = fade_edges(np.ones(10, np.float32), RATE, fade_ms=50)
    assert np.allclose(short, short[::-1]) and short.max() <= 1.0
    long = fade_edges(np.ones(RATE, np.float32), RATE, fade_ms=10)
    assert np.all(long[240:-240] == 1.0) and long[0] < 0.01
