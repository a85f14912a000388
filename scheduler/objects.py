"""Deterministic object-store keys for a job's artefacts.

Every task may run twice; writing the same bytes under the same key makes the second run
harmless, and lets a repeat find the first run's work.
"""

from __future__ import annotations

import uuid


def source_key(job_id: uuid.UUID | str) -> str:
    return f"jobs/{job_id}/source.txt"


def chunk_audio_key(job_id: uuid.UUID | str, index: int) -> str:
    return f"jobs/{job_id}/chunks/{index:06d}.pcm"


def chunk_meta_key(job_id: uuid.UUID | str, index: int) -> str:
    return f"jobs/{job_id}/chunks/{index:06d}.json"


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


def job_prefix(job_id: uuid.UUID | str) -> str:
    """Everything a job ever stored: what retention deletes."""
    return f"jobs/{job_id}/"
