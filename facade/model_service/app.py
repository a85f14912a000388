"""The model service: one voice, or several, behind ``POST /invocations``, with readiness that means it.

``GET /livez`` answers as soon as the process serves HTTP (and fails once loading failed, so an
orchestrator restarts the container). ``GET /readyz`` answers 200 only after the voice is loaded
*and* a warm-up synthesis ran, so the first real request does not pay for lazy initialisation
(kernel selection, the phonemizer's first call); until then it is 503 and ``/invocations``
refuses with 503 too. Loading runs in the background so liveness answers during the warm-up.

Several voices in one service (``voices``) suit Kokoro: its voices share one model and differ
only by a style pack, so a whole lineup costs one model's memory. Each request names its voice;
the batcher groups sentences by engine, so a batch never mixes voices.

Composed as the API is: routers (``health``, ``synthesis``), the one error table
(``facade.errors``, every answer JSON here) and the API's thread policy (a pool started in the
lifespan, ``state.ModelState.offload``). The request format is ``facade.invocations_format``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager

from fastapi import FastAPI

from facade import errors as e
from facade.model_service import health, synthesis
from facade.model_service.state import BLOCKING_THREADS, WARMUP_TEXT, ModelConfig, ModelState, load
from facade.thread_pool import ThreadPool
from speech.engines.base import Engine


def create_model_app(
    engine_factory: Callable[[], Engine] | None = None,
    *,
    window_ms: float = 5.0,
    max_batch: int = 16,
    voice: str | None = None,
    voices: Mapping[str, Callable[[], Engine]] | None = None,
    warmup_text: str = WARMUP_TEXT,
) -> FastAPI:
    """``engine_factory`` loads the voice (slow: called once, off the event loop). ``voice`` is
    the name callers must send (``None`` accepts any). Or ``voices``: name -> factory for several
    voices, the first being the default for requests that name none. ``window_ms``/``max_batch``:
    see batcher."""
    if (engine_factory is None) == (voices is None) or (voices is not None and not voices):
        raise ValueError("give either engine_factory or a non-empty voices mapping")
    factories = dict(voices) if voices is not None else {voice or "": engine_factory}
    config = ModelConfig(
        {name: factory for name, factory in factories.items() if factory is not None},
        window_ms=window_ms, max_batch=max_batch, warmup_text=warmup_text,
    )
    state = ModelState(config)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state.started = time.monotonic()
        state.pool = ThreadPool(BLOCKING_THREADS, name="model-blocking")  # before serving
        loader = asyncio.create_task(load(state), name="load-voice")
        try:
            yield
        finally:
            loader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await loader
            if state.batcher is not None:
                await state.batcher.stop()
            state.pool.shutdown()

    app = FastAPI(title="lector model service", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.model = state
    app.include_router(health.router)
    app.include_router(synthesis.router)
    e.install(app, style=e.Style.JSON)
    return app
