"""The threads that run in-process synthesis steps, at a lower CPU priority than the event loop.

On a CPU host the API process synthesizes itself: one engine thread per core, each keeping a core
busy. The event loop must still answer the voice list, health checks and the other streams' next
bytes at once; at the same priority it queued behind the engine threads for the cores (and for
the GIL, which the kernel hands to whichever runnable thread it schedules). So each engine thread
lowers its own priority when it starts (Linux applies ``setpriority`` to one thread when given a
thread id). A process cannot raise a priority back without privileges, which is why these are
threads of their own rather than the pool for blocking calls (``facade.thread_pool``), whose
threads run database calls.
Elsewhere (another OS, or a priority the process may not lower) the threads run as they are.
"""

from __future__ import annotations

import logging
import os
import threading

from facade.thread_pool import ThreadPool

ENGINE_NICENESS = 5  # how much lower than the process: enough for the loop to win a core at once
_log = logging.getLogger(__name__)


def lower_thread_priority(step: int = ENGINE_NICENESS) -> int | None:
    """Lower the calling thread's CPU priority by ``step``; the new niceness, or None if the
    platform or the process's limits do not allow it."""
    if not hasattr(os, "setpriority") or not hasattr(threading, "get_native_id"):
        return None
    tid = threading.get_native_id()
    try:
        niceness = os.getpriority(os.PRIO_PROCESS, tid) + step
        os.setpriority(os.PRIO_PROCESS, tid, niceness)
        return os.getpriority(os.PRIO_PROCESS, tid)
    except OSError as exc:
        _log.debug("engine thread keeps its priority: %s", exc)
        return None


class EnginePool(ThreadPool):
    """``slots`` engine threads at ``niceness`` below the process (``facade.thread_pool`` for how a
    step waits for one, and why they all start up front)."""

    def __init__(self, slots: int, *, niceness: int = ENGINE_NICENESS) -> None:
        super().__init__(slots, name="engine", initializer=lower_thread_priority, initargs=(niceness,))
