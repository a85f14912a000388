"""A synth host lost on a RabbitMQ farm (``infra/farm``): three hosts in network namespaces (``h1``
cpu and the reaper, ``h2`` and ``h3`` synth) sharing PostgreSQL, Swift and a vhost of their own.

A synth host holding a task vanishes (link down, then SIGKILL: its TCP connections stay half-open,
nobody tells the broker), freezes, or loses PostgreSQL alone. The job still succeeds, its WAV
equals the no-fault render sample for sample, every chunk is billed exactly once, and the job
ends within 90 s of the loss: RabbitMQ requeues the lost task when the host's heartbeats stop.
The voice is joe at zero noise (``tests/fixtures/farm.py``), so two renders can be compared.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from tests.fixtures.farm import FarmStack, rabbitmqctl
from tests.support.farm_books import (
    RABBIT_BOUND_S,
    SMALL_BATCHES,
    Render,
    render,
    revived,
    start_hosts,
    thawed_zombie_harmless,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def rabbit_farm(make_farm) -> Iterator[FarmStack]:  # type: ignore[no-untyped-def]
    yield start_hosts(make_farm("rabbitmq", **SMALL_BATCHES))


@pytest.fixture(scope="module")
def reference(rabbit_farm: FarmStack, pg_url: str) -> Render:
    """The book rendered with every host up."""
    return render(rabbit_farm, pg_url)

# The host killed last: a killed host's worker must be started again (torch, the voice, Celery:
# ~5 s of CPU) before another test can use it, and after the last test nothing needs it. Each
# test still brings back the hosts it needs (``revived``), so any of them runs alone or in any order.


def test_rabbitmq_frozen_host_thaws_as_a_harmless_zombie(rabbit_farm: FarmStack, reference: Render, pg_url: str) -> None:
    """A synth host frozen mid-task (SIGSTOP) looks dead to RabbitMQ once its heartbeats stop: the
    task goes to another host and the book ends. Thawed, the zombie finishes the task it held; it
    must write nothing over the chunks another host already stored, bill nothing twice, and leave
    the finished file alone."""
    revived(rabbit_farm, "h2")
    victim = "h3"
    try:
        faulted = render(rabbit_farm, pg_url, victim=victim, fault=rabbit_farm.farm.freeze)
        assert faulted.lost_to_end_s is not None
        print(f"\nfarm rabbitmq synth host frozen: freeze to job end {faulted.lost_to_end_s:.1f} s")  # noqa: T201
        assert faulted.frames == reference.frames
        thawed_zombie_harmless(rabbit_farm, pg_url, faulted, reference, victim)
    finally:
        rabbit_farm.farm.thaw(victim)  # also when the book failed: the next tests need the host


def test_rabbitmq_synth_host_cut_from_postgresql_only(rabbit_farm: FarmStack, reference: Render, pg_url: str) -> None:
    """A synth host loses PostgreSQL alone (its packets to it dropped) just as it takes a task; the
    broker still hears it. Its database calls fail within seconds (``store.db.session``'s TCP
    timeouts), the task is retried through the broker, another host does it, and the book ends."""
    revived(rabbit_farm, "h2")
    victim = "h2"
    port = int(urlsplit(rabbit_farm.local_env["LECTOR_DATABASE_URL"]).port or 5432)
    try:
        faulted = render(rabbit_farm, pg_url, victim=victim, fault=lambda host: rabbit_farm.farm.cut(host, port))
    finally:
        rabbit_farm.farm.mend(victim)
    assert faulted.lost_to_end_s is not None
    print(f"\nfarm rabbitmq synth host cut from postgresql: cut to job end {faulted.lost_to_end_s:.1f} s")  # noqa: T201
    assert faulted.frames == reference.frames
    assert faulted.lost_to_end_s < RABBIT_BOUND_S


def test_rabbitmq_synth_host_lost_mid_book(rabbit_farm: FarmStack, reference: Render, pg_url: str) -> None:
    revived(rabbit_farm, "h2")
    faulted = render(rabbit_farm, pg_url, victim="h2")
    assert faulted.lost_to_end_s is not None
    print(f"\nfarm rabbitmq synth host killed: loss to job end {faulted.lost_to_end_s:.1f} s")  # noqa: T201
    assert faulted.frames == reference.frames  # sample for sample
    assert faulted.lost_to_end_s < RABBIT_BOUND_S


def test_rabbitmq_queues_are_quorum_queues(rabbit_farm: FarmStack, reference: Render) -> None:
    """What the workers and the sender declared on the farm's vhost (after a book went through)."""
    vhost = rabbit_farm.broker_url.rsplit("/", 1)[1]
    listed = dict(line.split("\t")[:2] for line in rabbitmqctl("list_queues", "-p", vhost, "name", "type").splitlines()
                  if "\t" in line)
    assert listed.get("synth") == "quorum" and listed.get("cpu") == "quorum", listed
