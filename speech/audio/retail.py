"""A retailer's audio rules (ACX: Audible, Amazon, iTunes) and what a file measures against them,
and the room tone that such a file begins and ends with.

Room tone: ACX rejects digital silence (a noise floor of -inf reads as edited audio), so every
delivered file carries a bed of *pink noise* (white noise from a seeded generator through Paul
Kellet's economy pinking filter, three first-order sections giving a -3 dB/octave slope, the
spectrum of a quiet room's air and electronics) at :data:`ROOM_TONE_DBFS` RMS, high-passed at
80 Hz so it carries no rumble. It is mixed under the whole file, so the pauses between
sentences are room tone too, and it alone fills the head and the tail. Seeded, it is the same
noise on every render: a file is reproducible byte for byte.

The meter (:class:`RuleMeter`) is fed the decoded file block by block (a chapter may be two
hours) and reads, as ACX's own check and Audacity's ACX plug-in define them:
- RMS: the whole file's (unweighted) RMS in dBFS;
- peak: the largest sample in dBFS;
- noise floor: the RMS of the quietest 500 ms window (on a 100 ms step);
- room tone at the head and tail: the time before the first and after the last 10 ms window
  louder than :data:`SPEECH_DBFS` (speech starts and ends there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np
from scipy.signal import butter, lfilter, sosfilt

ROOM_TONE_DBFS: Final = -68.0
SPEECH_DBFS: Final = -45.0  # a 10 ms window this loud is speech, not room tone
_WINDOW_S: Final = 0.010
_FLOOR_WINDOW_S: Final = 0.5
_FLOOR_STEP_S: Final = 0.1
# Paul Kellet's economy pinking filter as one IIR: b / a of its three poles summed, plus white.
_PINK_B: Final = (0.049922035, -0.095993537, 0.050612699, -0.004408786)
_PINK_A: Final = (1.0, -2.494956002, 2.017265875, -0.522189400)


@dataclass(frozen=True, slots=True)
class Rule:
    """One line of a compliance report."""

    name: str
    measured: float
    low: float | None
    high: float | None
    unit: str

    @property
    def passed(self) -> bool:
        return math.isfinite(self.measured) and (self.low is None or self.measured >= self.low) and (
            self.high is None or self.measured <= self.high
        )

    def to_dict(self) -> dict[str, object]:
        limit = {"min": self.low, "max": self.high}
        return {
            "rule": self.name, "measured": round(self.measured, 2) if math.isfinite(self.measured) else None,
            "limit": {k: v for k, v in limit.items() if v is not None}, "unit": self.unit, "pass": self.passed,
        }


class RoomTone:
    """An endless, seeded bed of pink noise at ``level_dbfs`` RMS, handed out block by block with
    its filters' state carried over, so any split of a file into blocks gives the same noise."""

    def __init__(self, sample_rate: int, *, seed: int = 0, level_dbfs: float = ROOM_TONE_DBFS) -> None:
        self._rng = np.random.default_rng(seed)
        self._pink_state = np.zeros(len(_PINK_A) - 1)
        self._highpass = butter(2, 80.0, btype="highpass", fs=sample_rate, output="sos")
        self._hp_state = np.zeros((self._highpass.shape[0], 2))
        # the filters' gain on white noise, measured once on a second of it (seeded: the same every time)
        probe = sosfilt(self._highpass, lfilter(_PINK_B, _PINK_A, np.random.default_rng(1).standard_normal(sample_rate * 4)))
        self._scale = 10 ** (level_dbfs / 20) / float(np.sqrt(np.mean(probe[sample_rate:] ** 2)))

    def take(self, count: int) -> np.ndarray:
        white = self._rng.standard_normal(count)
        pink, self._pink_state = lfilter(_PINK_B, _PINK_A, white, zi=self._pink_state)
        out, self._hp_state = sosfilt(self._highpass, pink, zi=self._hp_state)
        bed: np.ndarray = (out * self._scale).astype(np.float32)
        return bed


class RuleMeter:
    """RMS, peak, noise floor and the room tone at both ends of a signal fed in order."""

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        self._window = max(1, int(round(_WINDOW_S * sample_rate)))
        self._per_floor = int(round(_FLOOR_WINDOW_S / _WINDOW_S))
        self._floor_step = int(round(_FLOOR_STEP_S / _WINDOW_S))
        self._carry = np.zeros(0, dtype=np.float64)
        self._window_energy: list[float] = []  # sum of squares per 10 ms window
        self._squares = 0.0
        self._peak = 0.0
        self._samples = 0

    def add(self, block: np.ndarray) -> None:
        x = np.asarray(block, dtype=np.float64).reshape(-1)
        self._squares += float(np.dot(x, x))
        if len(x):
            self._peak = max(self._peak, float(np.max(np.abs(x))))
        self._samples += len(x)
        x = np.concatenate([self._carry, x])
        whole = len(x) // self._window * self._window
        if whole:
            self._window_energy.extend(np.sum(np.square(x[:whole]).reshape(-1, self._window), axis=1).tolist())
        self._carry = x[whole:]

    @property
    def duration_s(self) -> float:
        return self._samples / self.sample_rate

    def rms_dbfs(self) -> float:
        return _db(math.sqrt(self._squares / self._samples)) if self._samples else float("-inf")

    def peak_dbfs(self) -> float:
        return _db(self._peak)

    def noise_floor_dbfs(self) -> float:
        energy = np.asarray(self._window_energy)
        if len(energy) < self._per_floor:
            return float("-inf")
        sums = np.convolve(energy, np.ones(self._per_floor), mode="valid")[:: self._floor_step]
        return _db(math.sqrt(float(np.min(sums)) / (self._per_floor * self._window)))

    def room_tone_s(self) -> tuple[float, float]:
        """Seconds before the first and after the last window of speech (the whole file: none)."""
        energy = np.asarray(self._window_energy)
        loud = np.flatnonzero(energy / self._window > 10 ** (SPEECH_DBFS / 10))
        if not len(loud):
            return self.duration_s, self.duration_s
        head = int(loud[0]) * self._window / self.sample_rate
        tail = self.duration_s - (int(loud[-1]) + 1) * self._window / self.sample_rate
        return head, tail


def _db(value: float) -> float:
    return 20.0 * math.log10(value) if value > 0 else float("-inf")
