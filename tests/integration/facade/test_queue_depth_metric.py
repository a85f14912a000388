"""``lector_queue_depth`` counts the tasks where the broker keeps them: on RabbitMQ the queues of
the broker's vhost (it used to read Redis there and say 0), on Redis the broker's own database
(which need not be ``LECTOR_REDIS_URL``'s)."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.orm import Session, sessionmaker

from facade.metrics import QUEUE_DEPTH, JobCollector
from scheduler.queue import QUEUE_CPU, QUEUE_SYNTH, TASK_PLAN, TASK_SYNTHESIZE, Dispatcher, make_celery
from scheduler.queue_depth import AmqpDepths, QueueDepths, RedisDepths
from tests.support.services import sessions_of

pytestmark = pytest.mark.integration


@pytest.fixture
def rabbit_vhost() -> Iterator[str]:
    """A vhost of the test's own on the machine's RabbitMQ, its URL."""
    vhost = f"lector-depth-{uuid.uuid4().hex[:10]}"
    for argv in (["add_vhost", vhost], ["set_permissions", "-p", vhost, "guest", ".*", ".*", ".*"]):
        subprocess.run(["rabbitmqctl", "-q", *argv], check=True, capture_output=True, timeout=60)
    try:
        yield f"amqp://guest:guest@127.0.0.1:5672/{vhost}"
    finally:
        subprocess.run(["rabbitmqctl", "-q", "delete_vhost", vhost], capture_output=True, timeout=60, check=False)


def _scraped_depths(factory: sessionmaker[Session], depths: QueueDepths) -> dict[str, float]:
    registry = CollectorRegistry()
    registry.register(JobCollector(sessions_of(factory), depths, (QUEUE_SYNTH, QUEUE_CPU), 300.0))
    text = generate_latest(registry).decode()
    return {sample.labels["queue"]: sample.value for family in text_string_to_metric_families(text)
            if family.name == QUEUE_DEPTH for sample in family.samples}


def _send(broker_url: str, synth: int, cpu: int) -> None:
    app = make_celery(broker_url)
    dispatcher = Dispatcher(app)
    for _ in range(synth):
        dispatcher.send(TASK_SYNTHESIZE, str(uuid.uuid4()), [0])
    for _ in range(cpu):
        dispatcher.send(TASK_PLAN, str(uuid.uuid4()))
    app.close()


def test_rabbitmq_depth_is_the_brokers(db_sessionmaker: sessionmaker[Session], rabbit_vhost: str) -> None:
    depths = AmqpDepths(rabbit_vhost)
    assert _scraped_depths(db_sessionmaker, depths) == {QUEUE_SYNTH: 0, QUEUE_CPU: 0}  # not declared yet
    _send(rabbit_vhost, synth=5, cpu=2)
    assert _scraped_depths(db_sessionmaker, depths) == {QUEUE_SYNTH: 5, QUEUE_CPU: 2}


def test_rabbitmq_unreachable_leaves_the_gauge_out(db_sessionmaker: sessionmaker[Session]) -> None:
    """A broker that does not answer costs the scrape its depth series, not the scrape."""
    from tests.support.servers import free_port

    assert _scraped_depths(db_sessionmaker, AmqpDepths(f"amqp://guest:guest@127.0.0.1:{free_port()}//")) == {}


def test_redis_depth_is_the_brokers_database(db_sessionmaker: sessionmaker[Session], spare_redis_url: str) -> None:
    depths = RedisDepths(spare_redis_url)
    try:
        _send(spare_redis_url, synth=3, cpu=1)
        assert _scraped_depths(db_sessionmaker, depths) == {QUEUE_SYNTH: 3, QUEUE_CPU: 1}
    finally:
        depths.close()
