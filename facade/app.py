"""The FastAPI application: built by a factory, its services created in the lifespan.

Error bodies are the seed's plain-text messages, so FastAPI's default JSON error handlers are
replaced: request-validation errors can only come from query parameters here (bodies are parsed
by hand), and every other error funnels through ``facade.errors``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from facade import errors as e
from facade import metrics, openapi
from facade.auth import db_authenticator
from facade.deps import Services
from facade.request_log import RequestContextMiddleware, bind_path_ids
from facade.routes import admin, health, jobs, openai_speech, tts, utility, voices, ws
from scheduler.errors import SchedulerError
from speech.errors import SpeechError
from store.errors import StoreError

log = logging.getLogger("lector.facade")


def create_app(services_factory: Callable[[], tuple[Services, Callable[[], None]]]) -> FastAPI:
    """``services_factory`` builds the services and returns them with a close function."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services, close = services_factory()
        app.state.services = services
        collector = metrics.register_job_collector(services)
        await run_in_threadpool(warm_up, services)
        try:
            yield
        finally:
            metrics.unregister(collector)
            close()

    app = FastAPI(
        title="lector",
        version="0.1.0",
        description="Text-to-speech: the vendor streaming API and a batch engine for long-form audio.",
        lifespan=lifespan,
        dependencies=[Depends(bind_path_ids)],
    )
    app.include_router(tts.router)
    app.include_router(voices.router)
    app.include_router(jobs.router)
    app.include_router(ws.router)
    app.include_router(utility.router)
    app.include_router(admin.router)
    app.include_router(openai_speech.router)
    app.include_router(health.router)
    openapi.install(app)
    app.add_api_route("/metrics", metrics.metrics_endpoint, methods=["GET"], include_in_schema=False)
    app.add_middleware(metrics.MetricsMiddleware)
    app.add_middleware(RequestContextMiddleware)  # outermost: its ids are bound for everything inside

    # The domain roots are registered by name: Starlette re-raises (and uvicorn logs as unhandled)
    # whatever only the catch-all ``Exception`` handler answered.
    for error_class in (e.ApiError, SpeechError, StoreError, SchedulerError, Exception):
        app.add_exception_handler(error_class, e.handle)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        message = {404: "not found", 405: "method not allowed"}.get(exc.status_code, str(exc.detail))
        return e.plain(exc.status_code, message)

    async def validation_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ())[1:]) or "request"
        return e.plain(400, f"{where}: {first.get('msg', 'invalid')}")

    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    return app


def warm_up(services: Services) -> None:
    """Load the default voice and run one synthesis before serving, so the first customer does
    not pay for reading weights (about a second) in their time to first byte."""
    try:
        voice = services.catalog.resolve(None, "joe", "en")
        services.synthesizer.synthesize(voice, ["Ready."])
    except Exception:  # a missing default voice must not stop the API; requests will say why
        log.exception("warm-up synthesis failed")


def cloud_services(settings: Any) -> tuple[Services, Callable[[], None]]:
    """The cloud stack: PostgreSQL, Redis, the object store, in-process engines."""
    import redis

    from lector.wiring import (
        build_catalog,
        build_object_store,
        build_synthesizer,
        resolved_database_url,
        resolved_redis_url,
    )
    from scheduler.queue import Dispatcher, make_celery
    from store.db.session import make_engine, make_sessionmaker, session_scope

    engine = make_engine(resolved_database_url(settings))
    redis_client = redis.Redis.from_url(resolved_redis_url(settings), socket_timeout=2, socket_connect_timeout=2)
    factory = make_sessionmaker(engine)

    @contextlib.contextmanager
    def sessions() -> Iterator[Any]:
        with session_scope(factory) as session:
            yield session

    services = Services(
        catalog=build_catalog(settings),
        synthesizer=_cloud_synthesizer(settings, build_synthesizer),
        session_factory=sessions,
        objects=build_object_store(settings),
        dispatcher=Dispatcher(make_celery(resolved_redis_url(settings), visibility_timeout_s=settings.visibility_timeout_s)),
        redis=redis_client,
        webhook_allow_private=settings.webhook_allow_private,
        presign_seconds=settings.s3_presign_seconds,
        authenticator=db_authenticator(sessions),
        admin_token=settings.admin_token.get_secret_value() if settings.admin_token else None,
        usage_outbox=_usage_outbox(settings, sessions),
        stall_after_s=settings.stall_after_s,
    )

    def close() -> None:
        services.usage_outbox.close()
        engine.dispose()
        redis_client.close()

    return services, close


def _usage_outbox(settings: Any, sessions: Callable[[], Any]) -> Any:
    """Usage rows PostgreSQL could not take, on disk until it can. One folder per serving port:
    the spool is safe for one process, and a restarted process on that port replays what its
    predecessor left."""
    from facade.usage import replay_into
    from facade.usage_spool import UsageSpool

    outbox = UsageSpool(settings.data_dir / f"usage-outbox-{settings.port}", None, post=replay_into(sessions),
                        interval_s=5.0)
    outbox.start()
    return outbox


def create_app_from_env() -> FastAPI:
    """uvicorn's factory: settings from the environment (``LECTOR_*``)."""
    from lector.settings import Settings

    settings = Settings()
    return create_app(lambda: cloud_services(settings))


def _cloud_synthesizer(settings: Any, build_local: Callable[[Any], Any]) -> Any:
    """Neural voices from the model service at ``MODEL_URL`` when set (many facades, many GPU
    hosts), the formant fallbacks in-process; everything in-process otherwise."""
    if not settings.model_url:
        return build_local(settings)
    from facade.remote_engine import remote_synthesizer

    return remote_synthesizer(
        settings.model_url, local=build_local(settings),
        connect_timeout=settings.model_connect_timeout_s, read_timeout=settings.model_read_timeout_s,
    )
