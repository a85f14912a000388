"""Closing the loop on the delivered file: its loudness and true peak, read from the decoded
file, brought to the job's target and under the ceiling.

Why a loop: the one gain computed from the chunks' loudness is right only for the samples
before the limiter and the codec. The limiter takes loudness away where it pulls peaks down
(joe reads with a crest the -3 dBFS ceiling cuts into: 0.9 LU lost on the novel's opening), and
a lossy codec takes more (LAME and AAC cut the top of the spectrum that K-weighting counts) and
adds inter-sample overs after the limiter. None of that is known before the file exists, so the
assembler decodes what it wrote (``speech.audio.measure_file``), and when a span (the book, or
each chapter in chapter scope) misses the target by more than :data:`AIM_LU`, or the peak is
over the ceiling, renders again with corrected gains and a lower limiter ceiling. The gains
follow a secant per span: the limiter makes loudness grow slower than the gain, and two points
measure by how much. Most books need one correction, never more than :data:`MAX_RENDERS`.

A lossy codec's overs are not a function of the limiter's ceiling alone: on a noisy transient
(joe's VITS draws noise in every synthesis) LAME moved a peak by a dB between two renders whose
gains differed by half that, so a correction that chases the last tenths of loudness can push a
peak that was under the promise over it. The loop therefore remembers each render's levels, and
when its budget ends on a file that breaks the promise while an earlier render kept it, renders
that one again (:func:`best_kept`): the same levels give the same file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from books.layout import Layout
from books.rendering import Measured
from books.timeline import Timeline
from speech.audio import FileLevels

CEILING_DBFS: Final = -3.0  # the true peak the API promises
AIM_LU: Final = 0.2  # how close a correction aims
PROMISE_LU: Final = 0.5  # how close the delivered file is to its target, as the API promises
PEAK_MARGIN_DB: Final = 0.1  # a decoded peak this close under the ceiling is corrected as well (meters differ by ~0.05 dB)
MAX_RENDERS: Final = 4
_LAST_RESORT_DB: Final = 0.5  # the last resort's ceiling: this much further under the overshoot seen
#: The limiter's first ceiling under the promised one, per format: lossy codecs move peaks after
#: the limiter (a few tenths of a dB on speech); lossless files differ only by the oversampling
#: filter of whoever measures them.
CODEC_HEADROOM_DB: Final[dict[str, float]] = {"mp3": 0.5, "m4b": 0.5, "opus": 0.5, "wav": 0.15, "flac": 0.15}
SLOPE_RANGE: Final = (0.25, 1.5)  # loudness per gain the secant believes (the limiter's range)


def limiter_ceiling(fmt: str, extra_db: float = 0.0) -> float:
    """The limiter's ceiling (linear) for a file in ``fmt``: the promise less the codec's headroom."""
    return float(10 ** ((CEILING_DBFS - CODEC_HEADROOM_DB.get(fmt, 0.5) - extra_db) / 20))


@dataclass(frozen=True, slots=True)
class Span:
    """A stretch of the book that is measured and corrected as one: its chunks and its seconds."""

    first: int
    stop: int
    start_s: float  # it ends where the next one starts, the last one with the file


def spans(layout: Layout, timeline: Timeline, *, chapter_scope: bool, chapters: Sequence[tuple[int, int]]) -> list[Span]:
    """One span for a book-scope job; one per chapter (``chapters`` as ``(first, stop)`` chunks)
    in chapter scope, placed where the pause before its first chunk starts."""
    total = len(timeline.offsets)
    if not chapter_scope or len(chapters) < 2:
        return [Span(0, total, 0.0)]
    rate = timeline.native_rate
    starts = [0.0 if first == 0 else (timeline.offsets[first] - timeline.pauses[first]) / rate for first, _ in chapters]
    return [Span(first, stop, start) for (first, stop), start in zip(chapters, starts, strict=True)]


@dataclass(frozen=True, slots=True)
class Verdict:
    loudness: list[float]  # LUFS per span
    peaks_dbfs: list[float]  # true peak per span

    @property
    def true_peak_dbfs(self) -> float:
        """The file's."""
        return max(self.peaks_dbfs, default=float("-inf"))

    def misses(self, target_lufs: float) -> list[bool]:
        return [math.isfinite(v) and abs(v - target_lufs) > AIM_LU for v in self.loudness]

    def peaks_over(self) -> list[bool]:
        """Each span's true peak over the ceiling, or too near it to trust another meter."""
        return [p > CEILING_DBFS - PEAK_MARGIN_DB for p in self.peaks_dbfs]

    def peak_over(self) -> bool:
        return self.true_peak_dbfs > CEILING_DBFS - PEAK_MARGIN_DB

    def ok(self, target_lufs: float) -> bool:
        return not self.peak_over() and not any(self.misses(target_lufs))

    def worst_miss_lu(self, target_lufs: float) -> float:
        return max((abs(v - target_lufs) for v in self.loudness if math.isfinite(v)), default=0.0)

    def keeps_promise(self, target_lufs: float) -> bool:
        """Under the ceiling and within :data:`PROMISE_LU` of the target: short of the aim, still
        what the API says the file is."""
        return self.true_peak_dbfs <= CEILING_DBFS and self.worst_miss_lu(target_lufs) <= PROMISE_LU


