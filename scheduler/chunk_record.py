"""Marking a synthesize task's stored chunks done and billing them, in the caller's transaction.

One place for the three writes that must commit together (the chunk rows, the account's chunk
cache, the usage rows): ``scheduler.synthesis`` commits them once for a batch, or once for each
engine call's group when the live playlist follows it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy.orm import Session

from books.chunks import chunk_audio_key
from scheduler import chunk_cache
from scheduler.job_params import JobParams
from store.db import jobs as job_repo
from store.db import usage as usage_repo


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """What marks a batch's stored chunks done and bills them, in the caller's transaction."""

    job_id: uuid.UUID
    account_id: uuid.UUID
    options: JobParams  # the job's (JobParams.from_stored)
    attempt: str
    keys: Mapping[int, str]  # each chunk's content key (the account's chunk cache)
    characters: Mapping[int, int]  # what each chunk bills (set at planning: speech.billing)

    def record(self, session: Session, stored: list[tuple[int, str, float]]) -> list[int]:
        """Mark ``stored`` (index, text, seconds) done under this attempt's keys, remember them in
        the account's cache and write a usage row for each chunk newly marked; return those."""
        if not stored:
            return []
        marked = job_repo.mark_chunks_done(
            session=session, job_id=self.job_id,
            done=[(i, chunk_audio_key(self.job_id, i, self.attempt), d) for i, _, d in stored],
            content_keys={i: self.keys[i] for i, _, _ in stored},
        )
        chunk_cache.remember(
            session=session, account_id=self.account_id,
            rendered={self.keys[i]: (self.characters[i], d) for i, _, d in stored},
        )
        seconds = {i: d for i, _, d in stored}
        usage_repo.record_job_usage(
            session=session, account_id=self.account_id, job_id=self.job_id, model=self.options.model_id,
            speaker=self.options.speaker, lang=self.options.lang,
            chunks=[(i, self.characters[i], seconds[i]) for i in marked],
        )
        return marked
