"""scheduler/reaper.py on a real PostgreSQL: stalled jobs and lost webhook callbacks re-sent."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session

from scheduler import reaper, webhooks
from scheduler.queue import TASK_PLAN
from store.db import create_account, create_job, get_job, record_webhook_attempt

HOUR = timedelta(hours=1)
STALL_AFTER = timedelta(minutes=5)


def _finished_job(session: Session, *, finished_ago: timedelta, webhook: str | None = "https://example.com/h",
                  status: str = "succeeded") -> uuid.UUID:
    account = create_account(session=session, name=f"reap-{uuid.uuid4().hex[:8]}")
    job, _ = create_job(session=session, account_id=account.id, request_hash=uuid.uuid4().hex,
                        params={"speaker": "joe"}, characters=10, webhook_url=webhook)
    moment = datetime.now(UTC) - finished_ago
    job.status, job.finished_at, job.updated_at = status, moment, moment
    session.flush()
    return job.id


def _lost(session: Session, **kwargs: object) -> dict[str, int]:
    return dict(reaper.lost_webhooks(session=session, stall_after=STALL_AFTER, **kwargs))  # type: ignore[arg-type]


def test_a_callback_never_sent_is_resent_as_attempt_one(db_session: Session) -> None:
    job_id = _finished_job(db_session, finished_ago=HOUR)
    fresh = _finished_job(db_session, finished_ago=timedelta(seconds=5))  # its first attempt may be queued
    lost = _lost(db_session)
    assert lost.get(str(job_id)) == 1
    assert str(fresh) not in lost
    assert str(job_id) not in _lost(db_session)  # touched: the next sweep waits again


def test_an_overdue_retry_is_resent_with_the_next_attempt_number(db_session: Session) -> None:
    job_id = _finished_job(db_session, finished_ago=3 * HOUR)
    record_webhook_attempt(session=db_session, job_id=job_id, attempt=4, url="https://example.com/h",
                           event="job.succeeded", delivered=False, status_code=503)
    db_session.flush()
    # Attempt 4 waits 40 s before attempt 5: not overdue now, overdue an hour later.
    assert str(job_id) not in _lost(db_session)
    assert _lost(db_session, now=datetime.now(UTC) + HOUR).get(str(job_id)) == 5


def test_delivered_outside_the_window_or_without_webhook_are_left_alone(db_session: Session) -> None:
    delivered = _finished_job(db_session, finished_ago=HOUR)
    record_webhook_attempt(session=db_session, job_id=delivered, attempt=1, url="https://example.com/h",
                           event="job.succeeded", delivered=True, status_code=200)
    too_old = _finished_job(db_session, finished_ago=timedelta(seconds=webhooks.RETRY_WINDOW_S) + HOUR)
    no_hook = _finished_job(db_session, finished_ago=HOUR, webhook=None)
    failed = _finished_job(db_session, finished_ago=HOUR, status="failed")
    lost = _lost(db_session)
    assert str(failed) in lost  # failures are announced too
    assert not {str(delivered), str(too_old), str(no_hook)} & set(lost)


def test_stalled_running_job_is_replanned(db_session: Session) -> None:
    job_id = _finished_job(db_session, finished_ago=HOUR, status="running")
    job = get_job(session=db_session, job_id=job_id, account_id=None)
    job.finished_at, job.updated_at = None, datetime.now(UTC) - HOUR
    db_session.flush()
    assert (TASK_PLAN, str(job_id)) in reaper.stalled(session=db_session, stall_after=STALL_AFTER)