def best_kept(tried: Sequence[Verdict], target_lufs: float) -> int | None:
    """The render (index into ``tried``) to deliver when none met the aim: the last one if it keeps
    the promise, else the earlier one that kept it closest to the target; ``None`` if none did."""
    kept = [i for i, seen in enumerate(tried) if seen.keeps_promise(target_lufs)]
    if kept and kept[-1] == len(tried) - 1:
        return kept[-1]
    return min(kept, key=lambda i: tried[i].worst_miss_lu(target_lufs)) if kept else None


def last_resort(tried: Sequence[tuple[Measured, Verdict]], target_lufs: float, parts: Sequence[Span]) -> Measured:
    """Levels for one more render when no render kept the promise: the gains of the render
    closest to the target, under a limiter ceiling lowered, in each span whose peak was over it,
    by that span's overshoot and the codec's headroom once more. Loudness gives a little (the
    limiter takes it only at peaks) so that the file is under the ceiling, which a retailer
    rejects a file for."""
    levels, seen = min(tried, key=lambda pair: pair[1].worst_miss_lu(target_lufs))
    ceilings = list(levels.ceilings)
    for span, peak, over in zip(parts, seen.peaks_dbfs, seen.peaks_over(), strict=True):
        if over:
            lower = 10 ** (-(max(peak - CEILING_DBFS, 0.0) + PEAK_MARGIN_DB + _LAST_RESORT_DB) / 20)
            ceilings[span.first : span.stop] = [c * lower for c in ceilings[span.first : span.stop]]
    return replace(levels, ceilings=ceilings)


def cuts_s(parts: Sequence[Span]) -> list[float]:
    """Where the file is cut to measure ``parts`` (``speech.audio.measure_file``): each span after
    the first is measured as a file of its own, as a retailer measures a chapter's file."""
    return [s.start_s for s in parts[1:]]


def verdict(levels: FileLevels, parts: Sequence[Span]) -> Verdict:
    """``levels`` of a file measured with :func:`cuts_s` of ``parts``."""
    if len(levels.parts) != len(parts):
        raise ValueError(f"the file was measured in {len(levels.parts)} parts, not {len(parts)}")
    return Verdict([levels.loudness(i) for i in range(len(parts))], levels.part_peaks_dbfs)


def secant_gain_db(past: Sequence[tuple[float, float]], target_lufs: float) -> float:
    """The gain (dB) that should bring a span to ``target_lufs``, from its renders' (gain dB,
    decoded LUFS): a secant over the last two, slope 1 after one render."""
    gain_db, loudness = past[-1]
    slope = 1.0
    if len(past) >= 2 and abs(past[-1][0] - past[-2][0]) > 1e-6:
        slope = (past[-1][1] - past[-2][1]) / (past[-1][0] - past[-2][0])
        slope = min(max(slope, SLOPE_RANGE[0]), SLOPE_RANGE[1])
    return gain_db + (target_lufs - loudness) / slope


@dataclass
class Corrector:
    """Each span's history of (gain dB, decoded loudness) and its limiter's extra headroom."""

    fmt: str
    target_lufs: float
    parts: list[Span]
    extra_db: list[float] = field(default_factory=list)
    history: list[list[tuple[float, float]]] = field(default_factory=list)

    def next_levels(self, levels: Measured, seen: Verdict) -> Measured:
        """``levels`` (what the file was rendered with) corrected by what its decoding measured:
        the gain of each span that missed the aim, and the ceiling of each span whose peak was
        over it. A span that met both keeps its levels: an edit in one chapter does not move the
        others."""
        if not self.history:
            self.history = [[] for _ in self.parts]
            self.extra_db = [0.0] * len(self.parts)
        gains, ceilings = list(levels.gains), list(levels.ceilings)
        spans = zip(self.parts, self.history, seen.loudness, seen.peaks_dbfs, seen.peaks_over(), strict=True)
        for i, (span, past, loudness, peak, over) in enumerate(spans):
            if span.stop <= span.first:
                continue
            if over:
                self.extra_db[i] += peak - (CEILING_DBFS - PEAK_MARGIN_DB) + 0.1
                ceilings[span.first : span.stop] = [limiter_ceiling(self.fmt, self.extra_db[i])] * (span.stop - span.first)
            if not math.isfinite(loudness):
                continue
            past.append((20 * math.log10(max(gains[span.first], 1e-9)), loudness))
            if abs(loudness - self.target_lufs) <= AIM_LU:
                continue
            new_gain = float(10 ** (secant_gain_db(past, self.target_lufs) / 20))
            gains[span.first : span.stop] = [new_gain] * (span.stop - span.first)
        return Measured(levels.timeline, levels.peaks, gains, ceilings)
