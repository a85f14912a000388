"""Loudness (ITU-R BS.1770 / EBU R 128 style) and normalisation for whole works.

A work gets *one* gain, computed from its integrated loudness, so quiet and loud sentences keep
their natural relation; a per-chunk gain would flatten the reading. The gain may push rare peaks
over the ceiling, so a true-peak limiter follows (4x oversampled peak estimate, look-ahead gain
envelope) that touches only the samples around those peaks.

The meter uses pyloudnorm's K-weighting filters and its block/gating arithmetic, but runs them
block by block with carried filter state: pyloudnorm's own ``integrated_loudness`` copies the
whole signal to float64, which a ten-hour book does not afford. :class:`LoudnessMeter` also lets
the assembler measure a book chapter by chapter and apply the one gain afterwards.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import pyloudnorm
from scipy.ndimage import minimum_filter1d, uniform_filter1d
from scipy.signal import lfilter, lfilter_zi

from speech.audio.resample import StreamResampler

DEFAULT_TARGET_LUFS: Final = -19.0  # a common spoken-word target (mono)
DEFAULT_TRUE_PEAK_DBFS: Final = -3.0

_BLOCK_S: Final = 0.400  # BS.1770 gating block
_STEP_S: Final = 0.100  # 75% overlap
_ABSOLUTE_GATE: Final = -70.0
_RELATIVE_GATE: Final = -10.0
_OVERSAMPLE: Final = 4
_PROCESS_SECONDS: Final = 10.0  # working-set size for the block-wise passes


def _db_to_gain(db: float) -> float:
    return float(10.0 ** (db / 20.0))


class LoudnessMeter:
    """Integrated loudness of a mono signal fed in pieces (in order)."""

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        meter = pyloudnorm.Meter(sample_rate)  # K-weighting
        self._filters = [(f.b, f.a, f.passband_gain) for f in meter._filters.values()]
        self._state: list[np.ndarray | None] = [None for _ in self._filters]
        self._energies: list[float] = []  # sum of squares per 100 ms segment
        self._partial = 0.0  # sum of squares of the segment being filled
        self._position = 0  # samples consumed

    def _segment_end(self, k: int) -> int:
        return int(round((k + 1) * _STEP_S * self.sample_rate))

    def add(self, samples: np.ndarray) -> None:
        x = np.asarray(samples, dtype=np.float64).reshape(-1)
        for i, (b, a, gain) in enumerate(self._filters):
            zi = self._state[i]
            if zi is None:
                zi = lfilter_zi(b, a) * 0.0
            x, self._state[i] = lfilter(b, a, x, zi=zi)
            x = x * gain
        sq = np.square(x)
        offset = 0
        while offset < len(sq):
            end = self._segment_end(len(self._energies)) - self._position
            take = min(end - offset, len(sq) - offset)
            self._partial += float(np.sum(sq[offset : offset + take]))
            offset += take
            if offset == end:
                self._energies.append(self._partial)
                self._partial = 0.0
        self._position += len(sq)

    @property
    def duration(self) -> float:
        return self._position / float(self.sample_rate)

    def integrated_loudness(self) -> float:
        """LUFS; ``-inf`` for silence or for less audio than one 400 ms gating block."""
        if self.duration < _BLOCK_S:
            return float("-inf")
        energies = [*self._energies, self._partial]
        n_blocks = int(round((self.duration - _BLOCK_S) / _STEP_S)) + 1
        per_block = round(_BLOCK_S / _STEP_S)
        padded = np.zeros(n_blocks + per_block, dtype=np.float64)
        padded[: len(energies)] = energies[: len(padded)]
        cumulative = np.concatenate([[0.0], np.cumsum(padded)])
        z = (cumulative[per_block : per_block + n_blocks] - cumulative[:n_blocks]) / (
            _BLOCK_S * self.sample_rate
        )
        with np.errstate(divide="ignore"):
            block_loudness = -0.691 + 10.0 * np.log10(z)
        above_absolute = block_loudness >= _ABSOLUTE_GATE
        if not np.any(above_absolute):
            return float("-inf")
        relative = -0.691 + 10.0 * math.log10(float(np.mean(z[above_absolute]))) + _RELATIVE_GATE
        gated = (block_loudness > relative) & (block_loudness > _ABSOLUTE_GATE)
        if not np.any(gated):
            return float("-inf")
        return -0.691 + 10.0 * math.log10(float(np.mean(z[gated])))


def integrated_loudness(samples: np.ndarray, sample_rate: int) -> float:
    """Integrated loudness in LUFS (BS.1770-4 gating); ``-inf`` for silence or < 400 ms."""
    meter = LoudnessMeter(sample_rate)
    step = int(_PROCESS_SECONDS * sample_rate)
    for start in range(0, len(samples), step):
        meter.add(samples[start : start + step])
    return meter.integrated_loudness()


def true_peak_envelope(samples: np.ndarray, sample_rate: int) -> np.ndarray:
    """Per-sample peak estimate: the largest |value| among 4x-oversampled points around each sample."""
    x = np.asarray(samples, dtype=np.float32).reshape(-1)
    out = np.abs(x)
    if len(x) == 0:
        return out
    up = StreamResampler(sample_rate, sample_rate * _OVERSAMPLE)
    carry = np.zeros(0, dtype=np.float32)
    written = 0
    step = int(_PROCESS_SECONDS * sample_rate)
    pieces = [up.process(x[s : s + step]) for s in range(0, len(x), step)]
    pieces.append(up.flush())
    for piece in pieces:
        carry = np.concatenate([carry, np.abs(piece)])
        whole = min(len(carry) // _OVERSAMPLE, len(x) - written)
        if whole:
            peaks = carry[: whole * _OVERSAMPLE].reshape(whole, _OVERSAMPLE).max(axis=1)
            np.maximum(out[written : written + whole], peaks, out=out[written : written + whole])
            written += whole
            carry = carry[whole * _OVERSAMPLE :]
    return out


def true_peak_level(samples: np.ndarray, sample_rate: int) -> float:
    """The oversampled (true) peak in dBFS; ``-inf`` for silence."""
    env = true_peak_envelope(samples, sample_rate)
    peak = float(env.max()) if len(env) else 0.0
    return 20.0 * math.log10(peak) if peak > 0 else float("-inf")


def limit_true_peak(
    samples: np.ndarray,
    sample_rate: int,
    ceiling_dbfs: float = DEFAULT_TRUE_PEAK_DBFS,
    *,
    window_ms: float = 20.0,
) -> np.ndarray:
    """Bring every true peak under ``ceiling_dbfs`` with a smooth gain dip around each peak.

    The needed gain per sample is min-filtered over ``window_ms`` (look-ahead and hold) and then
    box-smoothed over the same window; the smoothed gain is never above the needed gain, so one
    pass nearly always suffices. Oversampling error is mopped up by a second pass.
    """
    y = np.array(samples, dtype=np.float32, copy=True).reshape(-1)
    if len(y) == 0:
        return y
    ceiling = _db_to_gain(ceiling_dbfs) * 0.999
    width = max(3, int(window_ms * sample_rate / 1000.0) | 1)  # odd: centred windows
    for _ in range(4):
        env = true_peak_envelope(y, sample_rate)
        if float(env.max()) <= ceiling:
            return y
        needed = np.minimum(1.0, ceiling / np.maximum(env, 1e-12)).astype(np.float32)
        held = minimum_filter1d(needed, size=width, mode="nearest")
        gain = np.minimum(uniform_filter1d(held, size=width, mode="nearest"), needed)
        y *= gain
    peak = float(true_peak_envelope(y, sample_rate).max())
    if peak > ceiling:  # pathological input (full-scale square waves): fall back to a flat gain
        y *= ceiling / peak
    return y


def normalization_gain_db(loudness_lufs: float, target_lufs: float = DEFAULT_TARGET_LUFS) -> float:
    """The one gain (dB) that brings a work measured at ``loudness_lufs`` to the target; 0 for silence."""
    if not math.isfinite(loudness_lufs):
        return 0.0
    return target_lufs - loudness_lufs


def apply_gain_db(samples: np.ndarray, gain_db: float) -> np.ndarray:
    return (np.asarray(samples, dtype=np.float32) * np.float32(_db_to_gain(gain_db))).astype(np.float32)


def normalize(
    samples: np.ndarray,
    sample_rate: int,
    target_lufs: float = DEFAULT_TARGET_LUFS,
    true_peak_dbfs: float = DEFAULT_TRUE_PEAK_DBFS,
) -> np.ndarray:
    """One gain to ``target_lufs`` for the whole signal, then a true-peak limit at ``true_peak_dbfs``.

    Silence and signals shorter than one gating block get no gain (only the peak limit).
    """
    gain = normalization_gain_db(integrated_loudness(samples, sample_rate), target_lufs)
    return limit_true_peak(apply_gain_db(samples, gain), sample_rate, true_peak_dbfs)
