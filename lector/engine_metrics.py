"""Engine metrics for every process that synthesizes (API, Celery workers, model service).

Engines are wrapped where they are loaded (``lector.wiring.build_synthesizer``), so the
synthesis core stays a plain library: ``lector_synthesis_seconds`` (wall time of one engine
call) and ``lector_audio_seconds_total`` (audio it made), both by engine and device, make the
realtime factor a query: ``rate(lector_audio_seconds_total[5m]) /
rate(lector_synthesis_seconds_sum[5m])``. On a GPU, ``lector_gpu_memory_bytes`` is read at
scrape time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from prometheus_client import Counter, Gauge, Histogram

SYNTHESIS_SECONDS = Histogram(
    "lector_synthesis_seconds", "Wall time of one engine call (a sentence or a batch)", ["engine", "device"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
AUDIO_SECONDS = Counter("lector_audio_seconds_total", "Seconds of audio synthesized", ["engine", "device"])
GPU_MEMORY = Gauge("lector_gpu_memory_bytes", "GPU memory held by PyTorch tensors in this process", ["device"])
_gpu_watched: set[str] = set()


class InstrumentedEngine:
    """An engine that times its calls; every other attribute is the wrapped engine's own (so
    ``speech.engines.base.speaks_phonemes`` still says whether it takes phonemes)."""

    def __init__(self, inner: Any, *, engine: str, device: str) -> None:
        self._inner = inner
        self._labels = (engine, device)

    def synthesize(self, sentences: Sequence[str], options: Any = None) -> Any:
        return self._timed(self._inner.synthesize, sentences, options)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name == "synthesize_phonemes" and callable(value):
            return lambda phonemes, options=None: self._timed(value, phonemes, options)
        return value

    def _timed(self, call: Callable[..., Any], items: Sequence[str], options: Any) -> Any:
        started = time.perf_counter()
        chunks = call(items, options)
        SYNTHESIS_SECONDS.labels(*self._labels).observe(time.perf_counter() - started)
        AUDIO_SECONDS.labels(*self._labels).inc(sum(float(c.duration) for c in chunks))
        return chunks


def instrument(engine: Any, *, kind: str, device: str) -> InstrumentedEngine:
    if device.startswith("cuda") and device not in _gpu_watched:
        _gpu_watched.add(device)
        GPU_MEMORY.labels(device).set_function(lambda: _gpu_bytes(device))
    return _wrapper_class(type(engine))(engine, engine=kind, device=device)


_wrappers: dict[type, type[InstrumentedEngine]] = {}


def _wrapper_class(inner: type) -> type[InstrumentedEngine]:
    """One wrapper class per engine class, so code that tells engines apart by ``type()`` (the
    model service warms each kind once) still can."""
    if inner not in _wrappers:
        _wrappers[inner] = type(f"Instrumented{inner.__name__}", (InstrumentedEngine,), {})
    return _wrappers[inner]


def _gpu_bytes(device: str) -> float:
    import torch

    return float(torch.cuda.memory_allocated(device))
