"""The assembly host and the broker itself lost on a Redis farm (``infra/farm``): three hosts in
network namespaces sharing PostgreSQL, Swift and a Redis server of the module's own as their
broker, which the broker's restart crashes.

On Redis nothing tells anyone that a host died or that the broker forgot its queues: the reaper
(every 30 s, after ``LECTOR_STALL_AFTER_S`` without progress, here 20 s) re-sends the job's
missing batches, or its assembly. In each case the job succeeds within that bound
(docs/scaling.md), its WAV equals the no-fault render sample for sample, and every chunk is
billed exactly once.

One farm for the module, the broker's restart included (the last test: the crash empties the
server, and nothing comes after it): a second farm for it cost three more hosts' worker start-ups
(torch, the voice, Celery; ~5 s of CPU each) beside the suite's workers. A Redis of the module's
own serves as a leased database of the machine's would (no persistence, as ``make run``'s).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fixtures.farm import FarmStack
from tests.support.farm_books import REDIS_STALL_S, SMALL_BATCHES, Render, redis_bound_s, render

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TIMEOUT_S = 420  # how long a faulted render may take before the test fails (far above the bound)


@pytest.fixture(scope="module")
def redis_farm(make_farm) -> Iterator[FarmStack]:  # type: ignore[no-untyped-def]
    """``h1`` cpu, ``h2`` and ``h3`` synth; the reaper runs on ``h3``'s synth worker, so that it
    outlives the cpu host's loss."""
    farm = make_farm("own-redis", **SMALL_BATCHES, LECTOR_STALL_AFTER_S=str(REDIS_STALL_S))
    farm.start_worker("h1", "cpu", "cpu")
    farm.start_worker("h2", "synth", "synth")
    farm.start_worker("h3", "synth", "synth", beat=True)
    try:
        yield farm
    finally:
        farm.farm.down()  # the workers before their broker (make_farm crashes it afterwards)


@pytest.fixture(scope="module")
def reference(redis_farm: FarmStack, pg_url: str) -> Render:
    """The book rendered with every host up."""
    return render(redis_farm, pg_url)


def test_redis_assembly_host_lost_mid_assembly_waits_for_the_reaper(
    redis_farm: FarmStack, reference: Render, pg_url: str,
) -> None:
    """The cpu host assembling the book vanishes: the reaper re-sends ``assemble``, which waits for
    the dead host's PostgreSQL session (holding the job's assembly lock) to be ended by the
    server's probes (``store.db.session``). The cpu worker that takes it starts on ``h3`` as
    ``h1`` dies (so that ``h1`` is sure to be the one assembling; it is ready long before the
    reaper's stall time)."""

    def kill_and_replace(host: str) -> None:
        redis_farm.farm.kill(host)
        redis_farm.start_worker("h3", "cpu", "cpu")

    faulted = render(redis_farm, pg_url, victim="h1", assembly=True, fault=kill_and_replace, timeout_s=TIMEOUT_S)
    assert faulted.lost_to_end_s is not None
    print(f"\nfarm redis assembly host ({faulted.struck}) killed: loss to job end {faulted.lost_to_end_s:.1f} s"  # noqa: T201
          f" (bound {redis_bound_s(reference):.0f} s)")
    assert faulted.frames == reference.frames
    assert faulted.lost_to_end_s < redis_bound_s(reference)


def test_redis_broker_restarted_mid_book(redis_farm: FarmStack, reference: Render, pg_url: str) -> None:
    """The farm's Redis (the module's own server, without persistence, as ``make run``'s)
    crashes (SIGKILL) just as a synth host takes a task, and starts again empty: the queued
    batches and those handed out are gone. The workers reconnect, the tasks that were running
    finish and hand on what they can, and the reaper (on ``h3``) re-sends the rest. After the
    assembly test the cpu worker is ``h3``'s (``h1`` stays dead, not started again: one cpu
    worker is all a book needs)."""
    farm = redis_farm
    assert farm.redis is not None
    broker = farm.redis

    def restart(_host: str) -> None:
        broker.crash()
        broker.start()

    faulted = render(farm, pg_url, victim="h2", fault=restart, timeout_s=TIMEOUT_S)
    # The fault-free time on this farm as loaded now: the reference was rendered minutes before,
    # and beside the parallel suite this machine's load swings (CI once read 112 s against a
    # bound of 102 s from a 26 s reference).
    after = render(farm, pg_url)
    assert faulted.lost_to_end_s is not None
    bound = redis_bound_s(reference, after)
    print(f"\nfarm redis broker crashed and restarted: broker back to job end {faulted.lost_to_end_s:.1f} s"  # noqa: T201
          f" (bound {bound:.0f} s; fault-free renders {reference.took_s:.0f} s and {after.took_s:.0f} s)")
    assert faulted.frames == reference.frames == after.frames
    assert faulted.lost_to_end_s < bound
