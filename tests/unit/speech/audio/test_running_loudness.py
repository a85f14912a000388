"""A growing signal's loudness in constant space: fed in pieces of any length (through a JSON
round trip between them, as the live playlist's tasks hand it on), the whole's loudness is
pyloudnorm's on the whole signal, and a part's is pyloudnorm's on that part."""

from __future__ import annotations

import json

import numpy as np
import pyloudnorm
import pytest

from speech.audio.running_loudness import RunningLoudness

RATE = 24000


def _speechlike(seconds: float, seed: int, level: float = 1.0) -> np.ndarray:
    """Syllable-rate bursts with pauses, and quiet stretches that the relative gate takes out."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(RATE * seconds)) / RATE
    envelope = np.clip(np.sin(2 * np.pi * 3.0 * t), 0, None) * (np.sin(2 * np.pi * 0.2 * t) > -0.4)
    x = envelope * (0.3 * np.sin(2 * np.pi * 150 * t) + 0.08 * rng.standard_normal(len(t)))
    x[: RATE // 2] *= 0.003
    return (level * x).astype(np.float32)


def _pieces(x: np.ndarray, seed: int) -> list[np.ndarray]:
    cuts = np.sort(np.random.default_rng(seed).integers(1, len(x) - 1, size=9))
    return np.split(x, cuts)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pieces_measure_as_the_whole_and_a_part_as_itself(seed: int) -> None:
    first, second = _speechlike(23.3, seed), _speechlike(17.9, seed + 10, level=0.4)  # a quieter second part
    running = RunningLoudness(RATE)
    for i, piece in enumerate(_pieces(first, seed) + _pieces(second, seed + 1)):
        new_part = i == 10  # the second part's first piece
        running = RunningLoudness.from_json(json.loads(json.dumps(running.fed(piece, new_part=new_part).to_json())))
    meter = pyloudnorm.Meter(RATE)
    whole = meter.integrated_loudness(np.concatenate([first, second]).astype(np.float64))
    # The histogram's gate bin and the last partial block: about 0.01 LU here.
    assert running.whole.loudness() == pytest.approx(whole, abs=0.03)
    # The part's first blocks reach back 0.3 s into the part before: the second part's own
    # loudness, up to them.
    assert running.part.loudness() == pytest.approx(meter.integrated_loudness(second.astype(np.float64)), abs=0.03)
    assert running.whole.loudness() > running.part.loudness() + 3  # the parts really differ
    assert running.part.seconds < running.whole.seconds


def test_nothing_or_silence_has_no_loudness() -> None:
    assert RunningLoudness(RATE).whole.loudness() == float("-inf")
    silent = RunningLoudness(RATE).fed(np.zeros(RATE * 3, np.float32))
    assert silent.whole.loudness() == float("-inf") and silent.whole.seconds == 0
