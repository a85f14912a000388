"""Thin Celery tasks: ids in, one ``scheduler.lifecycle`` call, its messages sent.

The composition root (``lector.worker``) registers them on its Celery app with ``register``.

Every task is idempotent (see ``scheduler``) and acknowledged late, so a worker killed mid-task
has its task redelivered and the repeat finds the finished parts done. Transient failures of
PostgreSQL, the object store or Redis are retried with backoff; anything else fails the job.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import redis
from celery import Celery, Task
from kombu.exceptions import OperationalError as BrokerUnavailable

from books.parallel import BrokenProcessPool
from scheduler import lifecycle, retention
from scheduler.queue import (
    TASK_ASSEMBLE,
    TASK_ASSEMBLE_AHEAD,
    TASK_EXPIRE,
    TASK_HLS,
    TASK_PLAN,
    TASK_QA_CHECK,
    TASK_QA_REDO,
    TASK_REAP,
    TASK_SYNTHESIZE,
    TASK_WEBHOOK,
)
from store.errors import DatabaseUnavailable, ObjectStoreUnavailable, TransactionConflict
from workers.resources import Resources

log = logging.getLogger("lector.tasks")

# BrokenProcessPool: an assembly worker process died (the OOM killer); the retry gets a new pool.
# BrokerUnavailable: a send gave up on the broker (restarting longer than PATIENT_RETRY): the job
# must not fail for it; the task's delivery comes back when the broker does.
# TransactionConflict: PostgreSQL broke a deadlock by aborting this task's transaction; again, it runs.
TRANSIENT = (
    DatabaseUnavailable, TransactionConflict, ObjectStoreUnavailable, BrokerUnavailable, redis.ConnectionError, ConnectionError,
    TimeoutError, BrokenProcessPool,
)
RETRY = {
    "autoretry_for": TRANSIENT,
    "retry_backoff": 2,
    "retry_backoff_max": 60,
    "retry_jitter": True,
    "max_retries": None,  # the reaper and the job's own deadline bound it, not a count
    "acks_late": True,
}


_resources: Callable[[], Resources] | None = None


def register(app: Celery, resources: Callable[[], Resources]) -> None:
    """Register the tasks on ``app``; ``resources`` gives this process's parts (built on first use)."""
    global _resources
    _resources = resources
    job_tasks: tuple[tuple[str, Callable[..., Any]], ...] = (
        (TASK_PLAN, plan), (TASK_SYNTHESIZE, synthesize), (TASK_ASSEMBLE, assemble), (TASK_ASSEMBLE_AHEAD, assemble_ahead),
        (TASK_QA_CHECK, qa_check), (TASK_QA_REDO, qa_redo),
    )
    for name, body in job_tasks:
        app.task(name=name, base=JobTask, **RETRY)(body)
    # The live playlist is not the job: its failure is logged, and never fails the job.
    other_tasks: tuple[tuple[str, Callable[..., Any]], ...] = (
        (TASK_WEBHOOK, deliver_webhook), (TASK_REAP, reap), (TASK_EXPIRE, expire), (TASK_HLS, hls_segments),
    )
    for name, body in other_tasks:
        app.task(name=name, **RETRY)(body)


def _res() -> Resources:
    if _resources is None:
        raise RuntimeError("workers.tasks.register was not called")
    return _resources()


T = TypeVar("T")


def _run(step: lifecycle.Step[T]) -> T:
    """Send what the step decided (its transactions have committed) and return what it did."""
    _res().dispatcher.send_all(step.messages)
    return step.value


class JobTask(Task):  # type: ignore[misc]
    """Marks the job failed when a task gives up with a non-transient error."""

    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        if args and not isinstance(exc, TRANSIENT):
            log.error("job %s failed in %s", args[0], self.name, exc_info=exc)
            res = _res()
            res.dispatcher.send_all(lifecycle.fail(
                sessions=res.sessions, job_id=uuid.UUID(args[0]), error=exc, window=res.config.account_batch_window,
            ))


def plan(job_id: str) -> int:
    res = _res()
    s = res.config
    return _run(lifecycle.plan(sessions=res.sessions, objects=res.objects, job_id=uuid.UUID(job_id),
                               batch_chars=s.job_batch_chars, window=s.account_batch_window))


def synthesize(job_id: str, indices: list[int]) -> int:
    res = _res()
    return _run(lifecycle.synthesize(
        sessions=res.sessions, objects=res.objects, synthesizer=res.synthesizer, catalog=res.catalog,
        job_id=uuid.UUID(job_id), indices=indices, group_chars=res.config.synth_group_chars,
        on_billed=res.on_billed, window=res.config.account_batch_window,
        assemble_ahead=res.config.assembly_ahead, live=res.config.live_playlist, send=res.dispatcher.send_all,
    ))


def qa_check(job_id: str, indices: list[int], attempt: int = 1) -> int:
    res = _res()
    return _run(lifecycle.qa_check(sessions=res.sessions, objects=res.objects, recognizer=res.recognizer,
                                   job_id=uuid.UUID(job_id), indices=indices, attempt=attempt))


def qa_redo(job_id: str, indices: list[int]) -> int:
    res = _res()
    return _run(lifecycle.qa_redo(sessions=res.sessions, objects=res.objects, synthesizer=res.synthesizer,
                                  catalog=res.catalog, job_id=uuid.UUID(job_id), indices=indices))


def assemble(job_id: str) -> bool:
    res = _res()
    return _run(lifecycle.assemble(sessions=res.sessions, objects=res.objects, job_id=uuid.UUID(job_id),
                                   workers=res.config.assembly_workers or None, live=res.config.live_playlist))


def assemble_ahead(job_id: str) -> int:
    res = _res()
    return _run(lifecycle.assemble_ahead(sessions=res.sessions, objects=res.objects, job_id=uuid.UUID(job_id),
                                         workers=res.config.assembly_workers or None))


def hls_segments(job_id: str) -> int:
    res = _res()
    if not res.config.live_playlist:
        return 0  # sent before the setting changed
    return _run(lifecycle.hls_segments(sessions=res.sessions, objects=res.objects, job_id=uuid.UUID(job_id)))


def deliver_webhook(job_id: str, attempt: int = 1) -> bool:
    res = _res()
    s = res.config
    return _run(lifecycle.deliver_webhook(
        sessions=res.sessions, objects=res.objects, job_id=uuid.UUID(job_id), attempt=attempt,
        presign_seconds=s.presign_seconds, allow_private=s.webhook_allow_private,
        timeout_s=s.webhook_timeout_s, visibility_timeout_s=s.visibility_timeout_s,
    ))


def reap() -> int:
    res = _res()
    return _run(lifecycle.reap(sessions=res.sessions, stall_after_s=res.config.stall_after_s,
                               visibility_timeout_s=res.config.visibility_timeout_s))


def expire() -> int:
    res = _res()
    return retention.expire_all(sessions=res.sessions, objects=res.objects, retention_days=res.config.retention_days)
