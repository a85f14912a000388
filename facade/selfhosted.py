"""The self-hosted API service: ``POST /`` and ``GET /health`` on :8000, the JSON WebSocket on :8001.

The vendor API contract's self-hosted table, served by the cloud code paths: the body is parsed and resolved
exactly as for ``/v1/service-tts`` (same 400s, same auth header), the audio streams through the
same ``audio_stream``, and the WebSocket app mounts the cloud ``/ws3`` router unchanged. What
differs is only what the vendor API contract says differs:

- Without an audio ``Accept`` (missing, a wildcard, ``application/json``, or any non-audio type)
  the answer is ``{"audioContent": {"model_output": "<base64>"}}``. The base64 is a WAV file
  unless the body's ``audioFormat`` asks for ``mp3``, ``ogg``, ``mulaw`` or ``pcm``: WAV because
  the JSON shape carries no rate or encoding, and a WAV header does. A concrete audio type we
  cannot stream (``audio/flac``) is still the vendor API contract's 406.
- ``GET /health`` (no auth, for probes) reports the licence and whether every configured model
  service answers its ``/readyz``; it is 200 whatever it reports, as the vendor API contract shows one shape.
- Synthesis is proxied to a model service (``facade.remote_engine``); a down model service is a
  500 ``internal error`` within about a second.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, Response

from facade import errors as e
from facade.app import compose_app
from facade.deps import Principal, PrincipalDep, Services, ServicesDep
from facade.metered import MeteredSynthesis, encoded_whole
from facade.parts import Part
from facade.request_resolution import ResolvedRequest, default_rate, resolve
from facade.routes import ws
from facade.routes.tts import audio_stream
from facade.selfhosted_runtime import SelfHostedConfig, SelfHostedRuntime
from facade.validation import SynthesisRequest, checked_rate, parse_json_body, parse_request
from speech.audio import (
    JSON_VARIANT_FORMATS,
    AudioFormat,
    Representation,
    from_audio_format_param,
    negotiate,
    not_acceptable_message,
)

ENDPOINT = "self-hosted"
SELF_HOSTED_NEEDS: Final = frozenset({Part.AUTHENTICATOR})  # no database, store or queue here
JSON_OUTPUT_FORMATS = JSON_VARIANT_FORMATS | {AudioFormat.PCM}
DEFAULT_JSON_FORMAT = "wav"

router = APIRouter()


def _names_audio(accept: str | None) -> bool:
    return accept is not None and any(part.strip().lower().startswith("audio/") for part in accept.split(","))


@router.post("/", response_model=None)
async def synthesize(request: Request, services: ServicesDep, principal: PrincipalDep) -> Response:
    """The vendor API contract's self-hosted synthesis: audio for an audio ``Accept``, the JSON shape otherwise."""
    req = parse_request(parse_json_body(await request.body()))
    resolved = await services.offload(resolve, services, req, principal, endpoint=ENDPOINT)
    accept = request.headers.get("accept")
    choice = negotiate(accept, allow_json=False, allow_sse=False)
    if choice.representation is Representation.AUDIO and not choice.defaulted and choice.format is not None:
        accept_rate = checked_rate(choice.rate_param)
        rate = req.sampling_rate or accept_rate or default_rate(resolved.model_id, choice.format.value)
        return await audio_stream(services, principal, req, resolved, choice.format, rate, transport="http")
    if choice.representation is Representation.NOT_ACCEPTABLE and _names_audio(accept):
        raise e.ApiError(406, not_acceptable_message(resolved.requested_model))
    return await json_audio(services, principal, req, resolved)


async def json_audio(services: Services, principal: Principal, req: SynthesisRequest, resolved: ResolvedRequest) -> Response:
    """``{"audioContent": {"model_output": "<base64>"}}``: the whole audio, once synthesized."""
    fmt = from_audio_format_param(req.audio_format or DEFAULT_JSON_FORMAT, allowed=JSON_OUTPUT_FORMATS)
    rate = req.sampling_rate or default_rate(resolved.model_id, fmt.value)
    metered = MeteredSynthesis(services, principal, req, resolved, rate=rate, transport="http")
    # as the streaming endpoint: an unhandled 500 is JSON
    with e.unhandled_as(500, e.INTERNAL, json_body=True, what="self-hosted synthesis failed"):
        audio = await metered.whole(encoded_whole(fmt, rate))
    return JSONResponse({"audioContent": {"model_output": base64.b64encode(audio).decode()}})


def health_router(runtime: SelfHostedRuntime) -> APIRouter:
    health = APIRouter()

    @health.get("/health")
    async def get_health() -> Response:
        reachable = await runtime.models_reachable()
        return JSONResponse({
            "apiStatus": "ok",
            "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "licenseStatus": runtime.gate.status,
            "modelReachable": reachable,
        })

    return health


def _services_factory(runtime: SelfHostedRuntime) -> Callable[[], tuple[Services, Callable[[], None]]]:
    def factory() -> tuple[Services, Callable[[], None]]:
        return runtime.acquire(), runtime.release

    return factory


def create_selfhosted_app(
    config: SelfHostedConfig,
    *,
    runtime: SelfHostedRuntime | None = None,
    catalog_factory: Callable[[], Any] | None = None,
) -> FastAPI:
    """The HTTP app (:8000). Its ``state.runtime`` is what ``create_selfhosted_ws_app`` takes."""
    runtime = runtime or SelfHostedRuntime(config, catalog_factory=catalog_factory)
    health = health_router(runtime)

    def mount(app: FastAPI) -> None:
        app.include_router(router)
        app.include_router(health)

    app = compose_app(_services_factory(runtime), mount, needs={"/": SELF_HOSTED_NEEDS})
    app.state.runtime = runtime
    return app


def create_selfhosted_ws_app(runtime: SelfHostedRuntime) -> FastAPI:
    """The JSON WebSocket app (:8001): the cloud ``/ws3`` protocol, on the same runtime.

    ``/ws3`` is the vendor API contract's JSON WebSocket; ``/ws`` and ``/ws2`` come with the router and cost
    nothing, so they stay for clients that use them."""
    app = compose_app(_services_factory(runtime), lambda app: app.include_router(ws.router),
                      needs={"/ws3": SELF_HOSTED_NEEDS})
    app.state.runtime = runtime
    return app

