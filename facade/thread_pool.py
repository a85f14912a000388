"""Threads for the API's blocking calls, all started before the API serves and kept for its life.

anyio's shared pool (behind ``run_in_threadpool`` and every sync FastAPI dependency) starts a
thread when no idle one is free and drops a thread idle for 10 s. ``Thread.start`` returns only
once the new thread has run, and it is called from the event loop: at a burst of 24 WebSocket
opens, each authenticating in a thread, the loop watch (``facade.loop_watch``) saw the loop stand
still for 267 ms while the scheduler got round to the new threads, and every other request
waited. A pool whose threads all start up front, before serving, never starts one on the loop.

A call waits for a free thread on the event loop (a ``CapacityLimiter`` with as many tokens as
threads), holding none, so a burst larger than the pool queues without blocking the loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import anyio

T = TypeVar("T")
PRESTART_TIMEOUT_S = 30.0


class ThreadPool:
    """``slots`` threads named ``<name>_<n>``, each made by ``initializer(*initargs)`` first."""

    def __init__(
        self, slots: int, *, name: str, initializer: Callable[..., object] | None = None, initargs: tuple[Any, ...] = ()
    ) -> None:
        if slots < 1:
            raise ValueError("a thread pool needs at least one thread")
        self._slots = slots
        self._limiter: anyio.CapacityLimiter | None = None  # made on first use, on the serving loop
        self._executor = ThreadPoolExecutor(
            max_workers=slots, thread_name_prefix=name, initializer=initializer, initargs=initargs
        )
        # Each task waits at the barrier, so none of the threads is idle when the next task is
        # submitted, and the executor starts a new thread for every one of them.
        started = threading.Barrier(slots + 1)
        for _ in range(slots):
            self._executor.submit(started.wait, PRESTART_TIMEOUT_S)
        started.wait(PRESTART_TIMEOUT_S)

    @property
    def slots(self) -> int:
        return self._slots

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on one of the pool's threads. As with ``anyio.to_thread.run_sync`` and a
        limiter, a caller cancelled while it waits for a thread drops its call (the wait is on the
        event loop, cancellable by asyncio and anyio alike), and one cancelled while its call runs
        waits for it to end, then sees the cancellation: a synthesis step's work is billed by
        whoever called it, and a database write must not be left half-seen by its caller."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self._slots)
        async with self._limiter:  # as many tokens as threads: a call submitted now starts now
            future = self._executor.submit(fn, *args)
            waiter = asyncio.wrap_future(future)
            with anyio.CancelScope(shield=True):  # anyio's cancellation waits until the call is over
                try:
                    result = await asyncio.shield(waiter)
                except asyncio.CancelledError:  # asyncio's own (task.cancel()) arrives once
                    if not future.cancel():
                        await asyncio.wait([waiter])
                    raise
        return result

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
