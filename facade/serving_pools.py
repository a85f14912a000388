"""The threads an API app serves with: the blocking pool and the engine pool, started together
before serving and let go when the last app using them stops.

One object for what used to be five fields of ``Services`` (two sizes, two pools, a count of
users): the pools' life is one concern. Why pools started up front and not anyio's: see
``facade.thread_pool``; why a pool of its own for engine steps: ``facade.request_resolution.in_engine_thread``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import anyio

from facade.engine_pool import EnginePool
from facade.thread_pool import ThreadPool

T = TypeVar("T")


@dataclass(slots=True)
class ServingPools:
    blocking_slots: int = 16
    """Blocking calls (database, object store, Redis, text normalisation) at once: Settings.blocking_threads."""
    engine_slots: int = 0
    """In-process synthesis steps at once (0: no limit beyond the blocking pool's)."""
    blocking: ThreadPool | None = None  # made by open; None: anyio's shared pool (services outside an app)
    engine: EnginePool | None = None  # made by open when engine_slots > 0
    users: int = 0  # the apps serving with these pools

    async def run_blocking(self, call: Callable[[], T]) -> T:
        if self.blocking is None:  # services used outside an app (tests, tools)
            return await anyio.to_thread.run_sync(call)
        return await self.blocking.run(call)

    def open(self) -> Callable[[], None]:
        """Start the threads the API serves with, before it serves. The returned function lets
        them go; services shared by several apps (the self-hosted runtime's two ports) keep them
        until the last app stops."""
        if self.blocking is None:
            self.blocking = ThreadPool(self.blocking_slots, name="blocking")
        if self.engine_slots > 0 and self.engine is None:
            self.engine = EnginePool(self.engine_slots)
        self.users += 1
        closed = False

        def close() -> None:
            nonlocal closed
            if closed:
                return
            closed = True
            self.users -= 1
            if self.users > 0:
                return
            for pool in (self.blocking, self.engine):
                if pool is not None:
                    pool.shutdown()
            self.blocking = self.engine = None

        return close
