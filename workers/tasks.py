"""Thin Celery tasks: ids in, one ``scheduler.lifecycle`` call, its messages sent.

Every task is idempotent (see ``scheduler``) and acknowledged late, so a worker killed mid-task
has its task redelivered and the repeat finds the finished parts done. Transient failures of
PostgreSQL, the object store or Redis are retried with backoff; anything else fails the job.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, TypeVar

import redis
from celery import Task

from scheduler import lifecycle, retention
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


T = TypeVar("T")


def _run(step: lifecycle.Step[T]) -> T:
    """Send what the step decided (its transactions have committed) and return what it did."""
    _res().dispatcher.send_all(step.messages)
    return step.value


class JobTask(Task):  # type: ignore[misc]
    """Marks the job failed when a task gives up with a non-transient error."""

    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        if args and not isinstance(exc, TRANSIENT):
            log.error("job %s failed in %s: %s", args[0], self.name, exc)
            res = _res()
            res.dispatcher.send_all(lifecycle.fail(sessions=res.sessions, job_id=uuid.UUID(args[0]), error=exc))


@celery_app.task(name=TASK_PLAN, base=JobTask, **RETRY)
def plan(job_id: str) -> int:
    res, s = _res(), settings
    return _run(lifecycle.plan(sessions=res.sessions, objects=res.objects, job_id=uuid.UUID(job_id),
                               batch_chars=s.job_batch_chars, window=s.job_batch_window))


@celery_app.task(name=TASK_SYNTHESIZE, base=JobTask, **RETRY)
def synthesize(job_id: str, indices: list[int]) -> int:
    res = _res()
    return _run(lifecycle.synthesize(
        sessions=res.sessions, objects=res.objects, synthesizer=res.synthesizer, catalog=res.catalog,
        job_id=uuid.UUID(job_id), indices=indices, group_chars=settings.synth_group_chars,
    ))


@celery_app.task(name=TASK_ASSEMBLE, base=JobTask, **RETRY)
def assemble(job_id: str) -> bool:
    res = _res()
    return _run(lifecycle.assemble(sessions=res.sessions, objects=res.objects, job_id=uuid.UUID(job_id),
                                   workers=settings.assembly_workers or None))


@celery_app.task(name=TASK_WEBHOOK, **RETRY)
def deliver_webhook(job_id: str, attempt: int = 1) -> bool:
    res, s = _res(), settings
    return _run(lifecycle.deliver_webhook(
        sessions=res.sessions, objects=res.objects, job_id=uuid.UUID(job_id), attempt=attempt,
        presign_seconds=s.s3_presign_seconds, allow_private=s.webhook_allow_private,
        timeout_s=s.webhook_timeout_s, visibility_timeout_s=s.visibility_timeout_s,
    ))


@celery_app.task(name=TASK_REAP, **RETRY)
def reap() -> int:
    res = _res()
    return _run(lifecycle.reap(sessions=res.sessions, stall_after_s=settings.stall_after_s,
                               visibility_timeout_s=settings.visibility_timeout_s))


@celery_app.task(name=TASK_EXPIRE, **RETRY)
def expire() -> int:
    res = _res()
    return retention.expire_all(sessions=res.sessions, objects=res.objects, retention_days=settings.retention_days)
