"""A worker's send through a broker that is coming back: ``Dispatcher`` with ``PATIENT_RETRY``
against the machine's RabbitMQ behind a front (socat) that, while the broker is away, accepts
each connection and closes it at once, as a load balancer, a Kubernetes Service or the farm's
forwarder does. Kombu raises its ``OperationalError`` within seconds there, whatever its retry
policy says; the send must wait for the broker as long as ``PATIENT_RETRY`` promises (a send
that gives up after its step committed loses the batch it handed on until the reaper)."""

from __future__ import annotations

import subprocess
import threading
import time
import uuid
from collections.abc import Iterator

import pytest

from scheduler.queue import PATIENT_RETRY, Dispatcher, make_celery
from tests.fixtures.farm import rabbitmqctl, wait_for
from tests.support.servers import free_port

pytestmark = pytest.mark.integration


def _front(port: int, target: int) -> subprocess.Popen[bytes]:
    """socat on 127.0.0.1:``port`` to 127.0.0.1:``target`` (a closed port: accept, then close)."""
    return subprocess.Popen(
        ["socat", f"TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork", f"TCP:127.0.0.1:{target}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )


@pytest.fixture
def vhost() -> Iterator[str]:
    name = f"lector-patient-{uuid.uuid4().hex[:8]}"
    rabbitmqctl("add_vhost", name)
    rabbitmqctl("set_permissions", "-p", name, "guest", ".*", ".*", ".*")
    try:
        yield name
    finally:
        subprocess.run(["rabbitmqctl", "-q", "delete_vhost", name], capture_output=True, timeout=60, check=False)


def test_a_worker_send_waits_for_a_broker_that_accepts_and_closes(vhost: str) -> None:
    port = free_port()
    front = _front(port, free_port())  # the broker is away
    fronts = [front]
    away_s = 12.0

    def broker_back() -> None:
        time.sleep(away_s)
        front.kill()
        front.wait()
        fronts.append(_front(port, 5672))

    app = make_celery(f"amqp://guest:guest@127.0.0.1:{port}/{vhost}")
    try:
        time.sleep(0.3)
        threading.Thread(target=broker_back, daemon=True).start()
        started = time.monotonic()
        Dispatcher(app, PATIENT_RETRY).send("lector.synthesize", "job", [1, 2])
        waited = time.monotonic() - started
    finally:
        for proc in fronts:
            proc.kill()
            proc.wait()
    assert waited >= away_s - 1  # it waited for the broker, and the message is there
    wait_for(lambda: any(line.split("\t")[:2] == ["synth", "1"]
                         for line in rabbitmqctl("list_queues", "-p", vhost, "name", "messages").splitlines()),
             30, lambda: rabbitmqctl("list_queues", "-p", vhost, "name", "messages"), poll_s=1)
