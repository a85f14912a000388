"""The workers' composition root: the Celery app, its tasks and each process's resources, built
from ``Settings`` and handed down to ``workers.tasks`` (``lector worker`` runs it).

Nothing here runs at import: ``make_worker_app`` builds the app, and the resources (database
engine, object store, voices) are built on the first task inside each worker process.
"""

from __future__ import annotations

from celery import Celery

from lector.settings import Settings
from lector.wiring import (
    build_catalog,
    build_object_store,
    build_synthesizer,
    resolved_broker_url,
    resolved_database_url,
)
from scheduler.queue import PATIENT_RETRY, Dispatcher, make_celery
from speech.asr import WhisperRecognizer
from store.db.session import make_engine, make_sessionmaker, scoped_sessions
from workers import log_signals, tasks
from workers.resources import Lazy, Resources, TaskConfig


def task_config(settings: Settings) -> TaskConfig:
    return TaskConfig(
        job_batch_chars=settings.job_batch_chars,
        account_batch_window=settings.account_batch_window,
        synth_group_chars=settings.synth_group_chars,
        assembly_workers=settings.assembly_workers,
        assembly_ahead=settings.assembly_ahead,
        live_playlist=settings.live_playlist,
        presign_seconds=settings.s3_presign_seconds,
        webhook_allow_private=settings.webhook_allow_private,
        webhook_timeout_s=settings.webhook_timeout_s,
        visibility_timeout_s=settings.visibility_timeout_s,
        stall_after_s=settings.stall_after_s,
        retention_days=settings.retention_days,
    )


def build_resources(settings: Settings, dispatcher: Dispatcher) -> Resources:
    factory = make_sessionmaker(make_engine(resolved_database_url(settings)))

    sessions = scoped_sessions(factory)

    return Resources(
        config=task_config(settings),
        sessions=sessions,
        objects=build_object_store(settings),
        catalog=build_catalog(settings),
        synthesizer=build_synthesizer(settings),
        dispatcher=dispatcher,
        on_billed=count_job_billing,
        # Whisper base is joined from its two packages once, under the data directory.
        recognizer=WhisperRecognizer(cache_root=settings.data_dir / "asr", cpu_threads=settings.torch_threads or 2),
    )


def count_job_billing(model: str, characters: int) -> None:
    """A synthesize batch billed ``characters`` under ``model``: the worker's
    ``lector_characters_billed_total{transport="job"}`` (served on its metrics port)."""
    from facade.billing_metric import CHARACTERS_BILLED

    CHARACTERS_BILLED.labels(model, "job").inc(characters)


def make_worker_app(settings: Settings) -> Celery:
    """The Celery app with lector's tasks registered; no connection is opened until it runs."""
    app = make_celery(
        resolved_broker_url(settings), visibility_timeout_s=settings.visibility_timeout_s,
        heartbeat_s=settings.broker_heartbeat_s,
    )
    tasks.register(app, Lazy(lambda: build_resources(settings, Dispatcher(app, PATIENT_RETRY))))
    log_signals.connect()  # job and task ids on every log line (JSON logs), task metrics
    return app
