"""The live playlist's level: the job's loudness target on a stream whose end does not exist yet.

The finished file gets one gain per book (or per chapter, in chapter scope), computed from its
whole measurement, then a true-peak limiter, then its loudness is measured again on the encoded
file and corrected (``books.conformance``). None of that can be had while the book renders:
a segment, once listed, is never made again, and its gain must be chosen when it is made. So
each segment gets the gain that the measurement *known so far* asks for:

- the book's gated loudness over every segment made so far and this one (in chapter scope, the
  chapter's so far once it has ``MIN_CHAPTER_S`` of blocks; before that, the book's), measured
  on the raw chunks as assembly measures them, in constant space
  (``speech.audio.running_loudness``), carried from segment to segment in an object beside the
  index (``hls/levels/<n>.json``);
- plus the loudness the limiter takes: it pulls the peaks of some voices (joe's crest) under
  the ceiling and takes loudness with them, which assembly corrects by rendering the file again.
  Here each segment is aimed at what the book's gain alone would make of it: the loss the last
  segment met is the first guess (it grows with the gain), and a segment that misses by more
  than ``MISS_LU`` is rendered again along a secant, at most ``RENDERS`` times, the gain at most
  ``MAX_LOSS_DB`` over the book's;
- in whole tenths of a dB, as the chapter gains of assembly ahead, and limited at the ceiling
  an m4b file gets (AAC is the stream's codec);
- reached after the cut: the segment before's gain holds over the samples both encodings share
  around the cut, then one AAC frame ramps to the segment's own (``_gain_curve``).

The stream's level therefore starts from the first segment's own measurement (6 s) and settles
as the book goes on; the rest is what AAC itself takes, which is not corrected (``docs/api.md``
states the figures). Gains are decided only from segments in order, and each is stored before
the index lists its segment, so a repeat or a twin computes the same gain for the same segment.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Final

import numpy as np

from books.conformance import limiter_ceiling
from books.rendering import limit_peaks
from speech.audio import integrated_loudness, normalization_gain_db
from speech.audio.aac_frames import FRAME, POST_ROLL
from speech.audio.running_loudness import RunningLoudness

#: A chapter's own measurement is used once it has this many seconds of blocks over the absolute
#: gate; before, the book's (a chapter's first 6 s say little about the chapter).
MIN_CHAPTER_S: Final = 20.0
GAIN_STEP_DB: Final = 0.1
#: The limiter's loss that is made up at most: beyond it, a voice's crest is being crushed, and
#: more gain would only crush it more.
MAX_LOSS_DB: Final = 6.0
#: A segment this far from what the book's gain alone would make of it is rendered again ...
MISS_LU: Final = 0.15
#: ... up to this many renders in all, along a secant whose slope (loudness per dB of gain, under
#: the limiter) is held in assembly's range.
RENDERS: Final = 3
SLOPE: Final = (0.25, 1.5)
#: The ceiling of an m4b file: AAC moves peaks after the limiter as LAME does.
CEILING: Final = limiter_ceiling("m4b")


@dataclass(frozen=True, slots=True)
class LiveLevel:
    """The measurement after the segments made so far, and the gain the last one got."""

    loudness: RunningLoudness
    loss_db: float = 0.0  # what the limiter took from the last segment that could be measured
    gain_tenths_db: int = 0

    @classmethod
    def start(cls, rate: int) -> LiveLevel:
        return cls(RunningLoudness(rate))

    def to_json(self) -> bytes:
        return json.dumps({
            "loudness": self.loudness.to_json(), "loss_db": self.loss_db, "gain_tenths_db": self.gain_tenths_db,
        }).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> LiveLevel:
        data = json.loads(raw)
        return cls(
            RunningLoudness.from_json(data["loudness"]), float(data["loss_db"]), int(data["gain_tenths_db"]),
        )


def _linear(tenths: int) -> float:
    return float(10 ** (tenths * GAIN_STEP_DB / 20))


def _gain_curve(length: int, start: int, held: int | None, tenths: int) -> np.ndarray:
    """The segment's gain per sample of its span: the segment before's gain (``held``) up to
    ``POST_ROLL`` past the cut at ``start``, then a ramp of one AAC frame to its own. Around the
    cut both encodings must see the same signal, or the frames either side of it no longer
    cancel each other's aliasing (a click where the gains differ); the segment before was encoded
    under its own gain up to ``POST_ROLL`` past its end."""
    curve = np.full(length, _linear(tenths), dtype=np.float32)
    if held is not None and held != tenths:
        hold = min(length, start + POST_ROLL)
        ramp = min(length, hold + FRAME)
        curve[:hold] = _linear(held)
        curve[hold:ramp] = np.linspace(_linear(held), _linear(tenths), ramp - hold, endpoint=False, dtype=np.float32)
    return curve


def leveled(
    level: LiveLevel, span: np.ndarray, own: slice, *, rate: int, target_lufs: float, chapter_scope: bool,
    new_chapter: bool,
) -> tuple[np.ndarray, LiveLevel]:
    """The segment's audio (``span``, rolls included; ``own``: the segment's samples in it) under
    its gain and limited, and the measurement after it."""
    loudness = level.loudness.fed(span[own], new_part=new_chapter)
    trusted = loudness.part if chapter_scope and loudness.part.seconds >= MIN_CHAPTER_S else loudness.whole
    base = normalization_gain_db(trusted.loudness(), target_lufs)

    held = None if level.loudness.state is None else level.gain_tenths_db  # the segment before's

    def render(gain_db: float) -> tuple[int, np.ndarray, float]:
        tenths = round(min(gain_db, base + MAX_LOSS_DB) / GAIN_STEP_DB)
        out = limit_peaks(span * _gain_curve(len(span), own.start, held, tenths), rate, CEILING)
        return tenths, out, integrated_loudness(out[own], rate)

    # What the book's gain alone would make of this segment, without the limiter: its target.
    want = integrated_loudness(span[own], rate) + base
    tenths, out, heard = render(base + level.loss_db)
    if np.isfinite(want) and np.isfinite(heard):
        # The loss grows with the gain: the last segment's is the first guess; a miss is rendered
        # again along the secant (the first step at a slope of one), as assembly corrects a file.
        tried = [(tenths * GAIN_STEP_DB, heard)]
        while abs(want - tried[-1][1]) > MISS_LU and len(tried) < RENDERS:
            g1, l1 = tried[-1]
            g0, l0 = tried[-2] if len(tried) > 1 else (g1 - 1.0, l1 - 1.0)
            slope = min(SLOPE[1], max(SLOPE[0], (l1 - l0) / (g1 - g0))) if g1 != g0 else 1.0
            tenths, out, heard = render(g1 + (want - l1) / slope)
            if tenths * GAIN_STEP_DB == g1 or not np.isfinite(heard):
                break  # the gain is at its bound, or the step rounds away
            tried.append((tenths * GAIN_STEP_DB, heard))
        if np.isfinite(heard):  # the segment as it was rendered, less what it was heard at
            loss = (want - base) + tenths * GAIN_STEP_DB - heard
            level = replace(level, loss_db=min(MAX_LOSS_DB, max(0.0, loss)))
    return out, replace(level, loudness=loudness, gain_tenths_db=tenths)
