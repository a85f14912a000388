"""Each Celery task runs with its task id and job id bound for its log lines
(``scheduler.log_context``). Connected by ``lector.worker.make_worker_app``; every job task takes the job id first."""

from __future__ import annotations

import contextvars
from typing import Any

from celery.signals import task_postrun, task_prerun

from scheduler import log_context

_tokens: dict[str, contextvars.Token[Any]] = {}


def _job_id(args: Any, kwargs: Any) -> str | None:
    if kwargs and kwargs.get("job_id"):
        return str(kwargs["job_id"])
    return str(args[0]) if args else None


def bind_task(task_id: str | None = None, args: Any = None, kwargs: Any = None, **_: Any) -> None:
    if task_id is not None:
        _tokens[task_id] = log_context.start(task_id=task_id, job_id=_job_id(args, kwargs))


def unbind_task(task_id: str | None = None, **_: Any) -> None:
    token = _tokens.pop(task_id, None) if task_id is not None else None
    if token is not None:
        try:
            log_context.reset(token)
        except ValueError:  # set in another context (a thread pool): that context ends with the task
            pass


def connect() -> None:
    task_prerun.connect(bind_task, weak=False)
    task_postrun.connect(unbind_task, weak=False)
