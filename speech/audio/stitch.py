"""Join per-sentence audio into one work, with controlled pauses and click-free edges.

Each chunk is a separate synthesis, so its first and last samples need not be near zero; butting
two such chunks together (or against silence) makes an audible click. A few milliseconds of
raised-cosine fade at every chunk edge removes that without touching the speech. Pauses depend on
what the boundary is (sentence, paragraph, chapter), so the caller says which one follows each
chunk. The start offset of every chunk is returned: chapter marks and subtitle timings need it.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


class Boundary(enum.Enum):
    """What follows a chunk; decides the pause after it."""

    SENTENCE = "sentence"
    PARAGRAPH = "paragraph"
    CHAPTER = "chapter"
    NONE = "none"  # no pause (a long sentence split at a clause)


@dataclass(frozen=True, slots=True)
class Pauses:
    """Pause lengths in milliseconds, and the fade applied to each chunk edge."""

    sentence_ms: float = 250.0
    paragraph_ms: float = 700.0
    chapter_ms: float = 2000.0
    fade_ms: float = 5.0

    def after(self, boundary: Boundary) -> float:
        return {
            Boundary.SENTENCE: self.sentence_ms,
            Boundary.PARAGRAPH: self.paragraph_ms,
            Boundary.CHAPTER: self.chapter_ms,
            Boundary.NONE: 0.0,
        }[boundary]


@dataclass(frozen=True, slots=True)
class Stitched:
    """The joined samples and where each input chunk starts in them (in samples)."""

    samples: np.ndarray
    sample_rate: int
    starts: tuple[int, ...]

    @property
    def duration(self) -> float:
        return len(self.samples) / float(self.sample_rate)

    def start_seconds(self, index: int) -> float:
        return self.starts[index] / float(self.sample_rate)


def ms_to_samples(ms: float, sample_rate: int) -> int:
    return int(round(ms * sample_rate / 1000.0))


def fade_edges(samples: np.ndarray, sample_rate: int, fade_ms: float) -> np.ndarray:
    """A copy of ``samples`` with a raised-cosine fade-in and fade-out of ``fade_ms`` each."""
    x = np.array(samples, dtype=np.float32, copy=True).reshape(-1)
    n = min(ms_to_samples(fade_ms, sample_rate), len(x) // 2)
    if n > 0:
        ramp = (0.5 - 0.5 * np.cos(np.pi * (np.arange(n, dtype=np.float32) + 0.5) / n)).astype(np.float32)
        x[:n] *= ramp
        x[-n:] *= ramp[::-1]
    return x


def stitch(
    chunks: Sequence[np.ndarray],
    sample_rate: int,
    boundaries: Sequence[Boundary] | None = None,
    *,
    pauses: Pauses | None = None,
    lead_in_ms: float = 0.0,
    tail_ms: float = 0.0,
) -> Stitched:
    """Concatenate float32 chunks (all at ``sample_rate``) with a pause after each but the last.

    ``boundaries[i]`` is the boundary after ``chunks[i]``; it defaults to :attr:`Boundary.SENTENCE`
    everywhere, and the boundary after the last chunk is ignored (``tail_ms`` pads the end instead).
    """
    pauses = pauses or Pauses()
    if boundaries is None:
        boundaries = [Boundary.SENTENCE] * len(chunks)
    if len(boundaries) < max(len(chunks) - 1, 0):
        raise ValueError("need one boundary after every chunk but the last")

    pieces: list[np.ndarray] = []
    starts: list[int] = []
    position = ms_to_samples(lead_in_ms, sample_rate)
    if position:
        pieces.append(np.zeros(position, dtype=np.float32))
    for i, chunk in enumerate(chunks):
        faded = fade_edges(chunk, sample_rate, pauses.fade_ms)
        starts.append(position)
        pieces.append(faded)
        position += len(faded)
        gap = (
            ms_to_samples(pauses.after(boundaries[i]), sample_rate)
            if i < len(chunks) - 1
            else ms_to_samples(tail_ms, sample_rate)
        )
        if gap:
            pieces.append(np.zeros(gap, dtype=np.float32))
            position += gap
    samples = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)
    return Stitched(samples=samples, sample_rate=sample_rate, starts=tuple(starts))
