"""The engine pool: steps run on threads of lower CPU priority than the event loop, all started
with the pool. How a cancelled caller's step is treated is the thread pool's
(``test_thread_pool.py``); that no more steps run at once than there are slots is tested through
``in_engine_thread`` in ``tests/integration/facade/test_http_edges.py``."""

from __future__ import annotations

import os
import threading

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
