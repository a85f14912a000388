"""Value types that cross the boundaries inside ``speech``.

An engine yields float32 audio one sentence at a time and knows no formats; encoders consume
those chunks. Word timings ride along so the JSON WebSocket and subtitles need no second pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, slots=True)
class WordTiming:
    """One word and where it sits in its chunk's audio, in seconds from the chunk start."""

    word: str
    start: float
    end: float
    source: tuple[int, int] | None = None
    """``(start, end)`` of the word in the text the customer submitted, before normalisation
    (``speech.text.offsets``); None where no written text stands behind it (an SSML mark)."""


@dataclass(slots=True)
class AudioChunk:
    """Mono float32 samples in [-1, 1] for one piece of text (usually one sentence)."""

    samples: np.ndarray
    sample_rate: int
    text: str = ""
    words: list[WordTiming] = field(default_factory=list)

    @property
    def duration(self) -> float:
        return len(self.samples) / float(self.sample_rate)

    def to_int16(self) -> np.ndarray:
        clipped = np.clip(self.samples, -1.0, 1.0)
        out: np.ndarray = (clipped * 32767.0).astype("<i2")
        return out


@dataclass(frozen=True, slots=True)
class SynthesisOptions:
    """Per-request controls. ``None`` means "the voice's default"."""

    length_scale: float | None = None  # >1 slower; timeScaleFactor/speedAlpha map onto this
    noise_scale: float | None = None
    noise_w: float | None = None
