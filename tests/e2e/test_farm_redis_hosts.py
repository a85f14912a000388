"""A synth host lost on a Redis farm (``infra/farm``): three hosts in network namespaces (``h1`` cpu
and the reaper, ``h2`` and ``h3`` synth) sharing PostgreSQL, Swift and a leased Redis database as
their broker.

A synth host holding a task vanishes (link down, then SIGKILL), freezes and later thaws, or loses
PostgreSQL alone. On Redis a task handed to a host that then vanishes or freezes stays with it
(kombu keeps it in its ``unacked`` hash for the visibility timeout, half an hour): only the reaper
brings the work back, after ``LECTOR_STALL_AFTER_S`` without progress (here 20 s) and at its next
sweep (every 30 s). The job still succeeds within that bound, its WAV equals the no-fault render
sample for sample, every chunk is billed exactly once, and a thawed zombie writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from tests.fixtures.farm import FarmStack
from tests.support.farm_books import (
    REDIS_STALL_S,
    SMALL_BATCHES,
    Render,
    redis_bound_s,
    render,
    revived,
    start_hosts,
    thawed_zombie_harmless,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TIMEOUT_S = 420  # how long a faulted render may take before the test fails (far above the bound)


@pytest.fixture(scope="module")
def redis_farm(make_farm, own_redis_url: str) -> Iterator[FarmStack]:  # type: ignore[no-untyped-def]
    farm = start_hosts(make_farm(own_redis_url, **SMALL_BATCHES, LECTOR_STALL_AFTER_S=str(REDIS_STALL_S)))
    try:
        yield farm
    finally:
        farm.farm.down()  # before the leased Redis database is flushed and given back


@pytest.fixture(scope="module")
def reference(redis_farm: FarmStack, pg_url: str) -> Render:
    """The book rendered with every host up."""
    return render(redis_farm, pg_url)

# The host killed last: a killed host's worker must be started again (torch, the voice, Celery:
# ~5 s of CPU) before another test can use it, and after the last test nothing needs it. Each
# test still brings back the hosts it needs (``revived``), so any of them runs alone or in any order.


def test_redis_frozen_host_thaws_as_a_harmless_zombie(redis_farm: FarmStack, reference: Render, pg_url: str) -> None:
    """A synth host frozen mid-task (SIGSTOP) keeps its task: Redis has no heartbeats to find it
    out, so the reaper re-sends the book's missing batch and another host does it. Thawed, the
    zombie finishes the task it held; it must write nothing over the chunks another host stored,
    bill nothing twice, and leave the finished file alone."""
    revived(redis_farm, "h2")
    victim = "h3"
    try:
        faulted = render(redis_farm, pg_url, victim=victim, fault=redis_farm.farm.freeze, timeout_s=TIMEOUT_S)
        assert faulted.lost_to_end_s is not None
        print(f"\nfarm redis synth host frozen: freeze to job end {faulted.lost_to_end_s:.1f} s"  # noqa: T201
          f" (bound {redis_bound_s(reference):.0f} s)")
        assert faulted.frames == reference.frames
        thawed_zombie_harmless(redis_farm, pg_url, faulted, reference, victim)
    finally:
        redis_farm.farm.thaw(victim)  # also when the book failed: the next tests need the host
    assert faulted.lost_to_end_s < redis_bound_s(reference)


def test_redis_synth_host_cut_from_postgresql_only(redis_farm: FarmStack, reference: Render, pg_url: str) -> None:
    """A synth host loses PostgreSQL alone just as it takes a task; Redis still hears it. Its
    database calls fail within seconds (``store.db.session``'s TCP timeouts), the task is retried
    through the broker, and the book ends."""
    revived(redis_farm, "h2")
    victim = "h2"
    port = int(urlsplit(redis_farm.local_env["LECTOR_DATABASE_URL"]).port or 5432)
    try:
        faulted = render(redis_farm, pg_url, victim=victim, fault=lambda host: redis_farm.farm.cut(host, port),
                         timeout_s=TIMEOUT_S)
    finally:
        redis_farm.farm.mend(victim)
    assert faulted.lost_to_end_s is not None
    print(f"\nfarm redis synth host cut from postgresql: cut to job end {faulted.lost_to_end_s:.1f} s"  # noqa: T201
          f" (bound {redis_bound_s(reference):.0f} s)")
    assert faulted.frames == reference.frames
    assert faulted.lost_to_end_s < redis_bound_s(reference)


def test_redis_synth_host_lost_mid_book_waits_for_the_reaper(
    redis_farm: FarmStack, reference: Render, pg_url: str,
) -> None:
    """The dead host's task is gone with it: the reaper re-sends the book's missing batches."""
    revived(redis_farm, "h2")
    faulted = render(redis_farm, pg_url, victim="h2", timeout_s=TIMEOUT_S)
    assert faulted.lost_to_end_s is not None
    print(f"\nfarm redis synth host killed: loss to job end {faulted.lost_to_end_s:.1f} s"  # noqa: T201
          f" (bound {redis_bound_s(reference):.0f} s)")
    assert faulted.frames == reference.frames
    assert faulted.lost_to_end_s < redis_bound_s(reference)
