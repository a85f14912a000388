"""The live playlist's state, and where its next segments are cut.

The state (``hls/index.json`` beside the job's chunks) lists the segments made so far as spans
of the book's timeline (samples at the voice's rate) and the chapters whose first segment is
listed. Only the segment maker (``scheduler.hls``, one at a time per job) writes it, and only
ever by appending, so every playlist rendered from it starts with every earlier one.

Where segments are cut follows from the timeline alone, never from the audio: every
``segment_samples`` after the previous cut, and at each chapter's start (on the 1024-sample AAC
frame grid, so a chapter begins at a segment). A cut is made once the audio ``POST_ROLL`` past
it is known, which is why a prefix of the book always gets the same first segments as the whole
book: nothing after a cut changes where it is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from speech.audio.aac_frames import FRAME, POST_ROLL

#: Segments are at most this long (the playlist's EXT-X-TARGETDURATION).
TARGET_DURATION_S: Final = 6


def segment_samples(rate: int) -> int:
    """Whole AAC frames, at most ``TARGET_DURATION_S`` long."""
    return (TARGET_DURATION_S * rate // FRAME) * FRAME


@dataclass(frozen=True, slots=True)
class ListedChapter:
    title: str
    start: int  # samples: where the chapter starts (its pause before the first chunk)
    segment: int  # the first segment of the chapter


@dataclass(frozen=True, slots=True)
class StreamIndex:
    rate: int
    segments: list[tuple[int, int]] = field(default_factory=list)  # [start, stop) in samples
    chapters: list[ListedChapter] = field(default_factory=list)
    complete: bool = False  # the last segment ends the book

    @property
    def cursor(self) -> int:
        """Where the next segment starts."""
        return self.segments[-1][1] if self.segments else 0

    def with_segment(self, start: int, stop: int, chapters: Sequence[tuple[str, int]], *, last: bool) -> StreamIndex:
        """This index and one more segment, with the chapters that start in it."""
        number = len(self.segments)
        found = [ListedChapter(title, at, number) for title, at in chapters if start <= _cut(at) < stop]
        return replace(self, segments=[*self.segments, (start, stop)], chapters=[*self.chapters, *found], complete=last)

    def to_json(self) -> bytes:
        return json.dumps({
            "rate": self.rate,
            "segments": [list(s) for s in self.segments],
            "chapters": [{"title": c.title, "start": c.start, "segment": c.segment} for c in self.chapters],
            "complete": self.complete,
        }).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> StreamIndex:
        data = json.loads(raw)
        return cls(
            rate=int(data["rate"]),
            segments=[(int(a), int(b)) for a, b in data["segments"]],
            chapters=[ListedChapter(str(c["title"]), int(c["start"]), int(c["segment"])) for c in data["chapters"]],
            complete=bool(data["complete"]),
        )


def _cut(at: int) -> int:
    """A chapter's cut: the frame its start falls in."""
    return at // FRAME * FRAME


@dataclass(frozen=True, slots=True)
class KnownAudio:
    """What the done prefix of a book tells about its timeline."""

    rate: int
    known_end: int  # samples known: the done chunks and the silence before the next one
    book_end: int | None  # the book's end, once every chunk is done
    chapters: list[tuple[str, int]]  # titles and starts (samples) of the chapters known to start


def next_segments(cursor: int, known: KnownAudio) -> list[tuple[int, int]]:
    """The segments the known audio allows after ``cursor``, in order."""
    length = segment_samples(known.rate)
    cuts = sorted({_cut(at) for _, at in known.chapters if _cut(at) > cursor})
    out: list[tuple[int, int]] = []
    start = cursor
    while known.book_end is None or start < known.book_end:
        stop = start + length
        chapter = next((c for c in cuts if c > start), None)
        if chapter is not None and chapter < stop:
            stop = chapter
        if known.book_end is not None and stop >= known.book_end:
            stop = known.book_end
        elif known.book_end is None and stop + POST_ROLL > known.known_end:
            break  # the audio after the cut, which its last frame overlaps, is not known yet
        out.append((start, stop))
        start = stop
    return out
