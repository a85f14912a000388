"""Counts for the metrics endpoint: job states, stalled jobs, job durations, webhook outcomes.

Read at scrape time so the numbers cover every worker process (they all write here) without a
multiprocess metrics registry. Each is one aggregate query over indexed or small sets.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from sqlalchemy import and_, case, func, select
from sqlalchemy.orm import Session

from store.db.models import JOB_STATUSES, Job, WebhookAttempt
from store.status import ACTIVE


def jobs_by_status(*, session: Session) -> dict[str, int]:
    """Every job state, zero included (a gauge that disappears cannot be alerted on)."""
    counts = dict.fromkeys(JOB_STATUSES, 0)
    for status, number in session.execute(select(Job.status, func.count()).group_by(Job.status)):
        counts[status] = int(number)
    return counts


def stalled_jobs(*, session: Session, older_than_s: float, now: datetime | None = None) -> int:
    """Unfinished jobs not updated for ``older_than_s``: what the reaper should be resending."""
    cutoff = (now or datetime.now(UTC)) - timedelta(seconds=older_than_s)
    query = select(func.count()).where(Job.status.in_(ACTIVE), Job.updated_at < cutoff)
    return int(session.execute(query).scalar_one())


def job_durations(*, session: Session, buckets: Sequence[float]) -> tuple[list[tuple[float, int]], float, int]:
    """A cumulative histogram of finished jobs' durations (created -> finished): ``([(le, count)],
    sum of seconds, count)``."""
    seconds = func.extract("epoch", Job.finished_at - Job.created_at)
    finished = Job.finished_at.is_not(None)
    columns = [func.count(case((and_(finished, seconds <= le), 1))) for le in buckets]
    row = session.execute(
        select(func.count(case((finished, 1))), func.coalesce(func.sum(case((finished, seconds))), 0), *columns)
    ).one()
    count, total, *cumulative = row
    return list(zip(buckets, (int(n) for n in cumulative), strict=True)), float(total), int(count)


def webhook_attempts(*, session: Session) -> dict[str, int]:
    """Delivery attempts by outcome: ``delivered`` or ``failed``."""
    counts = {"delivered": 0, "failed": 0}
    rows = session.execute(select(WebhookAttempt.delivered, func.count()).group_by(WebhookAttempt.delivered))
    for delivered, number in rows:
        counts["delivered" if delivered else "failed"] = int(number)
    return counts
