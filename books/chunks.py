"""A book's chunks in the object store: where each one's audio and metadata are, and the
metadata's shape (its words and their timings, its voice, where its text stands in the book).

Why here and not with the rest of a job's keys (``scheduler.objects``): the timeline, the
subtitles and the loudness passes read chunks, and they are the book domain's, below
``scheduler``. Chunk audio keys are write-once per attempt (``chunk_audio_key``): two attempts
at one chunk may both write, and the one assembly read must never be replaced.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import NotRequired, TypedDict


class TimedWord(TypedDict):
    """A spoken word and when it is said, in seconds (chunk-relative in a chunk's metadata)."""

    word: str
    start: float
    end: float
    textOffset: NotRequired[int]  # where the word was written in the job's text (docs/api.md)
    textLength: NotRequired[int]
    mark: NotRequired[bool]  # an SSML mark's name, not a spoken word (books.job_ssml)


class ChunkMeta(TypedDict):
    """What ``chunk_meta_key`` holds (JSON), written by synthesis and read by assembly."""

    sample_rate: int
    samples: NotRequired[int]  # chunks stored before it was written carry only their duration
    duration_s: float
    words: list[TimedWord]
    text: str
    voice: NotRequired[str]  # a cast book's chunk: the voice that read it (books.casting)
    speaker: NotRequired[str | None]  # and the character it speaks for; None: the narration
    sources: NotRequired[list[tuple[int, int]]]  # where its text stands in the job's text (books.chunk_sources)
    origins: NotRequired[str]  # an SSML chunk's layout of its words in its document (books.job_ssml.origin_key)


class ChunkVoice(TypedDict):
    """A cast chunk's voice and the character it speaks for (None: narration), named in the
    book's timestamps and WebVTT voice spans."""

    voice: str
    speaker: str | None


def chunk_audio_key(job_id: uuid.UUID | str, index: int, attempt: str | None = None) -> str:
    """A chunk's audio. Synthesis writes each attempt under a key of its own (``attempt``) and
    records the winner's key on the chunk row (``store.db.jobs.mark_chunks_done``); readers go
    through the row (``ChunkKeys``). So a late write (a frozen host that wakes up after its task
    went elsewhere) lands beside the audio assembly read, never over it. Without ``attempt``: the
    key of chunks stored before attempts had keys."""
    return f"jobs/{job_id}/chunks/{index:06d}{'' if attempt is None else '.' + attempt}.pcm"


def chunk_meta_key(job_id: uuid.UUID | str, index: int, attempt: str | None = None) -> str:
    """A chunk's metadata (``ChunkMeta``), beside its audio under the same attempt."""
    return f"jobs/{job_id}/chunks/{index:06d}{'' if attempt is None else '.' + attempt}.json"


def meta_key_of(audio_key: str) -> str:
    """The metadata written with the audio under ``audio_key`` (the same attempt)."""
    stem, dot, extension = audio_key.rpartition(".")
    if not dot or extension != "pcm":
        raise ValueError(f"not a chunk audio key: {audio_key!r}")
    return f"{stem}.json"


@dataclass(frozen=True, slots=True)
class ChunkKeys:
    """Where a job's chunks are: the audio keys their rows recorded, by index (``None``, or an
    index past the end: the attempt-less key, as stored before attempts had keys and by tests
    that store chunks by hand). Picklable: it travels to assembly's worker processes."""

    job_id: uuid.UUID
    audio: tuple[str | None, ...] = ()

    def audio_key(self, index: int) -> str:
        recorded = self.audio[index] if index < len(self.audio) else None
        return recorded or chunk_audio_key(self.job_id, index)

    def meta_key(self, index: int) -> str:
        return meta_key_of(self.audio_key(index))
