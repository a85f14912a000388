"""scheduler/queue.py: the Celery app's broker settings, one set per broker.

RabbitMQ (the farm's broker) must give quorum queues on topic exchanges (native delayed delivery
for the webhook's countdowns), publisher confirms and heartbeats; Redis keeps its visibility
timeout and short unacked-restore interval. Both keep the crash-safety settings."""

from __future__ import annotations

import pytest

from scheduler.queue import QUEUE_CPU, QUEUE_LIVE, QUEUE_SYNTH, QUEUES, ROUTES, is_amqp, make_celery

AMQP = "amqp://guest:guest@10.210.0.1:5672/farm"
REDIS = "redis://127.0.0.1:6379/0"


@pytest.mark.parametrize(("url", "amqp"), [(AMQP, True), ("pyamqp://h//", True), ("amqps://h/v", True),
                                          (REDIS, False), ("rediss://h:6380/0", False), ("unix:///run/r.sock", False)])
def test_the_broker_is_told_by_the_scheme(url: str, amqp: bool) -> None:
    assert is_amqp(url) is amqp


def test_rabbitmq_gets_quorum_queues_confirms_and_heartbeats() -> None:
    conf = make_celery(AMQP, heartbeat_s=7).conf
    queues = {q.name: q for q in conf.task_queues}
    assert set(queues) == {QUEUE_CPU, QUEUE_SYNTH, QUEUE_LIVE} == set(QUEUES) == set(ROUTES.values())
    for name, queue in queues.items():
        assert queue.queue_arguments == {"x-queue-type": "quorum"}
        assert (queue.exchange.name, queue.exchange.type, queue.routing_key) == (name, "topic", name)
    assert conf.broker_transport_options == {"confirm_publish": True}
    assert conf.broker_heartbeat == 7
    assert conf.task_create_missing_queue_type == "quorum"


@pytest.mark.parametrize("url", [AMQP, REDIS])
def test_both_brokers_keep_the_crash_safety_settings(url: str) -> None:
    conf = make_celery(url).conf
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1


def test_redis_keeps_its_visibility_timeout_and_quick_restore() -> None:
    conf = make_celery(REDIS, visibility_timeout_s=1234).conf
    assert conf.broker_transport_options == {
        "visibility_timeout": 1234, "unacked_restore_interval": 1, "unacked_restore_throttle": 1,
    }
    assert not conf.task_queues


def test_a_task_sent_to_rabbitmq_is_routed_to_its_quorum_queue() -> None:
    """What ``send_task`` resolves for a synth task: the declared quorum queue, not a plain one."""
    app = make_celery(AMQP)
    queue = app.amqp.queues[ROUTES["lector.synthesize"]]
    assert queue.queue_arguments == {"x-queue-type": "quorum"} and queue.exchange.type == "topic"


class _RecordingApp:
    """Records what ``send_task`` was given (the broker itself is the e2e farm tests' business)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, object]]] = []

    def send_task(self, name: str, **options: object) -> None:
        self.sent.append((name, options))


def test_a_workers_dispatcher_keeps_trying_through_a_broker_restart() -> None:
    """RabbitMQ takes about 20 s to come back: a worker's send must outlast that (kombu's default
    gives up after about a second), while the API's dispatcher keeps kombu's default."""
    from scheduler.queue import PATIENT_RETRY, Dispatcher

    patient, api = _RecordingApp(), _RecordingApp()
    Dispatcher(patient, PATIENT_RETRY).send("lector.synthesize", "job", [1, 2])  # type: ignore[arg-type]
    Dispatcher(api).send("lector.plan", "job")  # type: ignore[arg-type]
    (name, options), = patient.sent
    assert name == "lector.synthesize" and options["queue"] == QUEUE_SYNTH
    assert options["retry"] is True and options["retry_policy"] == PATIENT_RETRY
    waits, interval = 0.0, PATIENT_RETRY["interval_start"]
    for _ in range(int(PATIENT_RETRY["max_retries"])):
        waits += interval
        interval = min(interval + PATIENT_RETRY["interval_step"], PATIENT_RETRY["interval_max"])
    assert waits >= 60
    assert "retry_policy" not in api.sent[0][1]

