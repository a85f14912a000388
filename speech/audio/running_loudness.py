"""Integrated loudness of a signal that keeps growing, in constant space: what a live stream can
know of its own level while the rest of it does not exist yet.

BS.1770's gating needs every 400 ms block of the signal (the relative gate is 10 LU under the
mean of all of them), which for a ten-hour book is 360,000 numbers to carry from one piece to
the next. Blocks are kept instead as a histogram of their loudness, in 0.1 LU bins from the
absolute gate up, each bin holding its count and its blocks' summed mean squares: every mean
the gating takes is then exact except for the one bin the relative gate falls in, whose blocks
are counted in or out together (a difference of a few hundredths of a LU on speech; the bins
hold speech's blocks a few to a few hundred each). The pieces are joined exactly as one meter
would measure them: the K-weighting filters' state and the last three 100 ms energies (the part
of a block that spans two pieces) go on from piece to piece (``LoudnessMeter``'s ``MeterState``).

Two histograms are kept side by side: the whole signal's and its current part's (a chapter), so
that a part's loudness so far is known as well as the whole's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Final

import numpy as np

from speech.audio.loudness import LoudnessMeter, MeterState

BIN_LU: Final = 0.1
_ABSOLUTE_GATE: Final = -70.0
_RELATIVE_GATE: Final = -10.0
_PER_BLOCK: Final = 4  # 100 ms energies in a 400 ms block
_BLOCK_S: Final = 0.4
_STEP_S: Final = 0.1


@dataclass(frozen=True, slots=True)
class BlockHistogram:
    """Gating blocks above the absolute gate: bin -> (blocks, summed mean squares)."""

    bins: Mapping[int, tuple[int, float]] = field(default_factory=dict)

    def added(self, mean_squares: np.ndarray) -> BlockHistogram:
        with np.errstate(divide="ignore"):
            loudness = -0.691 + 10.0 * np.log10(mean_squares)
        bins = dict(self.bins)
        for z, lufs in zip(mean_squares.tolist(), loudness.tolist(), strict=True):
            if lufs < _ABSOLUTE_GATE:
                continue
            k = int((lufs - _ABSOLUTE_GATE) // BIN_LU)
            count, total = bins.get(k, (0, 0.0))
            bins[k] = (count + 1, total + z)
        return BlockHistogram(bins)

    @property
    def seconds(self) -> float:
        """Seconds of blocks above the absolute gate (blocks overlap: one per 100 ms)."""
        return sum(count for count, _ in self.bins.values()) * _STEP_S

    def loudness(self) -> float:
        """Gated loudness (LUFS) of the blocks counted; ``-inf`` for none."""
        counted = sum(count for count, _ in self.bins.values())
        if not counted:
            return float("-inf")
        relative = -0.691 + 10.0 * math.log10(sum(total for _, total in self.bins.values()) / counted) + _RELATIVE_GATE
        # a bin is in when its middle is over the gate: the one bin the gate cuts is in or out whole
        kept = [(count, total) for k, (count, total) in self.bins.items() if _ABSOLUTE_GATE + (k + 0.5) * BIN_LU > relative]
        blocks = sum(count for count, _ in kept)
        return -0.691 + 10.0 * math.log10(sum(total for _, total in kept) / blocks) if blocks else float("-inf")

    def to_json(self) -> list[list[float]]:
        return [[k, count, total] for k, (count, total) in sorted(self.bins.items())]

    @classmethod
    def from_json(cls, rows: list[list[float]]) -> BlockHistogram:
        return cls({int(k): (int(count), float(total)) for k, count, total in rows})


@dataclass(frozen=True, slots=True)
class RunningLoudness:
    """Where the measurement of a growing signal stands after the pieces fed so far."""

    sample_rate: int
    state: MeterState | None = None
    tail: tuple[float, ...] = ()  # the last 100 ms energies, for blocks that span two pieces
    whole: BlockHistogram = field(default_factory=BlockHistogram)
    part: BlockHistogram = field(default_factory=BlockHistogram)

    def fed(self, samples: np.ndarray, *, new_part: bool = False) -> RunningLoudness:
        """This measurement with the next piece of the signal; ``new_part``: the piece starts a
        part, whose histogram starts empty."""
        meter = LoudnessMeter(self.sample_rate, self.state)
        meter.add(samples)
        energies = np.asarray([*self.tail, *meter.completed()], dtype=np.float64)
        blocks = len(energies) - _PER_BLOCK + 1
        if blocks > 0:
            sums = np.convolve(energies, np.ones(_PER_BLOCK), mode="valid")
            mean_squares = sums / (_BLOCK_S * self.sample_rate)
        else:
            mean_squares = np.zeros(0)
        part = BlockHistogram() if new_part else self.part
        return replace(
            self, state=meter.state(), tail=tuple(energies[-(_PER_BLOCK - 1) :].tolist()),
            whole=self.whole.added(mean_squares), part=part.added(mean_squares),
        )

    def to_json(self) -> dict[str, object]:
        s = self.state
        return {
            "rate": self.sample_rate,
            "state": None if s is None else {
                "segments": s.segments, "partial": s.partial, "position": s.position, "filters": s.filters,
            },
            "tail": list(self.tail), "whole": self.whole.to_json(), "part": self.part.to_json(),
        }  # floats as repr: they come back bit for bit

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> RunningLoudness:
        raw = data["state"]
        state = None
        if isinstance(raw, Mapping):
            filters = tuple((float(a), float(b)) for a, b in raw["filters"])
            state = MeterState(int(raw["segments"]), float(raw["partial"]), int(raw["position"]), filters)
        return cls(
            int(data["rate"]),  # type: ignore[call-overload]
            state,
            tuple(float(e) for e in data["tail"]),  # type: ignore[attr-defined]
            BlockHistogram.from_json(data["whole"]),  # type: ignore[arg-type]
            BlockHistogram.from_json(data["part"]),  # type: ignore[arg-type]
        )
