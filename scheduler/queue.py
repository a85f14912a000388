"""The Celery app's configuration and the names of lector's tasks.

The scheduler owns the canvas: which task runs on which queue and in what order. Workers import
``make_celery`` and register the task bodies under the names below; the facade and the scheduler
only ever ``send_task`` by name, so neither imports the workers (or torch) to enqueue work.

Crash safety comes from configuration, not luck: late acks with reject-on-worker-lost redeliver
a killed worker's task; prefetch 1 keeps a worker from hoarding; the visibility timeout is longer
than any task; and the unacked-restore interval is short, since kombu otherwise waits about 100 s
before it notices a lost task.

Two brokers (``docs/scaling.md`` says which to choose): Redis, the embedded default for one
machine, and RabbitMQ (``amqp://``) for a farm of hosts. On RabbitMQ the ``synth``, ``cpu`` and
``live`` queues are quorum queues (replicated, and they requeue the unacknowledged messages of a connection
whose heartbeats stop, so a vanished host's task comes back in seconds, not after the reaper's
stall timeout); publishes wait for the broker's confirm, so a message sent after a commit is on
the broker before the sender goes on. The queues' exchanges are topic exchanges because Celery's
native delayed delivery (a countdown on a quorum queue: the webhook's retries) needs them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

from celery import Celery
from kombu.entity import Exchange, Queue
from kombu.exceptions import OperationalError

TASK_PLAN: Final = "lector.plan"
TASK_SYNTHESIZE: Final = "lector.synthesize"
TASK_ASSEMBLE: Final = "lector.assemble"
TASK_ASSEMBLE_AHEAD: Final = "lector.assemble_ahead"
TASK_WEBHOOK: Final = "lector.deliver_webhook"
TASK_REAP: Final = "lector.reap"
TASK_EXPIRE: Final = "lector.expire"
TASK_QA_CHECK: Final = "lector.qa_check"
TASK_QA_REDO: Final = "lector.qa_redo"
TASK_HLS: Final = "lector.hls_segments"

QUEUE_CPU: Final = "cpu"
QUEUE_SYNTH: Final = "synth"
#: The live playlist's segments, apart from ``cpu``: on one ``cpu`` worker a new job's plan waited
#: behind segment tasks (one is sent after every engine call) and segments waited behind an
#: assembly of minutes, so the playlist stalled just when a listener had caught up. A worker of
#: its own takes them (``lector run``'s ``worker-live``, compose's and k8s' ``worker-live``).
QUEUE_LIVE: Final = "live"
#: Every queue, in the order a worker that takes them all lists them.
QUEUES: Final = (QUEUE_SYNTH, QUEUE_CPU, QUEUE_LIVE)

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
    TASK_HLS: QUEUE_LIVE,  # AAC encoding for the live playlist: in neither the synth nor the cpu queue's way
}
EXPIRE_EVERY_S: Final = 3600.0
#: Seconds between AMQP heartbeats: RabbitMQ drops a silent connection (and requeues what it held)
#: after about two of them. Workers doing synthesis must run a pool that keeps the consumer's loop
#: free (``threads``), or a long task would starve the heartbeats and look like a dead host.
DEFAULT_HEARTBEAT_S: Final = 10
AMQP_SCHEMES: Final = ("amqp", "amqps", "pyamqp")


def is_amqp(broker_url: str) -> bool:
    """Whether ``broker_url`` names RabbitMQ (AMQP) rather than Redis."""
    return broker_url.split("://", 1)[0].split("+", 1)[0] in AMQP_SCHEMES


def quorum_queues() -> list[Queue]:
    """Every queue as a quorum queue on a topic exchange of its own name."""
    return [
        Queue(  # type: ignore[no-untyped-call]  # kombu's constructors carry no annotations
            name, Exchange(name, type="topic"), routing_key=name,  # type: ignore[no-untyped-call]
            queue_arguments={"x-queue-type": "quorum"},
        )
        for name in QUEUES
    ]


def broker_settings(broker_url: str, *, visibility_timeout_s: int, heartbeat_s: int) -> dict[str, object]:
    """What differs between the two brokers. Redis: the visibility timeout (longer than any task)
    and a short unacked-restore interval. RabbitMQ: quorum queues, publisher confirms, heartbeats,
    and per-consumer prefetch (quorum queues refuse a global QoS)."""
    if not is_amqp(broker_url):
        return {
            "broker_transport_options": {
                "visibility_timeout": visibility_timeout_s,
                "unacked_restore_interval": 1,
                "unacked_restore_throttle": 1,
            },
        }
    return {
        "task_queues": quorum_queues(),
        "task_create_missing_queue_type": "quorum",
        "broker_native_delayed_delivery_queue_type": "quorum",
        "broker_transport_options": {"confirm_publish": True},
        "broker_heartbeat": heartbeat_s,
        "worker_detect_quorum_queues": True,
    }


def make_celery(
    broker_url: str, *, visibility_timeout_s: int = 3600, heartbeat_s: int = DEFAULT_HEARTBEAT_S,
    name: str = "lector",
) -> Celery:
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
    app.conf.update(broker_settings(broker_url, visibility_timeout_s=visibility_timeout_s, heartbeat_s=heartbeat_s))
    return app


@dataclass(frozen=True, slots=True)
class Message:
    """A task to send: what ``scheduler.lifecycle`` decides, and the adapters carry out after the
    transaction that decided it has committed (a message sent before could name a row that a
    rollback then removes)."""

    task: str
    args: tuple[object, ...] = ()
    countdown: float | None = None


#: How long a worker keeps trying to send: through a broker's restart (RabbitMQ takes some 20 s to
#: come back). A step's messages are decided after its transaction committed, and one that is
#: never sent is work nobody does until the reaper finds the job stalled (minutes). Kombu's
#: default gives up after about a second.
PATIENT_RETRY: Final[dict[str, float]] = {
    "max_retries": 45, "interval_start": 0.5, "interval_step": 0.5, "interval_max": 2.0,
}


def patience_s(policy: dict[str, float]) -> float:
    """How long ``policy`` (kombu's retry policy) waits in all: the sum of its intervals."""
    total, interval = 0.0, policy.get("interval_start", 0.0)
    for _ in range(int(policy.get("max_retries", 0))):
        total += interval
        interval = min(interval + policy.get("interval_step", 0.0), policy.get("interval_max", interval))
    return total


@dataclass(slots=True)
class Dispatcher:
    """Sends tasks by name. Callers send only after their transaction committed. ``retry_policy``:
    kombu's, for how long a send waits for the broker (``PATIENT_RETRY`` in workers; the API
    keeps kombu's short default, a request must not hang on a broker that is down).

    Kombu keeps its policy only while the broker refuses connections. A broker behind a front
    that accepts and then closes them while the broker is away (a load balancer, a Kubernetes
    Service, the farm harness's forwarder) makes kombu raise ``OperationalError`` within seconds:
    the send would give up after its step committed, and the batch it handed on would wait for
    the reaper (seen on the farm, the RabbitMQ restart test). So a patient send tries again
    until the policy's whole time has passed (``patience_s``)."""

    app: Celery
    retry_policy: dict[str, float] | None = None

    def send(self, task: str, *args: object, countdown: float | None = None) -> None:
        if self.retry_policy is None:
            self.app.send_task(task, args=list(args), queue=ROUTES[task], countdown=countdown)
            return
        deadline = time.monotonic() + patience_s(self.retry_policy)
        while True:
            try:
                self.app.send_task(task, args=list(args), queue=ROUTES[task], countdown=countdown,
                                   retry=True, retry_policy=self.retry_policy)
                return
            except OperationalError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(self.retry_policy.get("interval_max", 1.0))

    def send_all(self, messages: list[Message]) -> None:
        """Carry out what the lifecycle decided, in order."""
        for message in messages:
            self.send(message.task, *message.args, countdown=message.countdown)
