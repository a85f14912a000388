"""``POST /v1/service-tts``: streaming synthesis, audio chosen by ``Accept``.

The first sentence is synthesized before the response starts: a failure there can still be a
proper 500 (JSON ``{"error": ...}``, as the vendor API contract says), and the first bytes leave as soon as it
is done. The rest streams sentence by sentence. Usage is recorded when the stream ends, also
when the client went away part-way: what was synthesized is billed, nothing more
(``facade.metered``, shared by every transport).
"""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from facade import errors as e
from facade.deps import Principal, PrincipalDep, Services, ServicesDep
from facade.metered import MeteredSynthesis, encoded_whole
from facade.metrics import observe_first_byte
from facade.parts import Part
from facade.request_resolution import ResolvedRequest, default_rate, resolve
from facade.validation import SynthesisRequest, checked_rate, parse_json_body, parse_request
from facade.word_timestamps import word_timestamps
from speech.audio import (
    JSON_VARIANT_FORMATS,
    AudioFormat,
    Representation,
    from_audio_format_param,
    negotiate,
    not_acceptable_message,
)

log = logging.getLogger("lector.tts")
router = APIRouter()
NEEDS: Final = frozenset({Part.AUTHENTICATOR})  # facade.parts: checked before serving

JSON_MODELS = frozenset({"mist", "mistv2"})
SSE_MODELS = frozenset({"mistv2"})


@router.post("/v1/service-tts", response_model=None)
async def service_tts(request: Request, services: ServicesDep, principal: PrincipalDep) -> Response:
    """Synthesize ``text`` with ``speaker`` and stream it in the format named by ``Accept``."""
    req = parse_request(parse_json_body(await request.body()))
    resolved = await services.offload(resolve, services, req, principal, endpoint="service-tts")
    choice = negotiate(
        request.headers.get("accept"),
        allow_json=resolved.requested_model in JSON_MODELS,
        allow_sse=resolved.requested_model in SSE_MODELS,
    )
    if choice.representation is Representation.NOT_ACCEPTABLE:
        raise e.ApiError(406, not_acceptable_message(resolved.requested_model))
    if choice.representation is Representation.JSON:
        return await json_variant(services, principal, req, resolved)
    if choice.representation is Representation.EVENT_STREAM:
        return await sse_variant(services, principal, req, resolved)
    fmt = choice.format or AudioFormat.PCM
    accept_rate = checked_rate(choice.rate_param)
    rate = req.sampling_rate or accept_rate or default_rate(resolved.model_id, fmt.value)
    return await audio_stream(services, principal, req, resolved, fmt, rate, transport="http")


async def audio_stream(
    services: Services, principal: Principal, req: SynthesisRequest, resolved: ResolvedRequest, fmt: AudioFormat, rate: int, *, transport: str
) -> Response:
    metered = MeteredSynthesis(services, principal, req, resolved, rate=rate, transport=transport)
    metered.open(fmt)
    started = time.perf_counter()
    try:
        # The vendor API contract: an unhandled 500 here is JSON.
        with e.unhandled_as(500, e.INTERNAL, json_body=True, what="synthesis failed before the first byte", logger=log):
            first = await metered.next()
    except BaseException:
        await metered.finish()
        raise
    observe_first_byte(transport, fmt.value)

    async def body() -> AsyncIterator[bytes]:
        # The usage row is committed once the last unit is synthesized and before its bytes go out,
        # so a response the client saw complete is always billed, even if the process dies after.
        try:
            pending = first
            while pending is not None:
                if metered.complete:
                    await metered.bill()
                if pending:
                    yield pending
                pending = await metered.next()
        finally:
            await metered.finish()  # the client went away (or synthesis failed) part-way: bill what was made

    # Server-Timing lets a client (and bench/latency.py) split time to first byte into lector's own
    # overhead and the first sentence's synthesis (engine, resampling, encoding).
    first_ms = (time.perf_counter() - started) * 1000
    headers = {"Cache-Control": "no-store", "Server-Timing": f"synth;dur={first_ms:.1f}"}
    return StreamingResponse(body(), media_type=fmt.content_type(rate), headers=headers)


async def json_variant(services: Services, principal: Principal, req: SynthesisRequest, resolved: ResolvedRequest) -> Response:
    """``Accept: application/json`` (mist, mistv2): ``{"audioContent": "<base64>"}``."""
    fmt = from_audio_format_param(req.audio_format or "mp3", allowed=JSON_VARIANT_FORMATS)
    rate = req.sampling_rate or default_rate(resolved.model_id, fmt.value)
    metered = MeteredSynthesis(services, principal, req, resolved, rate=rate, transport="http")
    with e.unhandled_as(500, e.INTERNAL, json_body=True, what="synthesis failed (JSON variant)", logger=log):
        audio = await metered.whole(encoded_whole(fmt, rate))
    return JSONResponse({"audioContent": base64.b64encode(audio).decode()})


async def sse_variant(services: Services, principal: Principal, req: SynthesisRequest, resolved: ResolvedRequest) -> Response:
    """``Accept: text/event-stream`` (mistv2): ``chunk`` events, then timestamps, then ``done``."""
    fmt = from_audio_format_param(req.audio_format or "pcm")
    rate = req.sampling_rate or default_rate(resolved.model_id, fmt.value)
    metered = MeteredSynthesis(services, principal, req, resolved, rate=rate, transport="http")
    metered.open(fmt)

    async def events() -> AsyncIterator[bytes]:
        try:
            while (data := await metered.next()) is not None:
                yield _event("chunk", {"data": base64.b64encode(data).decode()})
            # Billed before "done" goes out: a client that saw the end is billed even if we die now.
            await metered.bill()
            yield _event("timestamps", {"word_timestamps": word_timestamps(metered.stats.words)})
            yield _event("done", {})
        finally:
            await metered.finish()  # the client went away part-way: bill what was made

    return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})


def _event(name: str, data: dict[str, object]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
