"""The Celery app's configuration and the names of lector's tasks.

The scheduler owns the canvas: which task runs on which queue and in what order. Workers import
``make_celery`` and register the task bodies under the names below; the facade and the scheduler
only ever ``send_task`` by name, so neither imports the workers (or torch) to enqueue work.

Crash safety comes from configuration, not luck: late acks with reject-on-worker-lost redeliver
a killed worker's task; prefetch 1 keeps a worker from hoarding; the visibility timeout is longer
than any task; and the unacked-restore interval is short, since kombu otherwise waits about 100 s
before it notices a lost task.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from celery import Celery

TASK_PLAN: Final = "lector.plan"
TASK_SYNTHESIZE: Final = "lector.synthesize"
TASK_ASSEMBLE: Final = "lector.assemble"
TASK_ASSEMBLE_AHEAD: Final = "lector.assemble_ahead"
TASK_WEBHOOK: Final = "lector.deliver_webhook"
TASK_REAP: Final = "lector.reap"
TASK_EXPIRE: Final = "lector.expire"
TASK_QA_CHECK: Final = "lector.qa_check"
TASK_QA_REDO: Final = "lector.qa_redo"

QUEUE_CPU: Final = "cpu"
QUEUE_SYNTH: Final = "synth"

ROUTES: Final[dict[str, str]] = {
    TASK_PLAN: QUEUE_CPU,
    TASK_SYNTHESIZE: QUEUE_SYNTH,
    TASK_ASSEMBLE: QUEUE_CPU,
    TASK_ASSEMBLE_AHEAD: QUEUE_CPU,
    TASK_WEBHOOK: QUEUE_CPU,
    TASK_REAP: QUEUE_CPU,
    TASK_EXPIRE: QUEUE_CPU,
    TASK_QA_CHECK: QUEUE_CPU,  # speech recognition: never in the synth worker's way
    TASK_QA_REDO: QUEUE_SYNTH,  # a second rendering needs the engine
}
EXPIRE_EVERY_S: Final = 3600.0


def make_celery(broker_url: str, *, visibility_timeout_s: int = 3600, name: str = "lector") -> Celery:
    """A configured Celery app; no connection is opened until a task is sent or a worker starts."""
    app = Celery(name, broker=broker_url)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=QUEUE_CPU,
        task_routes={task: {"queue": queue} for task, queue in ROUTES.items()},
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        broker_transport_options={
            "visibility_timeout": visibility_timeout_s,
            "unacked_restore_interval": 1,
            "unacked_restore_throttle": 1,
        },
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        task_serializer="json",
        accept_content=["json"],
        timezone="UTC",
        beat_schedule={
            "reap-stalled-jobs": {"task": TASK_REAP, "schedule": 30.0},
            "expire-old-jobs": {"task": TASK_EXPIRE, "schedule": EXPIRE_EVERY_S},
        },
    )
    return app


@dataclass(frozen=True, slots=True)
class Message:
    """A task to send: what ``scheduler.lifecycle`` decides, and the adapters carry out after the
    transaction that decided it has committed (a message sent before could name a row that a
    rollback then removes)."""

    task: str
    args: tuple[Any, ...] = ()
    countdown: float | None = None


@dataclass(slots=True)
class Dispatcher:
    """Sends tasks by name. Callers send only after their transaction committed."""

    app: Celery

    def send(self, task: str, *args: Any, countdown: float | None = None) -> None:
        self.app.send_task(task, args=list(args), queue=ROUTES[task], countdown=countdown)

    def send_all(self, messages: list[Message]) -> None:
        """Carry out what the lifecycle decided, in order."""
        for message in messages:
            self.send(message.task, *message.args, countdown=message.countdown)
