"""The one owner of torch's intra-op thread count: engines say what they run on, this decides.

torch's thread count is process-wide, and two engines want opposite things from it. Kokoro runs
one forward pass at a time and wants every core inside each operation ("intra_op"). VITS on our
torch modules runs single-threaded workers side by side, one per core ("single"). VITS on
onnxruntime runs no torch at all, yet its loader set torch to one thread for the whole process,
so every Kokoro voice loaded beside the default VITS voice ran on one core (issue 24: a book at
1.6x realtime). Each loader used to set the count itself; the last one loaded won.

The rule: an engine that runs no torch claims nothing. "intra_op" sets the count (the engine's
``threads``, else every usable core) and wins over "single": the flagship voices keep their
cores, and a VITS torch engine loaded beside them oversubscribes instead (it is opt-in on CPU:
``auto`` runs VITS on onnxruntime there). "single" sets one thread only while no engine of the
process has claimed "intra_op".

The count is also per thread: OpenMP keeps it in each thread once the thread has run torch, and
``torch.set_num_threads`` changes only the calling thread's and the default for threads that have
not run torch yet. An API engine thread that ran a VITS torch voice at one thread, or any thread
that touched torch before a Kokoro voice was loaded on another, kept one thread. So the thread
that runs an "intra_op" engine's forward pass calls ``in_this_thread`` first: it runs at the count
the rule set.

And the passes themselves run on one thread (``on_torch_thread``). OpenMP keeps a team of worker
threads for every thread that ran a parallel region, and once libgomp manages more threads than
there are cores it stops spinning between regions (its "throttled" mode, 1,000 spins and then a
futex sleep). The API runs synthesis steps on an engine thread per core, so on 2 cores two teams
came to be and every Kokoro pass ran throttled from then on: the clause of a stream's first
piece took 582-588 ms from a pool of two threads against 451-464 ms from the loading thread
alone (Zen 4), and the server's first byte sat 100 ms above the engine's own time. One thread,
one team: the engine's model lock lets one pass run at a time anyway, so nothing waits that did
not before. That thread sets its count (``in_this_thread``) before each pass.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Literal, TypeVar

import torch

T = TypeVar("T")

Claim = Literal["intra_op", "single"]
_claims: set[Claim] = set()
_count: int | None = None  # what the rule last set; None: no claim yet
_lock = threading.Lock()
_runner: tuple[int, ThreadPoolExecutor] | None = None  # (pid, executor): a forked child makes its own
_runner_ident: int | None = None


def usable_cores() -> int:
    """Cores this process may run on (its affinity), not the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def claim_torch_threads(claim: Claim, threads: int = 0) -> int:
    """Record an engine's claim and apply the rule above; the count torch runs with after it."""
    global _count
    with _lock:
        _claims.add(claim)
        if claim == "intra_op":
            _count = threads if threads > 0 else usable_cores()
            torch.set_num_threads(_count)
        elif "intra_op" not in _claims:
            _count = 1
            torch.set_num_threads(1)
        return torch.get_num_threads()


def in_this_thread() -> int:
    """Set the calling thread's torch count to the rule's (see above: it is per thread); the
    count it runs with. Cheap when it is right already (one call to read it)."""
    wanted = _count
    if wanted is not None and torch.get_num_threads() != wanted:
        torch.set_num_threads(wanted)
    return torch.get_num_threads()


def reset_claims() -> None:
    """Forget every claim (tests; a process that unloads all its engines)."""
    global _count
    with _lock:
        _claims.clear()
        _count = None


def on_torch_thread(fn: Callable[[], T]) -> T:
    """``fn()`` on the process's one thread for intra-op torch passes (module docstring), at the
    rule's count; its result or its exception. From that thread itself it runs in place."""
    global _runner
    if threading.get_ident() == _runner_ident:
        return fn()
    with _lock:
        if _runner is None or _runner[0] != os.getpid():  # a forked child has the executor, not its thread
            _runner = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="torch", initializer=_mark_runner))
        executor = _runner[1]

    def run() -> T:
        in_this_thread()
        return fn()

    return executor.submit(run).result()


def _mark_runner() -> None:
    global _runner_ident
    _runner_ident = threading.get_ident()
