"""The reaper's queries: jobs that stopped moving, and finished jobs whose callback may be lost.

Both lock the rows they return (``FOR UPDATE SKIP LOCKED``) so that two reapers never nudge the
same job, and ``touch_jobs`` moves ``updated_at`` so that the next sweep waits again. What to do
with the rows (which task to re-send, whether a retry is overdue) is the scheduler's decision.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from store.db.models import Job
from store.status import TERMINAL, JobStatus

SWEEP_LIMIT = 500


def idle_jobs(
    *, session: Session, statuses: Iterable[JobStatus], idle_since: datetime, limit: int = SWEEP_LIMIT
) -> Sequence[Job]:
    """Jobs in one of ``statuses`` whose row has not changed since ``idle_since``, locked."""
    return session.scalars(
        select(Job)
        .where(Job.status.in_(list(statuses)), Job.updated_at < idle_since)
        .with_for_update(skip_locked=True)
        .limit(limit)
    ).all()


def finished_jobs_with_webhook(
    *, session: Session, finished_after: datetime, idle_since: datetime, limit: int = SWEEP_LIMIT
) -> Sequence[Job]:
    """Ended jobs with a webhook, finished after ``finished_after`` and idle since ``idle_since``, locked."""
    return session.scalars(
        select(Job)
        .where(
            Job.status.in_(sorted(TERMINAL)),
            Job.webhook_url.is_not(None),
            Job.finished_at > finished_after,
            Job.updated_at < idle_since,
        )
        .with_for_update(skip_locked=True)
        .limit(limit)
    ).all()


def touch_jobs(*, session: Session, jobs: Iterable[Job], now: datetime) -> None:
    """Mark ``jobs`` as seen at ``now``, so the next sweep leaves them alone for a while."""
    for job in jobs:
        job.updated_at = now
    session.flush()
