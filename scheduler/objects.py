"""Object-store keys for a job's artefacts.

Every task may run twice; writing the same bytes under the same key makes the second run
harmless, and lets a repeat find the first run's work. Chunk audio is the exception: its keys
are write-once per attempt (``books.chunks.chunk_audio_key``), because two attempts at one chunk
may both write, and the one assembly read must never be replaced. A chunk's keys and the shape
of its metadata are the book domain's (``books.chunks``): the timeline reads them.
"""

from __future__ import annotations

import uuid


def source_key(job_id: uuid.UUID | str) -> str:
    return f"jobs/{job_id}/source.txt"


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


def hls_level_key(job_id: uuid.UUID | str, number: int) -> str:
    """The live playlist's loudness measurement after segment ``number``, and the gain that
    segment was made under (``scheduler.hls_levels``): the next segment's maker goes on from it."""
    return f"jobs/{job_id}/hls/levels/{number:06d}.json"
