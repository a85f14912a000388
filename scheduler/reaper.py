"""Finding jobs that stopped moving and nudging them on.

A job whose row has not changed for ``stall_after`` lost its task somewhere: a Redis restart
without persistence, a worker that died before acknowledging and whose message expired, a bug.
Re-sending is always safe because every step is idempotent; at worst a slow task and its
re-sent twin both run, and the second finds the chunks done.

Webhooks get the same care after the job ends: a finished job whose callback was neither
delivered nor retried when its schedule said (the retry task was lost with Redis) gets its next
attempt re-sent, while the day-long retry window lasts. A twin attempt finds the delivered row
and stops, so the customer gets the callback once.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session

from scheduler import webhooks
from scheduler.queue import TASK_ASSEMBLE, TASK_PLAN
from store.db import jobs as job_repo
from store.db import sweeps
from store.status import JobStatus

_NEXT_STEP = {
    JobStatus.QUEUED: TASK_PLAN,
    JobStatus.PLANNING: TASK_PLAN,
    JobStatus.RUNNING: TASK_PLAN,
    JobStatus.ASSEMBLING: TASK_ASSEMBLE,
}


def stalled(*, session: Session, now: datetime | None = None, stall_after: timedelta) -> list[tuple[str, str]]:
    """(task, job id) pairs to re-send; touches each job so the next sweep waits again."""
    now = now or datetime.now(UTC)
    jobs = sweeps.idle_jobs(session=session, statuses=_NEXT_STEP, idle_since=now - stall_after)
    sweeps.touch_jobs(session=session, jobs=jobs, now=now)
    return [(_NEXT_STEP[job.status], str(job.id)) for job in jobs]


def lost_webhooks(
    *,
    session: Session,
    now: datetime | None = None,
    stall_after: timedelta,
    max_delay_s: float = webhooks.MAX_DELAY_S,
) -> list[tuple[str, int]]:
    """(job id, attempt number) of callbacks to re-send: undelivered, inside the retry window,
    and overdue by ``stall_after`` (no first attempt after the job ended, or no next attempt
    after the last one's backoff). Touches each job so the next sweep waits again."""
    now = now or datetime.now(UTC)
    jobs = sweeps.finished_jobs_with_webhook(
        session=session, finished_after=now - timedelta(seconds=webhooks.RETRY_WINDOW_S), idle_since=now - stall_after
    )
    actions, overdue = [], []
    for job in jobs:
        attempts = job_repo.list_webhook_attempts(session=session, job_id=job.id)
        if any(a.delivered for a in attempts):
            continue
        if attempts:
            last = attempts[-1]
            due = last.created_at + timedelta(seconds=webhooks.backoff_seconds(last.attempt, cap_s=max_delay_s))
            next_attempt = last.attempt + 1
        else:
            due, next_attempt = job.finished_at or job.updated_at, 1
        if _aware(due) + stall_after < now:
            overdue.append(job)
            actions.append((str(job.id), next_attempt))
    sweeps.touch_jobs(session=session, jobs=overdue, now=now)
    return actions


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
