"""The engine pool: steps run on threads of lower CPU priority than the event loop, and a
cancelled caller drops a queued step but waits for a running one. That no more steps run at once
than there are slots is tested through ``in_engine_thread`` in
``tests/integration/facade/test_http_edges.py``."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import pytest

from facade.engine_pool import EnginePool

pytestmark = pytest.mark.skipif(not hasattr(os, "setpriority"), reason="thread priorities are a POSIX feature")


def _niceness() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


async def test_steps_run_below_the_event_loops_priority() -> None:
    pool = EnginePool(2, niceness=3)
    try:
        loop_niceness = _niceness()
        assert await pool.run(_niceness) == min(loop_niceness + 3, 19)
        assert _niceness() == loop_niceness  # the caller's own thread is untouched
    finally:
        pool.shutdown()


async def test_a_cancelled_caller_waits_for_its_running_step() -> None:
    pool = EnginePool(1)
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
    pool = EnginePool(1)
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

    pool = EnginePool(1)
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

    pool = EnginePool(1)
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

    pool = EnginePool(1)
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


async def test_every_thread_is_started_before_the_first_step() -> None:
    """A thread started on demand would be started from the event loop, which then waits until the
    scheduler runs it; so the pool starts them all when it is made."""
    before = set(threading.enumerate())  # the threads themselves: an ident is reused once its thread ends
    pool = EnginePool(3)
    try:
        engine_threads = [t for t in threading.enumerate() if t not in before and t.name.startswith("engine")]
        assert len(engine_threads) == 3
        assert await pool.run(lambda: threading.current_thread()) in engine_threads
    finally:
        pool.shutdown()
