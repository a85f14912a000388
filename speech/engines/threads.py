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
that touched torch before a Kokoro voice was loaded on another, kept one thread. So an engine
that claimed "intra_op" calls ``in_this_thread`` before each forward pass: the calling thread
runs at the count the rule set.
"""

from __future__ import annotations

import os
import threading
from typing import Literal

import torch

Claim = Literal["intra_op", "single"]
_claims: set[Claim] = set()
_count: int | None = None  # what the rule last set; None: no claim yet
_lock = threading.Lock()


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
