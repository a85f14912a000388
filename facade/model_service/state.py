"""What the model service holds between requests, and how it gets there: its voices loaded, the
batcher started and warmed up, or the reason loading failed.

Loading runs in the lifespan's background task, so ``/livez`` answers while weights load; each
factory runs on the service's own thread pool (``facade.thread_pool``: every thread started
before serving, as the API's policy says), never on anyio's or asyncio's shared one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

from facade.model_service.metrics import MODEL_BATCH_SIZE
from facade.thread_pool import ThreadPool
from speech.batcher import Batcher
from speech.engines.base import Engine
from speech.types import SynthesisOptions

T = TypeVar("T")
log = logging.getLogger("lector.model_server")

WARMUP_TEXT = "The voice is warming up, one sentence at a time."
#: Threads for the service's blocking calls besides inference (loading, ``/phonemize``).
BLOCKING_THREADS = 4


class Phase(StrEnum):
    LOADING = "loading"
    READY = "ready"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """What the service was built with: the factories by voice name (``""`` for a single
    unnamed voice, which accepts any name), the batching window and the warm-up sentence."""

    factories: dict[str, Callable[[], Engine]]
    window_ms: float = 5.0
    max_batch: int = 16
    warmup_text: str = WARMUP_TEXT

    @property
    def served(self) -> list[str]:
        return [name for name in self.factories if name]

    @property
    def label(self) -> str:
        return ", ".join(self.served) or "(any)"


@dataclass(slots=True)
class ModelState:
    config: ModelConfig
    phase: Phase = Phase.LOADING
    error: str | None = None
    batcher: Batcher | None = None
    pool: ThreadPool | None = None
    sample_rate: int = 0
    sample_rates: dict[str, int] = field(default_factory=dict)
    started: float = 0.0
    ready_after_s: float | None = None

    def ready_batcher(self) -> Batcher | None:
        return self.batcher if self.phase is Phase.READY else None

    async def offload(self, fn: Callable[..., T], *args: object) -> T:
        """``fn(*args)`` on the service's pool, started in the lifespan before serving."""
        assert self.pool is not None, "the pool is opened in the lifespan"
        return await self.pool.run(fn, *args)


async def load(state: ModelState) -> None:
    """Load every voice, start the batcher, warm it up; a failure is kept for ``/livez``."""
    config = state.config
    try:
        engines: dict[str, Engine] = {}
        for name, factory in config.factories.items():
            engines[name] = await state.offload(factory)
        named = {name: engine for name, engine in engines.items() if name}
        batcher = Batcher(
            named or engines[""], window_ms=config.window_ms, max_batch=config.max_batch,
            observe=MODEL_BATCH_SIZE.observe,
        )
        batcher.start()
        state.batcher = batcher
        await _warm_up(state, batcher, list(engines.values()), config.warmup_text)
        state.sample_rate = batcher.engine.sample_rate
        state.sample_rates = {name: engine.sample_rate for name, engine in named.items()}
        state.phase = Phase.READY
        state.ready_after_s = round(time.monotonic() - state.started, 3)
        log.info("voice(s) %s ready after %.1f s", config.label, state.ready_after_s)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - reported by /livez, the process stays up to say so
        log.exception("loading the voice failed")
        state.phase, state.error = Phase.FAILED, f"{type(exc).__name__}: {exc}"


async def _warm_up(state: ModelState, batcher: Batcher, engines: list[Engine], text: str) -> None:
    """One synthesis per kind of engine (kernel selection, the model's first pass), and the
    phonemizer of every voice: a lineup of Kokoro voices warms one model, not thirty."""
    kinds: set[type] = set()
    seen: set[int] = set()
    for engine in engines:
        if id(engine) in seen:
            continue
        seen.add(id(engine))
        if type(engine) in kinds:
            await state.offload(engine.phonemize, text)
        else:
            kinds.add(type(engine))
            await batcher.run_direct([text], SynthesisOptions(), engine)
