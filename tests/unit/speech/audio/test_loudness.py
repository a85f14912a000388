"""Loudness: BS.1770 agreement with pyloudnorm, one-gain normalisation, true-peak limiting."""

from __future__ import annotations

import numpy as np
import pyloudnorm
import pytest

from speech.audio.loudness import (
    LoudnessMeter,
    integrated_loudness,
    joined_loudness,
    limit_true_peak,
    normalize,
    true_peak_level,
)

RATE = 24000


def _speechlike(seconds: float, seed: int = 0) -> np.ndarray:
    """Syllable-rate bursts of noise and swept tones with pauses and a few sharp transients."""
    rng = np.random.default_rng(seed)
    n = int(RATE * seconds)
    t = np.arange(n) / RATE
    envelope = np.clip(np.sin(2 * np.pi * 3.0 * t), 0, None) * (np.sin(2 * np.pi * 0.25 * t) > -0.5)
    voiced = 0.3 * np.sin(2 * np.pi * (140 * t + 40 * np.sin(2 * np.pi * 0.5 * t)))
    noise = 0.08 * rng.standard_normal(n)
    x = envelope * (voiced + noise)
    for pos in rng.integers(0, n - 50, size=12):  # plosive-like spikes
        x[pos : pos + 30] += 0.7 * np.hanning(30)
    return x.astype(np.float32)


@pytest.mark.parametrize("rate", [24000, 22050, 16000])
def test_meter_agrees_with_pyloudnorm(rate: int) -> None:
    rng = np.random.default_rng(rate)
    x = (0.1 * rng.standard_normal(int(rate * 5.37))).astype(np.float32)
    x[:rate] *= 0.01  # a quiet stretch, so the gates matter
    expected = pyloudnorm.Meter(rate).integrated_loudness(x.astype(np.float64))
    assert integrated_loudness(x, rate) == pytest.approx(expected, abs=0.01)


def test_meter_fed_in_pieces_equals_whole() -> None:
    x = _speechlike(6.0)
    meter = LoudnessMeter(RATE)
    for piece in np.array_split(x, 17):
        meter.add(piece)
    assert meter.integrated_loudness() == pytest.approx(integrated_loudness(x, RATE), abs=1e-6)


def test_silence_and_short_signals() -> None:
    assert integrated_loudness(np.zeros(RATE * 2, np.float32), RATE) == float("-inf")
    assert integrated_loudness(np.full(100, 0.5, np.float32), RATE) == float("-inf")
    silent = np.zeros(RATE, np.float32)
    assert np.array_equal(normalize(silent, RATE), silent)


@pytest.mark.parametrize("start_gain", [0.05, 1.0])
def test_normalize_hits_target_and_peak_ceiling(start_gain: float) -> None:
    x = _speechlike(20.0) * start_gain
    y = normalize(x, RATE, target_lufs=-19.0, true_peak_dbfs=-3.0)
    assert integrated_loudness(y, RATE) == pytest.approx(-19.0, abs=0.5)
    assert true_peak_level(y, RATE) <= -3.0
    assert 20 * np.log10(np.max(np.abs(y))) <= -3.0


def test_normalize_needs_the_limiter_on_this_signal() -> None:
    """The test signal really has peaks the gain pushes over -3 dBFS (else the test proves little)."""
    x = _speechlike(20.0)
    gain = 10 ** ((-19.0 - integrated_loudness(x, RATE)) / 20)
    assert true_peak_level(x * gain, RATE) > -3.0


def test_one_gain_keeps_relative_levels() -> None:
    quiet, loud = _speechlike(5.0, seed=1) * 0.1, _speechlike(5.0, seed=2) * 0.3
    y = normalize(np.concatenate([quiet, loud]), RATE, true_peak_dbfs=0.0)
    a, b = y[: len(quiet)], y[len(quiet) :]
    difference = integrated_loudness(b, RATE) - integrated_loudness(a, RATE)
    assert difference == pytest.approx(20 * np.log10(3), abs=0.5)


def test_true_peak_sees_intersample_peaks() -> None:
    n = np.arange(RATE)
    x = (0.9 * np.sin(2 * np.pi * (RATE / 4) * n / RATE + np.pi / 4)).astype(np.float32)  # samples at 0.636
    assert 20 * np.log10(np.max(np.abs(x))) < -3.5
    assert true_peak_level(x, RATE) == pytest.approx(20 * np.log10(0.9), abs=0.3)


def test_limiter_leaves_quiet_audio_alone() -> None:
    x = _speechlike(3.0) * 0.2
    assert np.array_equal(limit_true_peak(x, RATE, -1.0), x)


def _with_pauses(rate: int) -> tuple[np.ndarray, list[int]]:
    """Speech-like stretches with a second of silence between them; where each silence starts."""
    pieces, silences, position = [], [], 0
    for seed in range(4):
        x = _speechlike(3.3 + 0.7 * seed, seed)
        x = np.interp(np.arange(int(len(x) * rate / RATE)) * RATE / rate, np.arange(len(x)), x).astype(np.float32)
        pieces += [x, np.zeros(rate, dtype=np.float32)]
        position += len(x)
        silences.append(position)
        position += rate
    return np.concatenate(pieces), silences


@pytest.mark.parametrize("rate", [22050, 24000, 16000])
def test_parts_measured_apart_join_to_the_loudness_of_the_whole(rate: int) -> None:
    x, silences = _with_pauses(rate)
    hop = LoudnessMeter(rate).hop
    assert hop == rate // 10
    # cut 200 ms into each silence, on the 100 ms grid, as assembly does
    cuts = [0] + [-(-(s + rate // 5) // hop) * hop for s in silences[:-1]] + [len(x)]
    parts = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        meter = LoudnessMeter(rate)
        for start in range(a, b, 7919):  # fed in odd pieces
            meter.add(x[start : min(start + 7919, b)])
        parts.append(meter)
    whole = integrated_loudness(x, rate)
    assert joined_loudness(parts) == pytest.approx(whole, abs=1e-6)
    assert whole == pytest.approx(pyloudnorm.Meter(rate).integrated_loudness(x.astype(np.float64)), abs=0.01)


def test_a_part_that_ends_off_the_grid_is_refused() -> None:
    x, _ = _with_pauses(RATE)
    first, second = LoudnessMeter(RATE), LoudnessMeter(RATE)
    first.add(x[:12345])
    second.add(x[12345:])
    with pytest.raises(ValueError, match="whole 100 ms segments"):
        joined_loudness([first, second])


def test_an_empty_piece_changes_nothing() -> None:
    x = _speechlike(2.0)
    meter = LoudnessMeter(RATE)
    meter.add(x[:1000])
    meter.add(np.zeros(0, dtype=np.float32))
    meter.add(x[1000:])
    assert meter.integrated_loudness() == pytest.approx(integrated_loudness(x, RATE), abs=1e-9)
