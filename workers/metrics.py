"""Metrics of a Celery worker process, served on its own port (``lector worker --metrics-port``).

Task counts and durations by task and outcome come from Celery's signals; the engine metrics
(``lector_synthesis_seconds``, ``lector_audio_seconds_total``, GPU memory) are recorded by the
engines this process loaded and served from the same registry. lector's workers run the solo or
threads pool, so a task runs in the process that serves the port (a prefork pool's children
would not be seen).
"""

from __future__ import annotations

import time
from typing import Any

from celery.signals import task_postrun, task_prerun
from prometheus_client import Counter, Histogram

TASKS = Counter("lector_tasks_total", "Celery tasks run by this worker", ["task", "state"])
TASK_SECONDS = Histogram(
    "lector_task_seconds", "Wall time of one Celery task", ["task"],
    buckets=(0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800),
)
_started: dict[str, float] = {}


def _before(task_id: str | None = None, **_: Any) -> None:
    if task_id is not None:
        _started[task_id] = time.perf_counter()


def _after(task_id: str | None = None, task: Any = None, state: str | None = None, **_: Any) -> None:
    name = getattr(task, "name", "unknown")
    TASKS.labels(name, state or "UNKNOWN").inc()
    started = _started.pop(task_id, None) if task_id is not None else None
    if started is not None:
        TASK_SECONDS.labels(name).observe(time.perf_counter() - started)


def serve(port: int, host: str) -> None:
    """Count tasks and serve ``/metrics`` on ``host:port`` from a daemon thread."""
    from prometheus_client import start_http_server

    task_prerun.connect(_before, weak=False)
    task_postrun.connect(_after, weak=False)
    start_http_server(port, addr=host)
