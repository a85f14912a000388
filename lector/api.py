"""The API's composition root: the cloud stack's services built from ``Settings`` and handed to
``facade.app.create_app``. The facade never reads settings or builds its own parts.

``create_app_from_env`` is uvicorn's factory (``lector serve``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from facade.app import create_app
from facade.auth import db_authenticator
from facade.deps import Access, Brokers, JobRules, Services, Speech, Storage, Usage
from facade.serving_pools import ServingPools
from facade.usage_spool import DeadLetters, UsageSpool
from lector.settings import Settings
from lector.wiring import (
    build_catalog,
    build_object_store,
    build_synthesizer,
    resolved_broker_url,
    resolved_database_url,
    resolved_redis_url,
)
from scheduler.lexicons import LexiconLimits
from store.db.session import make_engine, make_sessionmaker, scoped_sessions


def cloud_services(settings: Settings) -> tuple[Services, Callable[[], None]]:
    """The cloud stack: PostgreSQL, Redis, the object store, in-process engines."""
    import redis

    from scheduler.queue import Dispatcher, make_celery
    from scheduler.queue_depth import queue_depths

    engine = make_engine(resolved_database_url(settings))
    redis_client = redis.Redis.from_url(resolved_redis_url(settings), socket_timeout=2, socket_connect_timeout=2)
    factory = make_sessionmaker(engine)
    depths = queue_depths(resolved_broker_url(settings))

    sessions = scoped_sessions(factory)
    outbox = _usage_outbox(settings, sessions)
    services = Services(
        speech=Speech(
            catalog=build_catalog(settings),
            synthesizer=cloud_synthesizer(settings, build_synthesizer),
            lexicon_limits=LexiconLimits(
                per_account=settings.lexicons_per_account, max_bytes=settings.lexicon_max_bytes,
                per_request=settings.lexicons_per_request,
            ),
            first_audio_s=settings.stream_first_audio_ms / 1000,
        ),
        storage=Storage(
            session_factory=sessions, objects=build_object_store(settings), presign_seconds=settings.s3_presign_seconds,
        ),
        brokers=Brokers(
            dispatcher=Dispatcher(make_celery(
                resolved_broker_url(settings), visibility_timeout_s=settings.visibility_timeout_s,
                heartbeat_s=settings.broker_heartbeat_s,
            )),
            queue_depths=depths,
            redis=redis_client,
        ),
        access=Access(
            authenticator=db_authenticator(sessions),
            admin_token=settings.admin_token.get_secret_value() if settings.admin_token else None,
        ),
        jobs=JobRules(
            max_job_chars=settings.max_job_chars, max_active_jobs=settings.max_active_jobs,
            account_batch_window=settings.account_batch_window, webhook_allow_private=settings.webhook_allow_private,
            stall_after_s=settings.stall_after_s,
        ),
        usage=Usage(outbox=outbox),
        pools=ServingPools(blocking_slots=settings.blocking_threads, engine_slots=engine_slots_for(settings)),
    )

    def close() -> None:
        outbox.close()
        engine.dispose()
        redis_client.close()
        depths.close()

    return services, close


def _usage_outbox(settings: Settings, sessions: Callable[[], Any]) -> UsageSpool:
    """Usage rows PostgreSQL could not take, on disk until it can (``Settings.usage_outbox_dir``)."""
    from facade.usage import replay_into

    directory = settings.usage_outbox_dir
    dead_letters = DeadLetters(directory)
    outbox = UsageSpool(
        directory, None, post=replay_into(sessions, dead_letters), interval_s=5.0, dead_letters=dead_letters
    )
    outbox.start()
    return outbox


REMOTE_ENGINE_SLOTS = 64  # steps in flight to a model service: what its batches can gather at once


def engine_slots_for(settings: Settings) -> int:
    """One in-process synthesis step per core by default. With a model service (``MODEL_URL``) a
    step mostly waits for its answer, and the service batches the steps of many streams per GPU
    call, so many run at once: 64 threads started with the API (anyio's pool, which
    ``LECTOR_ENGINE_SLOTS=0`` keeps, would allow 40 and start them on the event loop)."""
    if settings.engine_slots >= 0:
        return int(settings.engine_slots)
    if settings.model_url:
        return REMOTE_ENGINE_SLOTS
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def create_app_from_env() -> FastAPI:
    """uvicorn's factory: settings from the environment (``LECTOR_*``)."""
    settings = Settings()
    return create_app(
        lambda: cloud_services(settings), max_body_bytes=settings.max_body_bytes, body_timeout_s=settings.body_timeout_s,
        loop_stall_ms=settings.loop_stall_ms,
    )


def cloud_synthesizer(settings: Settings, build_local: Callable[[Settings], Any]) -> Any:
    """Neural voices from the model service at ``MODEL_URL`` when set (many facades, many GPU
    hosts), the formant fallbacks in-process; everything in-process otherwise."""
    if not settings.model_url:
        return build_local(settings)
    from facade.remote_engine import remote_synthesizer

    return remote_synthesizer(
        settings.model_url, local=build_local(settings),
        connect_timeout=settings.model_connect_timeout_s, read_timeout=settings.model_read_timeout_s,
    )
