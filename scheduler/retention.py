"""Retention: a finished job's objects are deleted after a configurable number of days.

Everything the job stored goes (source text, chunk audio and timings, the plan, the result,
timestamps and subtitles: the whole ``jobs/<id>/`` prefix), and the row is marked: no result or
source key, ``params.expired = true``. The row itself stays, with its characters, duration and
status, because billing and the customer's job list refer to it.

Objects are deleted before the row is marked, so a sweep that dies half-way leaves a row that the
next sweep picks up again (deleting what is already gone is a no-op).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session

from scheduler.objects import job_prefix
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


def expire_all(*, sessions: SessionFactory, objects: ObjectStore, retention_days: float, batch: int = 100) -> int:
    """Sweep in batches of ``batch`` jobs, each batch committed on its own, until none is left."""
    total = 0
    while True:
        with sessions() as session:
            done = expire_jobs(session=session, objects=objects, retention_days=retention_days, limit=batch)
        total += len(done)
        if len(done) < batch:
            return total


def is_expired(job: Job) -> bool:
    """Whether the sweep deleted the job's objects (the store's mark, beside the job's options)."""
    return job_repo.is_expired(job)
