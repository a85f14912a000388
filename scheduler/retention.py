"""Retention: a finished job's objects are deleted after a configurable number of days.

Everything the job stored goes (source text, chunk audio and timings, the plan, the result,
timestamps and subtitles: the whole ``jobs/<id>/`` prefix), and the row is marked: no result or
source key, ``params.expired = true``. The row itself stays, with its characters, duration and
status, because billing and the customer's job list refer to it.

Objects are deleted before the row is marked, so a sweep that dies half-way leaves a row that the
next sweep picks up again (deleting what is already gone is a no-op).

The account's chunk cache (``scheduler.chunk_cache``) follows the same period, counted from an
entry's last use, and is reference-safe: an entry goes only when no job of the account that is not
expired refers to it. Its objects live outside every job's prefix, so expiring a job never takes
audio another job reuses; and a job's chunks are its own copies, so deleting a cache entry never
takes audio a job uses.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session

from scheduler.objects import cache_audio_key, cache_meta_key, job_prefix
from store.db import chunk_cache as cache_repo
from store.db import jobs as job_repo
from store.db.models import Job
from store.db.session import SessionFactory
from store.objects.base import ObjectStore

log = logging.getLogger("lector.retention")


def expire_jobs(
    *, session: Session, objects: ObjectStore, retention_days: float, now: datetime | None = None, limit: int = 100
) -> list[str]:
    """Expire up to ``limit`` jobs finished more than ``retention_days`` ago; return their ids."""
    cutoff = (now or datetime.now(UTC)) - timedelta(days=retention_days)
    expired = []
    for job in job_repo.expirable_jobs(session=session, finished_before=cutoff, limit=limit):
        removed = objects.delete_prefix(job_prefix(job.id))
        job_repo.mark_expired(session=session, job_id=job.id)
        log.info("job %s expired: %d objects deleted", job.id, removed)
        expired.append(str(job.id))
    return expired


def expire_cache(
    *, session: Session, objects: ObjectStore, retention_days: float, now: datetime | None = None, limit: int = 500
) -> int:
    """Delete up to ``limit`` cached chunks unused for ``retention_days`` that no live job refers
    to; return how many. Their rows stay locked until the caller commits, so a job that wants one
    meanwhile waits and then finds it gone (and renders the chunk), never a row without audio."""
    cutoff = (now or datetime.now(UTC)) - timedelta(days=retention_days)
    found = cache_repo.expirable_entries(session=session, used_before=cutoff, limit=limit)
    for account_id, entry in found:
        objects.delete(cache_audio_key(account_id, entry.content_key))
        objects.delete(cache_meta_key(account_id, entry.content_key))
    removed = cache_repo.delete_entries(session=session, owned=[(a, e.content_key) for a, e in found])
    if removed:
        log.info("chunk cache: %d entries unused for %g days deleted", removed, retention_days)
    return removed


def expire_all(*, sessions: SessionFactory, objects: ObjectStore, retention_days: float, batch: int = 100) -> int:
    """Sweep in batches of ``batch`` jobs, each batch committed on its own, until none is left;
    then the chunk cache the same way (after the jobs: an expired job no longer holds its
    entries). Returns the jobs expired."""
    total = 0
    while True:
        with sessions() as session:
            done = expire_jobs(session=session, objects=objects, retention_days=retention_days, limit=batch)
        total += len(done)
        if len(done) < batch:
            break
    while True:
        with sessions() as session:
            removed = expire_cache(session=session, objects=objects, retention_days=retention_days, limit=5 * batch)
        if removed < 5 * batch:
            return total


def is_expired(job: Job) -> bool:
    """Whether the sweep deleted the job's objects (the store's mark, beside the job's options)."""
    return job_repo.is_expired(job)
