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


def _clear(module: str, *names: str) -> None:
    loaded = sys.modules.get(module)
    for name in names:
        cached: Callable[..., object] | None = getattr(loaded, name, None)
        clear = getattr(cached, "cache_clear", None)
        if clear is not None:
            clear()


def release_models() -> None:
    """Forget every model a cache of this process holds, and return the memory to the kernel.
    Only modules already imported are touched: nothing is loaded to be forgotten."""
    kokoro = sys.modules.get("speech.engines.kokoro.engine")
    if kokoro is not None:
        with kokoro._models_lock:
            kokoro._models.clear()  # the weights every Kokoro voice of the process shares
    _clear("tests.support.asr", "_model")
    _clear("tests.support.asr_multilingual", "_model")
    _clear("tests.support.kokoro_reference", "float_session", "int8_session")
    _clear("speech.text.arabic_vowels", "_diacritizer", "vowelize")
    dnsmos = sys.modules.get("speechmos.dnsmos")
    if dnsmos is not None:
        dnsmos.dnsmos = None  # type: ignore[attr-defined]  # speechmos keeps its sessions in a global
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: the memory is freed, only kept by the allocator
