"""The threads that run in-process synthesis steps, at a lower CPU priority than the event loop.

On a CPU host the API process synthesizes itself: one engine thread per core, each keeping a core
busy. The event loop must still answer the voice list, health checks and the other streams' next
bytes at once; at the same priority it queued behind the engine threads for the cores (and for
the GIL, which the kernel hands to whichever runnable thread it schedules). So each engine thread
lowers its own priority when it starts (Linux applies ``setpriority`` to one thread when given a
thread id). A process cannot raise a priority back without privileges, which is why these are
threads of their own rather than anyio's shared pool, whose threads also run database calls.
Elsewhere (another OS, or a priority the process may not lower) the threads run as they are.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import anyio

T = TypeVar("T")
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


PRESTART_TIMEOUT_S = 30.0


class EnginePool:
    """``slots`` engine threads; a step waits on the event loop for one, holding no thread."""

    def __init__(self, slots: int, *, niceness: int = ENGINE_NICENESS) -> None:
        self._slots = slots
        self._limiter: anyio.CapacityLimiter | None = None  # made on first use, on the serving loop
        self._executor = ThreadPoolExecutor(
            max_workers=slots, thread_name_prefix="engine", initializer=lower_thread_priority, initargs=(niceness,)
        )
        # Every thread starts now, before serving. Started on demand, a thread would be started from
        # the event loop, and ``Thread.start`` waits until the new thread runs: under load the
        # scheduler took up to 178 ms to run it (the loop watch caught it), and every request waited.
        started = threading.Barrier(slots + 1)
        for _ in range(slots):  # each waits at the barrier, so none is idle and the next is a new thread
            self._executor.submit(started.wait, PRESTART_TIMEOUT_S)
        started.wait(PRESTART_TIMEOUT_S)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on an engine thread. As with ``anyio.to_thread.run_sync`` and a limiter, a
        caller cancelled while it waits for a thread drops its step (the wait for a slot is on the
        event loop, cancellable by asyncio and anyio alike: a stream whose client left synthesizes
        nothing more), and one cancelled while its step runs waits for it to end, then sees the
        cancellation: the step's work is billed by whoever called it, so it must not outlive its
        caller."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self._slots)
        async with self._limiter:  # as many slots as threads: a step submitted now starts now
            future = self._executor.submit(fn, *args)
            waiter = asyncio.wrap_future(future)
            with anyio.CancelScope(shield=True):  # anyio's cancellation waits until the step is over
                try:
                    result = await asyncio.shield(waiter)
                except asyncio.CancelledError:  # asyncio's own (task.cancel()) arrives once
                    if not future.cancel():
                        await asyncio.wait([waiter])
                    raise
        return result

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
