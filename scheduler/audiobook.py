"""What an m4b says about its book: title, author, the voices that read it, and its cover.

The cover was stored beside the text at submission (from the EPUB, or an image uploaded with the
job); the narrators are the cast's voices, the narrator first, or the job's one voice.
"""

from __future__ import annotations

import uuid
from typing import Any

from scheduler.casting import Cast
from scheduler.objects import cover_key
from speech.audio.m4b import AudiobookTags


def audiobook_tags(objects: Any, job_id: uuid.UUID, params: dict[str, Any]) -> AudiobookTags:
    cast = Cast.from_params(params)
    narrators = cast.voices() if cast is not None else [str(params.get("speaker", ""))]
    cover = params.get("cover") or {}
    return AudiobookTags(
        title=params.get("title"),
        author=params.get("author"),
        narrators=[n for n in narrators if n],
        cover=objects.get_bytes(cover_key(job_id)) if cover else None,
        cover_type=cover.get("type"),
    )
