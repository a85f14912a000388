"""``POST /invocations`` (sentences in, the ``facade.invocations_format`` frames out) and ``POST /phonemize``.

Every refusal is raised and answered by the one error table (``facade.errors``, JSON bodies on
this app): a malformed body 400 (``wire.InvalidInvocation``), not ready 503, a voice
this service does not serve 400 with ``voice`` and ``served`` in the body, so a caller can tell
it from a malformed request (answering with another voice would be a silent substitution), and
a failure before the first frame 500. Once frames flow, a failure is an ``E`` frame.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from facade import errors as e
from facade import invocations_format as wire
from facade.model_service.health import ModelStateDep
from facade.model_service.state import ModelState
from speech.batcher import Batcher
from speech.engines.base import Engine, speaks_phonemes
from speech.types import SynthesisOptions

router = APIRouter()


def _ready(state: ModelState) -> Batcher:
    batcher = state.ready_batcher()
    if batcher is None:
        raise e.ApiError(503, e.MODEL_NOT_READY)
    return batcher


def _engine(state: ModelState, batcher: Batcher, name: str | None) -> Engine:
    engine = batcher.engine_for(name)
    if engine is None:
        served = state.config.served
        raise e.ApiError(
            400, f"voice {name or ''} is not served here (this service serves {state.config.label})",
            fields={"voice": name or "", "served": served},
        )
    return engine


@router.post("/phonemize")
async def phonemize(request: Request, state: ModelStateDep) -> Response:
    batcher = _ready(state)
    try:
        body = json.loads(await request.body())
        text, name = body["text"], body.get("voice")
        if not isinstance(text, str) or not isinstance(name, str | None):
            raise TypeError
    except (ValueError, KeyError, TypeError, AttributeError):
        raise e.ApiError(400, e.PHONEMIZE_BODY) from None
    engine = _engine(state, batcher, name)
    phonemes = await state.offload(engine.phonemize, text)
    return JSONResponse({"phonemes": phonemes})


@router.post("/invocations", response_model=None)
async def invocations(request: Request, state: ModelStateDep) -> Response:
    try:
        payload = json.loads(await request.body() or b"null")
    except (ValueError, UnicodeDecodeError):
        raise e.ApiError(400, e.MODEL_BODY_NOT_JSON) from None
    req = wire.parse_request(payload)  # InvalidInvocation: the table's 400
    batcher = _ready(state)
    engine = _engine(state, batcher, req.voice)
    served = state.config.served
    name = req.voice or (served[0] if served else None)
    ipa = req.input == "ipa"
    if ipa and speaks_phonemes(engine) is None:
        raise e.ApiError(400, f"voice {name} does not take phonemes")
    options = SynthesisOptions(length_scale=req.length_scale, noise_scale=req.noise_scale, noise_w=req.noise_w)
    futures = batcher.submit(req.sentences, options, ipa=ipa, voice=req.voice)
    try:
        first = await futures[0]
    except Exception as exc:  # noqa: BLE001 - nothing sent yet: a plain 500 naming the failure
        _cancel(futures)
        raise e.ApiError(500, f"inference failed: {exc}") from exc
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


def _cancel(futures: list[asyncio.Future[Any]]) -> None:
    """Drop what a gone client still waits for (and retrieve errors nobody will read)."""
    for future in futures:
        if not future.done():
            future.cancel()
        elif not future.cancelled():
            future.exception()
