"""An account's rendered chunks by content key (table ``chunk_cache``; ``scheduler.chunk_cache``
decides what goes in and what comes out).

Reference-safe by construction: an entry is deleted only when no job of its account that is not
expired refers to it (``job_chunks.content_key``) and it was not used since the cutoff. The sweep
locks the entries it deletes (``SKIP LOCKED``, so two sweeps never meet), and ``use_entries``
touches an entry with an ``UPDATE``, which waits for such a lock: a job either touches the entry
first (then it is too recent to delete) or finds it gone (then it renders the chunk itself).
Nothing here commits.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Exists, delete, exists, func, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from store.db.jobs import not_expired
from store.db.models import ChunkCacheEntry, Job, JobChunk


@dataclass(frozen=True, slots=True)
class CachedChunk:
    """An entry as a job reads it: its audio's object key, what it billed and how long it is."""

    content_key: str
    audio_key: str
    characters: int
    duration_s: float


def use_entries(*, session: Session, account_id: uuid.UUID, keys: Collection[str]) -> dict[str, CachedChunk]:
    """The account's entries among ``keys``, each marked used now (its retention restarts)."""
    if not keys:
        return {}
    rows = session.execute(
        update(ChunkCacheEntry)
        .where(ChunkCacheEntry.account_id == account_id, ChunkCacheEntry.content_key.in_(sorted(set(keys))))
        .values(last_used_at=func.now())
        .returning(
            ChunkCacheEntry.content_key, ChunkCacheEntry.audio_key, ChunkCacheEntry.characters, ChunkCacheEntry.duration_s
        )
        .execution_options(synchronize_session=False)
    ).all()
    return {row[0]: CachedChunk(row[0], row[1], int(row[2]), float(row[3])) for row in rows}


def remember(*, session: Session, account_id: uuid.UUID, entries: Sequence[CachedChunk]) -> None:
    """Add the account's newly rendered chunks; a key already there (a twin task rendered it
    too) keeps its row and is marked used."""
    if not entries:
        return
    statement = insert(ChunkCacheEntry).values(
        [
            {
                "account_id": account_id, "content_key": e.content_key, "audio_key": e.audio_key,
                "characters": e.characters, "duration_s": e.duration_s,
            }
            for e in sorted(entries, key=lambda e: e.content_key)  # one lock order for concurrent writers
        ]
    )
    session.execute(
        statement.on_conflict_do_update(
            index_elements=[ChunkCacheEntry.account_id, ChunkCacheEntry.content_key],
            set_={"last_used_at": func.now()},
        )
    )


def _referenced() -> Exists:
    """A job of the entry's account that is not expired has a chunk with the entry's key."""
    return exists(
        select(JobChunk.job_id)
        .join(Job, Job.id == JobChunk.job_id)
        .where(
            JobChunk.content_key == ChunkCacheEntry.content_key,
            Job.account_id == ChunkCacheEntry.account_id,
            not_expired(),
        )
    )


def expirable_entries(
    *, session: Session, used_before: datetime, limit: int = 500
) -> list[tuple[uuid.UUID, CachedChunk]]:
    """``(account_id, entry)`` for entries last used before ``used_before`` that no live job
    refers to, locked for deletion (``SKIP LOCKED``); the caller deletes their objects, then
    ``delete_entries``."""
    rows = session.execute(
        select(
            ChunkCacheEntry.account_id, ChunkCacheEntry.content_key, ChunkCacheEntry.audio_key,
            ChunkCacheEntry.characters, ChunkCacheEntry.duration_s,
        )
        .where(ChunkCacheEntry.last_used_at < used_before, ~_referenced())
        .order_by(ChunkCacheEntry.last_used_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    ).all()
    return [(row[0], CachedChunk(row[1], row[2], int(row[3]), float(row[4]))) for row in rows]


def delete_entries(*, session: Session, owned: Sequence[tuple[uuid.UUID, str]]) -> int:
    """Delete the ``(account_id, content_key)`` entries; returns how many were there."""
    if not owned:
        return 0
    result = session.execute(
        delete(ChunkCacheEntry)
        .where(tuple_(ChunkCacheEntry.account_id, ChunkCacheEntry.content_key).in_([(a, k) for a, k in owned]))
        .execution_options(synchronize_session=False)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


def entry_keys(*, session: Session, account_id: uuid.UUID) -> set[str]:
    """The account's content keys (tests, support)."""
    return set(session.scalars(select(ChunkCacheEntry.content_key).where(ChunkCacheEntry.account_id == account_id)))

