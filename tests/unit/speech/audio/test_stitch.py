"""Stitching: lengths with pauses, chunk offsets, click-free edges."""

from __future__ import annotations

import numpy as np
import pytest

from speech.audio.stitch import Boundary, Pauses, fade_edges, stitch

RATE = 24000


def _chunk(seconds: float, value: float = 0.5) -> np.ndarray:
    return np.full(int(RATE * seconds), value, dtype=np.float32)


def test_lengths_and_starts_with_each_pause_kind() -> None:
    chunks = [_chunk(1.0), _chunk(0.5), _chunk(0.25), _chunk(0.75)]
    pauses = Pauses(sentence_ms=200, paragraph_ms=600, chapter_ms=1500, fade_ms=5)
    out = stitch(chunks, RATE, [Boundary.SENTENCE, Boundary.PARAGRAPH, Boundary.CHAPTER], pauses=pauses)
    gaps = [int(0.2 * RATE), int(0.6 * RATE), int(1.5 * RATE)]
    assert len(out.samples) == sum(len(c) for c in chunks) + sum(gaps)
    expected_starts = [0]
    for c, g in zip(chunks[:-1], gaps, strict=True):
        expected_starts.append(expected_starts[-1] + len(c) + g)
    assert list(out.starts) == expected_starts
    assert out.duration == pytest.approx(1.0 + 0.5 + 0.25 + 0.75 + 0.2 + 0.6 + 1.5)
    # the pauses are silent, the chunk bodies are intact
    assert np.all(out.samples[len(chunks[0]) : expected_starts[1]] == 0)
    assert np.allclose(out.samples[expected_starts[1] + 500 : expected_starts[1] + 1000], 0.5)


def test_default_boundaries_lead_in_tail_and_none() -> None:
    out = stitch([_chunk(0.1), _chunk(0.1)], RATE, lead_in_ms=100, tail_ms=50, pauses=Pauses(sentence_ms=250))
    assert out.starts[0] == int(0.1 * RATE)
    assert len(out.samples) == int(RATE * (0.1 + 0.1 + 0.25 + 0.1 + 0.05))
    joined = stitch([_chunk(0.1), _chunk(0.1)], RATE, [Boundary.NONE])
    assert len(joined.samples) == int(RATE * 0.2)
    assert joined.start_seconds(1) == pytest.approx(0.1)


def test_edges_are_faded_so_no_click() -> None:
    out = stitch([_chunk(0.2, 0.8), _chunk(0.2, -0.8)], RATE, pauses=Pauses(sentence_ms=100, fade_ms=5))
    x = out.samples
    assert abs(x[0]) < 0.01 and abs(x[len(_chunk(0.2)) - 1]) < 0.01 and abs(x[-1]) < 0.01
    assert np.max(np.abs(np.diff(x))) < 0.8 * np.pi / (0.005 * RATE) * 1.1  # ramp slope, no jump


def test_fade_is_symmetric_and_bounded_by_half_the_chunk() -> None:
    short = fade_edges(np.ones(10, np.float32), RATE, fade_ms=50)
    assert np.allclose(short, short[::-1]) and short.max() <= 1.0
    long = fade_edges(np.ones(RATE, np.float32), RATE, fade_ms=10)
    assert np.all(long[240:-240] == 1.0) and long[0] < 0.01


def test_empty_and_invalid() -> None:
    assert len(stitch([], RATE).samples) == 0
    with pytest.raises(ValueError):
        stitch([_chunk(0.1)] * 3, RATE, [Boundary.SENTENCE])
