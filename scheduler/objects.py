"""Object-store keys for a job's artefacts, and the shape of a chunk's metadata.

Every task may run twice; writing the same bytes under the same key makes the second run
harmless, and lets a repeat find the first run's work. Chunk audio is the exception: its keys
are write-once per attempt (``chunk_audio_key``), because two attempts at one chunk may both
write, and the one assembly read must never be replaced.
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


class ChunkVoice(TypedDict):
    """A cast chunk's voice and the character it speaks for (None: narration), named in the
    book's timestamps and WebVTT voice spans."""

    voice: str
    speaker: str | None


def source_key(job_id: uuid.UUID | str) -> str:
    return f"jobs/{job_id}/source.txt"


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


def result_key(job_id: uuid.UUID | str, extension: str) -> str:
    return f"jobs/{job_id}/audio.{extension}"


def timestamps_key(job_id: uuid.UUID | str) -> str:
    return f"jobs/{job_id}/timestamps.json"


def plan_key(job_id: uuid.UUID | str) -> str:
    return f"jobs/{job_id}/plan.json"


def srt_key(job_id: uuid.UUID | str) -> str:
    return f"jobs/{job_id}/subtitles.srt"


def vtt_key(job_id: uuid.UUID | str) -> str:
    return f"jobs/{job_id}/subtitles.vtt"


def cover_key(job_id: uuid.UUID | str) -> str:
    return f"jobs/{job_id}/cover"


def qa_chunk_key(job_id: uuid.UUID | str, index: int) -> str:
    """What the QA check heard in one chunk and how it scored (``scheduler.qa``)."""
    return f"jobs/{job_id}/qa/chunks/{index:06d}.json"


def qa_chunk_prefix(job_id: uuid.UUID | str) -> str:
    return f"jobs/{job_id}/qa/chunks/"


def qa_report_key(job_id: uuid.UUID | str) -> str:
    """The job's QA report: the passages that still failed after their second rendering."""
    return f"jobs/{job_id}/qa/report.json"


def job_prefix(job_id: uuid.UUID | str) -> str:
    """Everything a job ever stored: what retention deletes."""
    return f"jobs/{job_id}/"


def ahead_loudness_key(job_id: uuid.UUID | str, index: int) -> str:
    """A chunk's loudness, measured while the book is still being synthesized (``scheduler.progressive_assembly``)."""
    return f"jobs/{job_id}/ahead/loudness/{index:06d}.json"


def ahead_loudness_prefix(job_id: uuid.UUID | str) -> str:
    return f"jobs/{job_id}/ahead/loudness/"


def ahead_chapter_key(job_id: uuid.UUID | str, first: int, stop: int) -> str:
    """A complete chapter's gain, from chunk ``first`` to the one before ``stop``."""
    return f"jobs/{job_id}/ahead/chapters/{first:06d}-{stop:06d}.json"


def ahead_segment_key(job_id: uuid.UUID | str, first: int, stop: int, rate: int, extension: str) -> str:
    """A segment's encoded frames, from chunk ``first`` to the one before ``stop``, waiting for
    the join; ``extension`` names the gains it was encoded under, then the format."""
    return f"jobs/{job_id}/ahead/segments/{first:06d}-{stop:06d}-{rate}.{extension}"


def compliance_key(job_id: uuid.UUID | str) -> str:
    """A delivery job's compliance report (``books.acx``)."""
    return f"jobs/{job_id}/compliance.json"


def hls_index_key(job_id: uuid.UUID | str) -> str:
    """The live playlist's state: the segments made so far, where each starts, the chapters
    (``scheduler.hls``)."""
    return f"jobs/{job_id}/hls/index.json"


def hls_init_key(job_id: uuid.UUID | str) -> str:
    return f"jobs/{job_id}/hls/init.mp4"


def hls_segment_key(job_id: uuid.UUID | str, number: int) -> str:
    return f"jobs/{job_id}/hls/{number:06d}.m4s"


def cache_prefix(account_id: uuid.UUID | str) -> str:
    """An account's rendered chunks by content key (``scheduler.chunk_cache``): outside every
    job's prefix, so expiring a job never deletes audio another job reuses."""
    return f"cache/{account_id}/"


def cache_audio_key(account_id: uuid.UUID | str, content_key: str) -> str:
    return f"cache/{account_id}/{content_key[:2]}/{content_key}.pcm"


def cache_meta_key(account_id: uuid.UUID | str, content_key: str) -> str:
    return f"cache/{account_id}/{content_key[:2]}/{content_key}.json"
