"""The pool behind the API's blocking calls and its engine steps: every thread starts with the
pool (none is ever started from the event loop), and a cancelled caller drops a queued call but
waits for a running one."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from facade.deps import Services, Speech
from facade.serving_pools import ServingPools
from facade.thread_pool import ThreadPool
from tests.support.concurrency import PeakCounter


async def test_a_cancelled_caller_waits_for_its_running_step() -> None:
    pool = ThreadPool(1, name="t")
    started, finished = threading.Event(), threading.Event()

    def step() -> None:
        started.set()
        time.sleep(0.3)
        finished.set()

    try:
        task = asyncio.create_task(pool.run(step))
        await asyncio.to_thread(started.wait, 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert finished.is_set()  # the caller saw its cancellation only after the step ended
    finally:
        pool.shutdown()


async def test_a_cancelled_caller_drops_its_step_still_waiting_for_a_thread() -> None:
    pool = ThreadPool(1, name="t")
    release = threading.Event()
    ran: list[str] = []
    try:
        busy = asyncio.create_task(pool.run(release.wait, 5))
        queued = asyncio.create_task(pool.run(ran.append, "queued"))
        await asyncio.sleep(0.05)
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        release.set()
        await busy
    finally:
        pool.shutdown()
    assert ran == []


async def test_anyio_cancellation_also_waits_for_the_running_step() -> None:
    """Starlette cancels a handler whose client left through an anyio cancel scope."""
    import anyio

    pool = ThreadPool(1, name="t")
    finished = threading.Event()

    def step() -> None:
        time.sleep(0.3)
        finished.set()

    try:
        with anyio.move_on_after(0.05) as scope:
            await pool.run(step)
    finally:
        pool.shutdown()
    assert scope.cancel_called and finished.is_set()  # the deadline passed; the step still ended


async def test_a_caller_already_cancelled_submits_nothing() -> None:
    """A streaming handler whose client left asks for its next sentence from inside a cancelled
    scope: that sentence must not be synthesized (nor billed)."""
    import anyio

    pool = ThreadPool(1, name="t")
    ran: list[int] = []
    try:
        with anyio.CancelScope() as scope:
            scope.cancel()
            await pool.run(ran.append, 1)
    finally:
        pool.shutdown()
    assert ran == []


async def test_a_step_queued_behind_busy_threads_is_dropped_by_anyio_cancellation() -> None:
    """48 streams on 2 slots: a stream whose client leaves while its next sentence waits for a
    thread (Starlette cancels it through an anyio scope) must not synthesize that sentence."""
    import anyio

    pool = ThreadPool(1, name="t")
    release = threading.Event()
    ran: list[str] = []
    try:
        busy = asyncio.create_task(pool.run(release.wait, 5))
        await asyncio.sleep(0.05)
        with anyio.move_on_after(0.05):
            await pool.run(ran.append, "queued")
        release.set()
        await busy
        await pool.run(ran.append, "after")  # the pool still works
    finally:
        pool.shutdown()
    assert ran == ["after"]


async def test_a_burst_larger_than_the_pool_starts_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """anyio's pool starts a thread from the event loop when none is idle; this one queues the
    call on the loop instead, holding no thread, and its threads all exist before the first call."""
    pool = ThreadPool(2, name="burst")
    started: list[str] = []
    real_start = threading.Thread.start

    def record(self: threading.Thread) -> None:
        started.append(self.name)
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", record)
    calls = PeakCounter()
    try:
        names = await asyncio.gather(*(pool.run(calls.hold, 0.02) for _ in range(12)))
    finally:
        pool.shutdown()
    assert started == []
    assert calls.peak == 2 and {name.rsplit("_", 1)[0] for name in names} == {"burst"}


def _services() -> Services:
    return Services(speech=Speech(catalog=None, synthesizer=None),  # type: ignore[arg-type]
                    pools=ServingPools(blocking_slots=3, engine_slots=2))


async def test_offload_runs_on_the_blocking_threads_with_the_callers_context() -> None:
    services = _services()
    close = services.pools.open()
    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id")
    request_id.set("r-1")

    def where(suffix: str, *, sep: str) -> tuple[str, str]:
        return threading.current_thread().name, request_id.get() + sep + suffix

    try:
        name, seen = await services.offload(where, "x", sep=":")
    finally:
        close()
    assert name.startswith("blocking") and seen == "r-1:x"


async def test_pools_opened_twice_stay_until_the_last_user_closes() -> None:
    """Services shared by several apps (the self-hosted runtime's two ports) keep their pools
    until the last app stops, whichever stops first; closing twice counts once."""
    services = _services()
    first = services.pools.open()
    blocking, engine = services.pools.blocking, services.pools.engine
    assert blocking is not None and engine is not None and blocking.slots == 3 and engine.slots == 2
    second = services.pools.open()
    first()
    first()
    assert services.pools.blocking is blocking and services.pools.engine is engine
    assert await services.offload(lambda: 7) == 7
    second()
    assert services.pools.blocking is None and services.pools.engine is None


async def test_offload_outside_an_app_uses_anyios_pool() -> None:
    """Services built by a tool or a test, with no app to open pools, still run blocking calls."""
    ran_on = await _services().offload(threading.current_thread)
    assert ran_on is not threading.current_thread() and ran_on.is_alive()
