"""``POST /v1/service-tts``: streaming synthesis, audio chosen by ``Accept``.

The first sentence is synthesized before the response starts: a failure there can still be a
proper 500 (JSON ``{"error": ...}``, as the vendor API contract says), and the first bytes leave as soon as it
is done. The rest streams sentence by sentence. Usage is recorded when the stream ends, also
when the client went away part-way: what was synthesized is billed, nothing more.
"""

from __future__ import annotations

import base64
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Iterator

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from facade import errors as e
from facade.deps import Principal, PrincipalDep, Services, ServicesDep
from facade.metrics import observe_first_byte
from facade.plans import Plan, default_rate, in_engine_thread, resolve
from facade.usage import close_quietly, record
from facade.validation import SynthesisRequest, checked_rate, parse_json_body, parse_request
from speech.audio import (
    JSON_VARIANT_FORMATS,
    AudioFormat,
    Representation,
    from_audio_format_param,
    negotiate,
    not_acceptable_message,
)
from speech.streaming import StreamStats, encoded_stream, pcm_stream

log = logging.getLogger("lector.tts")
router = APIRouter()

JSON_MODELS = frozenset({"mist", "mistv2"})
SSE_MODELS = frozenset({"mistv2"})


@router.post("/v1/service-tts", response_model=None)
async def service_tts(request: Request, services: ServicesDep, principal: PrincipalDep) -> Response:
    """Synthesize ``text`` with ``speaker`` and stream it in the format named by ``Accept``."""
    req = parse_request(parse_json_body(await request.body()))
    plan = await services.offload(resolve, services, req, principal, endpoint="service-tts")
    choice = negotiate(
        request.headers.get("accept"),
        allow_json=plan.requested_model in JSON_MODELS,
        allow_sse=plan.requested_model in SSE_MODELS,
    )
    if choice.representation is Representation.NOT_ACCEPTABLE:
        raise e.ApiError(406, not_acceptable_message(plan.requested_model))
    if choice.representation is Representation.JSON:
        return await json_variant(services, principal, req, plan)
    if choice.representation is Representation.EVENT_STREAM:
        return await sse_variant(services, principal, req, plan)
    fmt = choice.format or AudioFormat.PCM
    accept_rate = checked_rate(choice.rate_param)
    rate = req.sampling_rate or accept_rate or default_rate(plan.model_id, fmt.value)
    return await audio_stream(services, principal, req, plan, fmt, rate, transport="http")


async def audio_stream(
    services: Services, principal: Principal, req: SynthesisRequest, plan: Plan, fmt: AudioFormat, rate: int, *, transport: str
) -> Response:
    stats = StreamStats()
    request_id = uuid.uuid4().hex
    chunks = encoded_stream(
        pcm_stream(services.synthesizer, plan.voice, plan.units, plan.controls, sample_rate=rate, stats=stats),
        fmt,
        rate,
    )
    started = time.perf_counter()
    # The vendor API contract: an unhandled 500 here is JSON.
    with e.unhandled_as(500, e.INTERNAL, json_body=True, what="synthesis failed before the first byte", logger=log):
        first = await in_engine_thread(services, _next, chunks)
    observe_first_byte(transport, fmt.value)

    async def body() -> AsyncIterator[bytes]:
        # The usage row is committed once the last unit is synthesized and before its bytes go out,
        # so a response the client saw complete is always billed, even if the process dies after.
        recorded = False
        total = len(plan.units)
        try:
            pending = first
            while pending is not None:
                if not recorded and stats.sentences >= total:
                    await services.offload(
                        record, services, principal, req, plan, stats, transport=transport, request_id=request_id
                    )
                    recorded = True
                if pending:
                    yield pending
                pending = await in_engine_thread(services, _next, chunks)
        finally:
            if not recorded:  # the client went away (or synthesis failed) part-way: bill what was made
                with anyio.CancelScope(shield=True):  # a disconnect cancels this task; billing must still run
                    await services.offload(
                        record, services, principal, req, plan, stats, transport=transport, request_id=request_id
                    )
            close_quietly(chunks)

    # Server-Timing lets a client (and bench/latency.py) split time to first byte into lector's own
    # overhead and the first sentence's synthesis (engine, resampling, encoding).
    first_ms = (time.perf_counter() - started) * 1000
    headers = {"Cache-Control": "no-store", "Server-Timing": f"synth;dur={first_ms:.1f}"}
    return StreamingResponse(body(), media_type=fmt.content_type(rate), headers=headers)


def _next(iterator: Iterator[bytes]) -> bytes | None:
    return next(iterator, None)


def _whole(services: Services, plan: Plan, fmt: AudioFormat, rate: int, stats: StreamStats) -> bytes:
    chunks = pcm_stream(services.synthesizer, plan.voice, plan.units, plan.controls, sample_rate=rate, stats=stats)
    return b"".join(encoded_stream(chunks, fmt, rate))


async def json_variant(services: Services, principal: Principal, req: SynthesisRequest, plan: Plan) -> Response:
    """``Accept: application/json`` (mist, mistv2): ``{"audioContent": "<base64>"}``."""
    fmt = from_audio_format_param(req.audio_format or "mp3", allowed=JSON_VARIANT_FORMATS)
    rate = req.sampling_rate or default_rate(plan.model_id, fmt.value)
    stats = StreamStats()
    try:
        with e.unhandled_as(500, e.INTERNAL, json_body=True, what="synthesis failed (JSON variant)", logger=log):
            audio = await in_engine_thread(services, _whole, services, plan, fmt, rate, stats)
    finally:
        await services.offload(record, services, principal, req, plan, stats, transport="http", request_id=uuid.uuid4().hex)
    return JSONResponse({"audioContent": base64.b64encode(audio).decode()})


async def sse_variant(services: Services, principal: Principal, req: SynthesisRequest, plan: Plan) -> Response:
    """``Accept: text/event-stream`` (mistv2): ``chunk`` events, then timestamps, then ``done``."""
    fmt = from_audio_format_param(req.audio_format or "pcm")
    rate = req.sampling_rate or default_rate(plan.model_id, fmt.value)
    stats = StreamStats()
    chunks = encoded_stream(
        pcm_stream(services.synthesizer, plan.voice, plan.units, plan.controls, sample_rate=rate, stats=stats), fmt, rate
    )

    request_id = uuid.uuid4().hex

    async def events() -> AsyncIterator[bytes]:
        recorded = False
        try:
            while (data := await in_engine_thread(services, _next, chunks)) is not None:
                yield _event("chunk", {"data": base64.b64encode(data).decode()})
            # Billed before "done" goes out: a client that saw the end is billed even if we die now.
            recorded = True
            await services.offload(record, services, principal, req, plan, stats, transport="http", request_id=request_id)
            words = {"words": [w.word for w in stats.words], "start": [round(w.start, 3) for w in stats.words],
                     "end": [round(w.end, 3) for w in stats.words]}
            yield _event("timestamps", {"word_timestamps": words})
            yield _event("done", {})
        finally:
            chunks.close()
            if not recorded:  # the client went away part-way: bill what was made
                with anyio.CancelScope(shield=True):
                    await services.offload(
                        record, services, principal, req, plan, stats, transport="http", request_id=request_id
                    )

    return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})


def _event(name: str, data: dict[str, object]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
