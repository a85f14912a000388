"""A book's layout: the silence before each chunk, where chapters start, and what else the plan
records beside the chunks (``plan.json``), with the pauses a job asks for.

Why here: planning (``scheduler.planning``) writes the layout once and every later step reads it
instead of re-deriving it: the timeline (``books.timeline``) places each chunk after its pause,
the loudness passes measure per chapter, the delivery cuts a file per chapter. Those readers are
the book domain's, below ``scheduler``, so the layout is too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Final

from books.job_ssml import Step
from books.options import BookOptions
from speech.text.offsets import Runs

PAUSE_SENTENCE_MS: Final = 250
PAUSE_PARAGRAPH_MS: Final = 700
PAUSE_CHAPTER_MS: Final = 2000


@dataclass(frozen=True, slots=True)
class Pauses:
    """Silence between chunks by what separates them (configurable per job)."""

    sentence_ms: int = PAUSE_SENTENCE_MS
    paragraph_ms: int = PAUSE_PARAGRAPH_MS
    chapter_ms: int = PAUSE_CHAPTER_MS

    @classmethod
    def from_params(cls, params: BookOptions) -> Pauses:
        given = params.pauses or {}
        return cls(
            sentence_ms=int(given.get("sentence", PAUSE_SENTENCE_MS)),
            paragraph_ms=int(given.get("paragraph", PAUSE_PARAGRAPH_MS)),
            chapter_ms=int(given.get("chapter", PAUSE_CHAPTER_MS)),
        )


@dataclass(frozen=True, slots=True)
class ChapterMark:
    title: str
    chunk: int  # index of the chapter's first chunk


@dataclass(frozen=True, slots=True)
class Layout:
    pauses_ms: list[int]  # silence before each chunk
    chapters: list[ChapterMark] = field(default_factory=list)
    batches: list[list[int]] = field(default_factory=list)  # dispatch order
    voices: list[str] = field(default_factory=list)  # a cast job's voice of each chunk; else empty
    speakers: list[str | None] = field(default_factory=list)  # and who it is (None: the narrator)
    # where each chunk was written in the job's text (books.chunk_sources); empty: not known
    sources: list[Runs | None] = field(default_factory=list)
    steps: list[list[Step]] = field(default_factory=list)  # an SSML job's stretches of each chunk (books.job_ssml)

    def to_json(self) -> bytes:
        return json.dumps(
            {
                "pauses_ms": self.pauses_ms,
                "chapters": [{"title": c.title, "chunk": c.chunk} for c in self.chapters],
                "batches": self.batches,
                **({"voices": self.voices, "speakers": self.speakers} if self.voices else {}),
                **({"sources": self.sources} if self.sources else {}),
                **({"steps": self.steps} if self.steps else {}),
            }
        ).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> Layout:
        data = json.loads(raw)
        return cls(
            pauses_ms=list(data["pauses_ms"]),
            chapters=[ChapterMark(c["title"], int(c["chunk"])) for c in data.get("chapters", [])],
            batches=[list(b) for b in data.get("batches", [])],
            voices=list(data.get("voices", [])),
            speakers=list(data.get("speakers", [])),
            sources=[None if r is None else [(int(a), int(b)) for a, b in r] for r in data.get("sources", [])],
            steps=list(data.get("steps", [])),
        )
