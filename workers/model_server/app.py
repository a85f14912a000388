"""The model service: one voice, or several, behind ``POST /invocations``, with readiness that means it.

``GET /livez`` answers as soon as the process serves HTTP (and fails once loading failed, so an
orchestrator restarts the container). ``GET /readyz`` answers 200 only after the voice is loaded
*and* a warm-up synthesis ran, so the first real request does not pay for lazy initialisation
(kernel selection, the phonemizer's first call); until then it is 503 and ``/invocations``
refuses with 503 too. Loading runs in the background so liveness answers during the warm-up.

The request and response format is in ``wire.py``; batching across requests in ``speech.batcher``
(shared with the in-process engines of a GPU host).
A request naming a voice this service does not serve is refused (400, with ``voice`` and
``served`` in the body so a caller can tell it from a malformed request): answering with another
voice would be a silent substitution the caller cannot detect.

Several voices in one service (``voices``) suit Kokoro: its voices share one model and differ
only by a style pack, so a whole lineup costs one model's memory. Each request names its voice;
the batcher groups sentences by engine, so a batch never mixes voices.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from speech import wire
from speech.batcher import Batcher
from speech.engines.base import Engine, speaks_phonemes
from speech.types import SynthesisOptions
from workers.model_server.metrics import MODEL_BATCH_SIZE, metrics_response

log = logging.getLogger("lector.model_server")

WARMUP_TEXT = "The voice is warming up, one sentence at a time."


@dataclass(slots=True)
class ModelState:
    phase: str = "loading"  # loading -> ready | failed
    error: str | None = None
    batcher: Batcher | None = None
    sample_rate: int = 0
    sample_rates: dict[str, int] = field(default_factory=dict)
    started: float = 0.0
    ready_after_s: float | None = None


def _error(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)


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
    factories: dict[str, Callable[[], Engine]] = dict(voices) if voices is not None else {}
    if engine_factory is not None and voice is not None:
        factories = {voice: engine_factory}
    served = list(factories)
    label = ", ".join(served) or "(any)"
    state = ModelState()

    async def load() -> None:
        try:
            if factories:
                engines = {name: await asyncio.to_thread(factory) for name, factory in factories.items()}
                batcher = Batcher(engines, window_ms=window_ms, max_batch=max_batch, observe=MODEL_BATCH_SIZE.observe)
            else:
                assert engine_factory is not None
                batcher = Batcher(
                    await asyncio.to_thread(engine_factory), window_ms=window_ms, max_batch=max_batch,
                    observe=MODEL_BATCH_SIZE.observe,
                )
                engines = {}
            batcher.start()
            state.batcher = batcher
            await _warm_up(batcher, list(engines.values()) or [batcher.engine], warmup_text)
            state.sample_rate = batcher.engine.sample_rate
            state.sample_rates = {name: engine.sample_rate for name, engine in engines.items()}
            state.phase = "ready"
            state.ready_after_s = round(time.monotonic() - state.started, 3)
            log.info("voice(s) %s ready after %.1f s", label, state.ready_after_s)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported by /livez, the process stays up to say so
            log.exception("loading the voice failed")
            state.phase, state.error = "failed", f"{type(exc).__name__}: {exc}"

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state.started = time.monotonic()
        loader = asyncio.create_task(load(), name="load-voice")
        try:
            yield
        finally:
            loader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await loader
            if state.batcher is not None:
                await state.batcher.stop()

    app = FastAPI(title="lector model service", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.model = state

    @app.get("/livez")
    async def livez() -> Response:
        if state.phase == "failed":
            return JSONResponse({"status": "failed", "error": state.error}, status_code=500)
        return JSONResponse({"status": "alive", "phase": state.phase})

    @app.get("/readyz")
    async def readyz() -> Response:
        if state.phase != "ready":
            return JSONResponse({"ready": False, "phase": state.phase}, status_code=503)
        return JSONResponse({"ready": True, "voice": served[0] if served else None, "voices": served,
                             "sampleRate": state.sample_rate, "sampleRates": state.sample_rates,
                             "readyAfterSeconds": state.ready_after_s})

    def not_served(name: str) -> Response:
        return JSONResponse(
            {"error": f"voice {name} is not served here (this service serves {label})", "voice": name,
             "served": served},
            status_code=400,
        )

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> Response:
        return metrics_response()

    @app.get("/stats")
    async def stats() -> Response:
        body: dict[str, Any] = {"windowMs": window_ms, "maxBatch": max_batch, "phase": state.phase}
        if state.batcher is not None:
            body.update(state.batcher.stats.to_json())
        return JSONResponse(body)

    @app.post("/phonemize")
    async def phonemize(request: Request) -> Response:
        if state.phase != "ready" or state.batcher is None:
            return _error(503, "model not ready")
        try:
            body = json.loads(await request.body())
            text, name = body["text"], body.get("voice")
            if not isinstance(text, str) or not isinstance(name, str | None):
                raise TypeError
        except (ValueError, KeyError, TypeError, AttributeError):
            return _error(400, "body must be {\"text\": \"...\", \"voice\": \"...\" (optional)}")
        engine = state.batcher.engine_for(name)
        if engine is None:
            return not_served(name or "")
        phonemes = await asyncio.to_thread(engine.phonemize, text)
        return JSONResponse({"phonemes": phonemes})

    @app.post("/invocations", response_model=None)
    async def invocations(request: Request) -> Response:
        try:
            req = wire.parse_request(json.loads(await request.body() or b"null"))
        except (ValueError, UnicodeDecodeError) as exc:  # WireError is a ValueError
            return _error(400, str(exc) if isinstance(exc, wire.WireError) else "body must be JSON")
        if state.phase != "ready" or state.batcher is None:
            return _error(503, "model not ready")
        engine = state.batcher.engine_for(req.voice)
        if engine is None:
            return not_served(req.voice or "")
        name = req.voice or (served[0] if served else None)
        ipa = req.input == "ipa"
        if ipa and speaks_phonemes(engine) is None:
            return _error(400, f"voice {name} does not take phonemes")
        options = SynthesisOptions(length_scale=req.length_scale, noise_scale=req.noise_scale, noise_w=req.noise_w)
        futures = state.batcher.submit(req.sentences, options, ipa=ipa, voice=req.voice)
        try:
            first = await futures[0]
        except Exception as exc:  # noqa: BLE001 - nothing sent yet: a plain 500
            _cancel(futures)
            return _error(500, f"inference failed: {exc}")
        head = wire.header_frame(sample_rate=first[0].sample_rate, encoding=req.encoding,
                                 sentences=len(req.sentences), voice=name)

        async def frames() -> AsyncIterator[bytes]:
            batches = [first[1]]
            try:
                yield head + wire.chunk_frames(0, first[0], req.encoding)
                for index, future in enumerate(futures[1:], start=1):
                    try:
                        chunk, size = await future
                    except Exception as exc:  # noqa: BLE001 - the stream is open: an E frame
                        yield wire.json_frame(wire.ERROR, {"error": f"inference failed: {exc}"})
                        return
                    batches.append(size)
                    yield wire.chunk_frames(index, chunk, req.encoding)
                yield wire.json_frame(wire.DONE, {"batches": batches})
            finally:
                _cancel(futures)

        return StreamingResponse(frames(), media_type=wire.MEDIA_TYPE)

    return app


async def _warm_up(batcher: Batcher, engines: list[Engine], text: str) -> None:
    """One synthesis per kind of engine (kernel selection, the model's first pass), and the
    phonemizer of every voice: a lineup of Kokoro voices warms one model, not thirty."""
    kinds: set[type] = set()
    seen: set[int] = set()
    for engine in engines:
        if id(engine) in seen:
            continue
        seen.add(id(engine))
        if type(engine) in kinds:
            await asyncio.to_thread(engine.phonemize, text)
        else:
            kinds.add(type(engine))
            await batcher.run_direct([text], SynthesisOptions(), engine)


def _cancel(futures: list[asyncio.Future[Any]]) -> None:
    """Drop what a gone client still waits for (and retrieve errors nobody will read)."""
    for future in futures:
        if not future.done():
            future.cancel()
        elif not future.cancelled():
            future.exception()
