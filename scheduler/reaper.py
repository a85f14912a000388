"""Finding jobs that stopped moving and nudging them on.

A job whose row has not changed for ``stall_after`` lost its task somewhere: a Redis restart
without persistence, a worker that died before acknowledging and whose message expired, a bug.
Re-sending is always safe because every step is idempotent; at worst a slow task and its
re-sent twin both run, and the second finds the chunks done.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from scheduler.queue import TASK_ASSEMBLE, TASK_PLAN
from store.db.models import Job

STALL_AFTER = timedelta(minutes=5)
_NEXT_STEP = {"queued": TASK_PLAN, "planning": TASK_PLAN, "running": TASK_PLAN, "assembling": TASK_ASSEMBLE}


def stalled(*, session: Session, now: datetime | None = None, stall_after: timedelta = STALL_AFTER) -> list[tuple[str, str]]:
    """(task, job id) pairs to re-send; touches each job so the next sweep waits again."""
    cutoff = (now or datetime.now(UTC)) - stall_after
    jobs = session.scalars(
        select(Job).where(Job.status.in_(list(_NEXT_STEP)), Job.updated_at < cutoff).with_for_update(skip_locked=True).limit(500)
    ).all()
    actions = []
    for job in jobs:
        job.updated_at = now or datetime.now(UTC)
        actions.append((_NEXT_STEP[job.status], str(job.id)))
    session.flush()
    return actions


def audio_url(objects: Any, job: Any, *, expires_s: int, public_base: str | None = None) -> str | None:
    """A presigned URL where the store can make one, else the API's own download path."""
    if not job.result_key:
        return None
    url = objects.presigned_url(job.result_key, expires_s=expires_s)
    if url is None and public_base:
        url = f"{public_base.rstrip('/')}/v1/jobs/{job.id}/audio"
    return url
