"""The FastAPI application: built by a factory, its services created in the lifespan.

Error bodies are the vendor API contract's plain-text messages, so FastAPI's default JSON error handlers are
replaced by ``facade.errors.install``: every error funnels through that one table.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import fastapi.routing
from fastapi import Depends, FastAPI

from facade import console, metrics, openapi, parts
from facade import errors as e
from facade.deps import Services
from facade.limits import BodyLimit
from facade.loop_watch import LoopWatch
from facade.parts import Needs, Part
from facade.request_log import RequestContextMiddleware, bind_path_ids
from facade.routes import (
    admin,
    health,
    job_stream,
    jobs,
    lexicons,
    openai_speech,
    tts,
    usage,
    utility,
    voices,
    ws,
)

log = logging.getLogger("lector.facade")


def create_app(
    services_factory: Callable[[], tuple[Services, Callable[[], None]]],
    *,
    max_body_bytes: int = 32 * 1024 * 1024,
    body_timeout_s: float = 120.0,
    loop_stall_ms: int = 0,
) -> FastAPI:
    """The cloud API: every router. ``services_factory`` builds the services and returns them
    with a close function; the body cap and deadline are ``Settings.max_body_bytes`` and
    ``Settings.body_timeout_s``; a loop that stalls ``loop_stall_ms`` (``Settings.loop_stall_ms``;
    0: not watched) is logged with its stack."""
    return compose_app(
        services_factory, mount_cloud_routes, needs=CLOUD_NEEDS, max_body_bytes=max_body_bytes,
        body_timeout_s=body_timeout_s, loop_stall_ms=loop_stall_ms,
    )


#: What the cloud routes need of the services (``facade.parts``): checked before serving.
CLOUD_NEEDS: Needs = {
    "/v1/service-tts, /ws*, /v1/audio/speech and the utilities": tts.NEEDS,
    "the usage rows every stream bills": frozenset({Part.DATABASE}),  # the self-hosted API spools instead
    "/v1/jobs": jobs.NEEDS,
    "/v1/jobs/{id}/stream.m3u8": job_stream.NEEDS,
    "/admin": admin.NEEDS,
    "/v1/usage": usage.NEEDS,
    "/v1/lexicons": lexicons.NEEDS,
}


def mount_cloud_routes(app: FastAPI) -> None:
    app.include_router(tts.router)
    app.include_router(voices.router)
    app.include_router(jobs.router)
    app.include_router(job_stream.router)
    app.include_router(ws.router)
    app.include_router(utility.router)
    app.include_router(admin.router)
    app.include_router(usage.router)
    app.include_router(lexicons.router)
    console.install(app)
    app.include_router(openai_speech.router)
    app.include_router(health.router)


def compose_app(
    services_factory: Callable[[], tuple[Services, Callable[[], None]]],
    mount: Callable[[FastAPI], None],
    *,
    needs: Needs,
    max_body_bytes: int = 32 * 1024 * 1024,
    body_timeout_s: float = 120.0,
    loop_stall_ms: int = 0,
) -> FastAPI:
    """An API app with the routes ``mount`` adds (the cloud's, or the self-hosted service's own)
    and what every app of the API shares: the services' lifespan and thread pools, the warm-up,
    OpenAPI, metrics, request ids, the body cap and the one error table. ``needs``: what the
    routes need of the services; a deployment without it does not start (``MissingParts``)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services, close = services_factory()
        try:
            parts.check(services, needs)  # MissingParts: the server does not start
        except parts.MissingParts:
            close()
            raise
        app.state.services = services
        collector = metrics.register_job_collector(services)
        close_pools = services.pools.open()  # every thread the API calls into starts now, before serving
        await services.offload(warm_up, services)
        warm_route_context(app)
        # Everything loaded so far (weights, catalogs, lexicons) lives as long as the process: out
        # of the collector's generations, a full collection under load no longer walks it.
        gc.freeze()
        watch = LoopWatch(asyncio.get_running_loop(), loop_stall_ms / 1000) if loop_stall_ms > 0 else None
        if watch is not None:
            watch.start()
        try:
            yield
        finally:
            if watch is not None:
                watch.stop()
            metrics.unregister(collector)
            close_pools()
            close()

    app = FastAPI(
        title="lector",
        version="0.1.0",
        description="Text-to-speech: the vendor streaming API and a batch engine for long-form audio.",
        lifespan=lifespan,
        dependencies=[Depends(bind_path_ids)],
    )
    mount(app)
    openapi.install(app)
    app.add_api_route("/metrics", metrics.metrics_endpoint, methods=["GET"], include_in_schema=False)
    app.add_middleware(metrics.MetricsMiddleware)
    app.add_middleware(RequestContextMiddleware)  # outermost: its ids are bound for everything inside

    e.install(app)  # every error answer comes from facade/errors.py
    # Outermost: a declared length over the cap is answered before anything reads the body.
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes, timeout_s=body_timeout_s)
    return app


def warm_route_context(app: FastAPI) -> None:
    """Have FastAPI prepare every route now rather than at its first request, on the event loop:
    it builds the routes of an included router (their dependencies, from signatures) when the
    first request walks past them, and notes where an endpoint is defined (for its error
    messages) by reading the module's source with ``inspect.getsourcelines``. The loop watch saw
    both at a burst of first WebSocket opens. FastAPI keeps what it built, so once is enough.
    ``iter_route_contexts`` is FastAPI's own walk (its OpenAPI uses it); the source lookup is
    private, and skipped if a later FastAPI drops it."""
    contexts = getattr(fastapi.routing, "iter_route_contexts", None)
    extract = getattr(fastapi.routing, "_extract_endpoint_context", None)
    for route in contexts(app.routes) if contexts is not None else app.routes:
        dependant = getattr(route, "dependant", None)
        if extract is not None and dependant is not None and dependant.call is not None:
            extract(dependant.call)


def warm_up(services: Services) -> None:
    """Load the default voice and run one synthesis before serving, so the first customer does
    not pay for reading weights (about a second) in their time to first byte. The default voice
    is the catalog's: its default model's first voice, in that voice's own language (an
    operator's catalog need not have the shipped one)."""
    try:
        lineup = services.speech.catalog.voices_of(None)
        if not lineup:
            log.warning("warm-up skipped: the default model %s has no voice", services.speech.catalog.default_model)
            return
        services.speech.synthesizer.synthesize(lineup[0], ["Ready."])
    except Exception:  # a broken default voice must not stop the API; requests will say why
        log.exception("warm-up synthesis failed")
