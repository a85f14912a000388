"""Thin Celery tasks: ids in, one scheduler call, then the next step enqueued.

Every task is idempotent (see ``scheduler``) and acknowledged late, so a worker killed mid-task
has its task redelivered and the repeat finds the finished parts done. Transient failures of
PostgreSQL, the object store or Redis are retried with backoff; anything else fails the job.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import Any

import redis
from celery import Task

from scheduler import assembly, delivery, planning, reaper, retention, synthesis, webhooks
from scheduler.errors import job_error
from scheduler.parallel import BrokenProcessPool
from scheduler.queue import (
    TASK_ASSEMBLE,
    TASK_EXPIRE,
    TASK_PLAN,
    TASK_REAP,
    TASK_SYNTHESIZE,
    TASK_WEBHOOK,
    Dispatcher,
)
from store.db import jobs as job_repo
from store.errors import DatabaseUnavailable, ObjectStoreUnavailable
from workers import resources
from workers.app import celery_app, settings

log = logging.getLogger("lector.tasks")

# BrokenProcessPool: an assembly worker process died (the OOM killer); the retry gets a new pool.
TRANSIENT = (
    DatabaseUnavailable, ObjectStoreUnavailable, redis.ConnectionError, ConnectionError, TimeoutError, BrokenProcessPool,
)
RETRY = {
    "autoretry_for": TRANSIENT,
    "retry_backoff": 2,
    "retry_backoff_max": 60,
    "retry_jitter": True,
    "max_retries": None,  # the reaper and the job's own deadline bound it, not a count
    "acks_late": True,
}


def _res() -> resources.Resources:
    return resources.get(settings, Dispatcher(celery_app))


def _fail(job_id: uuid.UUID, exc: BaseException) -> None:
    res = _res()
    with res.sessions() as session:
        failed = job_repo.set_job_status(
            session=session, job_id=job_id, status="failed",
            expected=("queued", "planning", "running", "assembling"), error=job_error(exc),
        )
    if failed:
        res.dispatcher.send(TASK_WEBHOOK, str(job_id), 1)


class JobTask(Task):  # type: ignore[misc]
    """Marks the job failed when a task gives up with a non-transient error."""

    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        if args and not isinstance(exc, TRANSIENT):
            log.error("job %s failed in %s", args[0], self.name, exc_info=exc)
            _fail(uuid.UUID(args[0]), exc)


@celery_app.task(name=TASK_PLAN, base=JobTask, **RETRY)
def plan(job_id: str) -> int:
    res = _res()
    jid = uuid.UUID(job_id)
    with res.sessions() as session:
        batches = planning.plan_job(
            session=session, objects=res.objects, job_id=jid,
            batch_chars=res.settings.job_batch_chars, window=res.settings.job_batch_window,
        )
    for batch in batches:
        res.dispatcher.send(TASK_SYNTHESIZE, job_id, batch)
    if not batches:
        res.dispatcher.send(TASK_ASSEMBLE, job_id)  # everything was already done (a resumed job)
    return len(batches)


@celery_app.task(name=TASK_SYNTHESIZE, base=JobTask, **RETRY)
def synthesize(job_id: str, indices: list[int]) -> int:
    res = _res()
    result = synthesis.synthesize_batch(
        sessions=res.sessions, objects=res.objects, synthesizer=res.synthesizer,
        catalog=res.catalog, job_id=uuid.UUID(job_id), indices=indices,
        group_chars=res.settings.synth_group_chars,
    )
    if result.complete:
        res.dispatcher.send(TASK_ASSEMBLE, job_id)
    elif not result.canceled:
        # Fairness: a job keeps only a few batches queued; each finished one hands on the next.
        with res.sessions() as session:
            following = planning.next_batches(session=session, objects=res.objects, job_id=uuid.UUID(job_id))
        for batch in following:
            res.dispatcher.send(TASK_SYNTHESIZE, job_id, batch)
    return result.synthesized


@celery_app.task(name=TASK_ASSEMBLE, base=JobTask, **RETRY)
def assemble(job_id: str) -> bool:
    res = _res()
    workers = res.settings.assembly_workers or None
    if assembly.assemble_job(sessions=res.sessions, objects=res.objects, job_id=uuid.UUID(job_id), workers=workers):
        res.dispatcher.send(TASK_WEBHOOK, job_id, 1)
        return True
    return False


@celery_app.task(name=TASK_WEBHOOK, **RETRY)
def deliver_webhook(job_id: str, attempt: int = 1) -> bool:
    res = _res()
    outcome = delivery.deliver(
        sessions=res.sessions, job_id=uuid.UUID(job_id), attempt=attempt,
        audio_url=lambda job: reaper.audio_url(res.objects, job, expires_s=res.settings.s3_presign_seconds),
        allow_private=res.settings.webhook_allow_private, timeout_s=res.settings.webhook_timeout_s,
        max_delay_s=webhooks.delay_cap(res.settings.visibility_timeout_s),
    )
    if outcome.retry_in_s is not None:
        res.dispatcher.send(TASK_WEBHOOK, job_id, attempt + 1, countdown=outcome.retry_in_s)
    return outcome.delivered


@celery_app.task(name=TASK_REAP, **RETRY)
def reap() -> int:
    res = _res()
    stall_after = timedelta(seconds=res.settings.stall_after_s)
    with res.sessions() as session:
        actions = reaper.stalled(session=session, stall_after=stall_after)
        callbacks = reaper.lost_webhooks(
            session=session, stall_after=stall_after,
            max_delay_s=webhooks.delay_cap(res.settings.visibility_timeout_s),
        )
    for task, job_id in actions:
        res.dispatcher.send(task, job_id)
    for job_id, attempt in callbacks:
        res.dispatcher.send(TASK_WEBHOOK, job_id, attempt)
    return len(actions) + len(callbacks)


@celery_app.task(name=TASK_EXPIRE, **RETRY)
def expire() -> int:
    res = _res()
    return retention.expire_all(sessions=res.sessions, objects=res.objects, retention_days=res.settings.retention_days)
