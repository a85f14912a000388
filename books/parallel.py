"""Where assembly's per-segment work runs: a kept pool of worker processes (one worker: a thread).

A book is cut into segments (``books.rendering``) that are measured and encoded apart. LAME
and the filters release the GIL, but the arithmetic between them (decoding chunks, fades,
resampling, the peak limiter, packet handling) holds it, and with threads that share stops the
scaling: on a 16-vCPU H100 host, ten hours of MP3 took 124 s on 8 threads, 136 s on 16 threads
and 55 s on 16 processes. Processes have no GIL to share. They win on two cores too (17 minutes of MP3 on 2 vCPUs: 9.9 s
against 11.0 s with threads, medians of six), so threads are left for a single worker.

The pool is made once per process and kept: a job's assembly must not pay for starting it. Its
children fork from a *forkserver*, a clean single-threaded process, never from the caller, which
in a Celery worker has threads, sockets and locks that a fork would copy half-held. A child that
dies (the OOM killer) breaks the pool; :func:`discard` drops it so the retried task gets a new one.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Final, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")
THREADS_UP_TO: Final = 1
#: The pool's processes yield to synthesis where they share cores with it (``lector run``, a
#: small host): a book assembled ahead (``scheduler.progressive_assembly``) then takes idle cycles, not the
#: engine's. Alone on its cores a niced process runs as fast as any.
NICE: Final = 5
#: Imported once in the forkserver, so a child starts with them loaded.
_PRELOAD: Final = ["numpy", "av", "soxr", "scipy.signal", "books.rendering", "books.measuring"]

_lock = threading.Lock()
_pools: dict[int, ProcessPoolExecutor] = {}

__all__ = ["BrokenProcessPool", "default_workers", "discard", "executor", "uses_processes", "warm"]


def default_workers(cpu_max: Path = Path("/sys/fs/cgroup/cpu.max")) -> int:
    """Every core this process may run on, and no more than its cgroup's CPU quota: in a
    container with a CPU limit the affinity still lists every core of the node, and a process per
    core there would oversubscribe the limit and hold ~200 MB each."""
    cores = max(1, len(os.sched_getaffinity(0)))
    try:
        quota, period = cpu_max.read_text().split()[:2]
    except (OSError, ValueError):
        return cores
    if quota == "max":
        return cores
    return max(1, min(cores, math.ceil(int(quota) / int(period))))


def uses_processes(workers: int) -> bool:
    return workers > THREADS_UP_TO


def executor(workers: int) -> Executor:
    """An executor for ``workers`` parallel segments; use it as a context manager. Threads are
    made per call and stopped when the block ends; the process pool is shared, and the end of
    the block leaves it running for the next book (see :class:`_Kept`)."""
    if not uses_processes(workers):
        return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="assemble")
    with _lock:
        pool = _pools.get(workers)
        if pool is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(_PRELOAD)
            pool = _pools[workers] = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_yield)
        return _Kept(pool)


def _yield() -> None:
    os.nice(NICE)


def warm(workers: int) -> None:
    """Start the pool's processes now (a bench does, before its clock; a worker's first book
    otherwise pays a second or two for it)."""
    if uses_processes(workers):
        pool = executor(workers)
        for future in [pool.submit(os.getpid) for _ in range(workers)]:
            future.result()


def discard(workers: int) -> None:
    """Forget a broken pool (its children are gone); the next call makes a new one."""
    with _lock:
        pool = _pools.pop(workers, None)
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


class _Kept(Executor):
    """The shared pool, with a context manager that leaves it running for the next book."""

    def __init__(self, pool: ProcessPoolExecutor) -> None:
        self._pool = pool

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        return self._pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Kept for the next book; the interpreter's exit stops it."""
