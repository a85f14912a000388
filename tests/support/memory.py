"""What a test worker gives back between test files: the models that process-wide caches keep.

A pytest worker lives the whole suite and meets most of the models on its way: Kokoro in three
precisions, Whisper tiny.en and base, the onnxruntime reference graphs, DNSMOS, the Arabic
diacritizer. Cached for the process, they held about 3 GB per worker by the end of a run, beside
the stacks its files start and the farm's hosts; on a 24 GiB machine the kernel's OOM killer then
took a worker (a run on Zen 4, 2026-11-26, while ``make run``'s whole tree and a farm test were
up). Dropping the caches after each file costs a file that needs a model its load again (one to
two seconds); ``malloc_trim`` hands the freed heap back to the kernel, which ``free`` alone does
not.
"""

from __future__ import annotations

import ctypes
import gc
import sys
from collections.abc import Callable


def _clear(module: str, *names: str) -> bool:
    """Empty the ``functools.cache`` of each function ``names`` of ``module``; whether any held
    something."""
    loaded = sys.modules.get(module)
    held = False
    for name in names:
        cached: Callable[..., object] | None = getattr(loaded, name, None)
        info = getattr(cached, "cache_info", None)
        if info is not None and info().currsize:
            held = True
            cached.cache_clear()  # type: ignore[union-attr]
    return held


def release_models() -> bool:
    """Forget every model a cache of this process holds, and return the memory to the kernel;
    whether there was any. Only modules already imported are touched (nothing is loaded to be
    forgotten), and the collection runs only where a model was dropped: a full ``gc.collect`` of a
    worker's heap takes 0.2 s or more, after each of some 300 files a worker runs."""
    held = False
    kokoro = sys.modules.get("speech.engines.kokoro.engine")
    if kokoro is not None and kokoro._models:
        with kokoro._models_lock:
            kokoro._models.clear()  # the weights every Kokoro voice of the process shares
        held = True
    held |= _clear("tests.support.asr", "_model")
    held |= _clear("tests.support.asr_multilingual", "_model")
    held |= _clear("tests.support.kokoro_reference", "float_session", "int8_session")
    held |= _clear("speech.text.arabic_vowels", "_diacritizer", "vowelize")
    dnsmos = sys.modules.get("speechmos.dnsmos")
    if dnsmos is not None and dnsmos.dnsmos is not None:  # type: ignore[attr-defined]
        dnsmos.dnsmos = None  # type: ignore[attr-defined]  # speechmos keeps its sessions in a global
        held = True
    if not held:
        return False
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: the memory is freed, only kept by the allocator
    return True
