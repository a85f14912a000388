"""What an m4b says about its book: title, author, the voices that read it, and its cover.

The cover was stored beside the text at submission (from the EPUB, or an image uploaded with the
job); the narrators are the cast's voices, the narrator first, or the job's one voice.
"""

from __future__ import annotations

import uuid

from books.casting import Cast
from scheduler.job_params import JobParams
from scheduler.objects import cover_key
from speech.audio.m4b import AudiobookTags
from store.objects.base import ObjectStore


def audiobook_tags(objects: ObjectStore, job_id: uuid.UUID, params: JobParams) -> AudiobookTags:
    cast = Cast.from_params(params)
    narrators = cast.voices() if cast is not None else [params.speaker]
    return AudiobookTags(
        title=params.title,
        author=params.author,
        narrators=[n for n in narrators if n],
        cover=objects.get_bytes(cover_key(job_id)) if params.cover else None,
        cover_type=params.cover["type"] if params.cover else None,
    )
