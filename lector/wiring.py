"""The composition root: settings in, the concrete parts every process shares out.

Entry points (the API factory, the Celery app, the CLI, the bench scripts) call these; nothing
below them reads settings. Each builder does its I/O when called, never at import.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lector.settings import Settings

if TYPE_CHECKING:  # imported where built: a process that needs no engine never imports torch
    from speech.engines.base import Engine
    from speech.synthesizer import Synthesizer
    from speech.voices import Catalog, Voice
    from store.objects import ObjectStore

DEFAULT_DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/lector"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def resolved_database_url(settings: Settings) -> str:
    return settings.database_url or DEFAULT_DATABASE_URL


def resolved_redis_url(settings: Settings) -> str:
    return settings.redis_url or DEFAULT_REDIS_URL


def resolved_broker_url(settings: Settings) -> str:
    """Celery's broker: ``LECTOR_BROKER_URL`` (RabbitMQ on a farm), else the Redis lector uses."""
    return settings.broker_url or resolved_redis_url(settings)


def build_object_store(settings: Settings) -> ObjectStore:
    from store.objects import build_object_store as build

    secret = settings.s3_secret_access_key.get_secret_value() if settings.s3_secret_access_key else None
    return build(
        s3_bucket=settings.s3_bucket,
        s3_endpoint_url=settings.s3_endpoint_url,
        s3_region=settings.s3_region,
        s3_access_key_id=settings.s3_access_key_id,
        s3_secret_access_key=secret,
        local_root=settings.resolved_objects_dir,
    )


def build_catalog(settings: Settings) -> Catalog:
    """The shipped catalog, or the operator's own (``LECTOR_VOICE_CATALOG``) to add voices."""
    from speech.voices import Catalog

    return Catalog.load(settings.voice_catalog)


def object_fetcher(objects: Callable[[], ObjectStore], directory: Path) -> Callable[[str], Path]:
    """Object-store key -> local file, for voices whose weights live in the store (``s3://<key>``).

    Each object is downloaded once into ``directory`` (atomically: a crash leaves no half file)
    and reused by every later load in this or another process on the machine. The store is
    built on first use, so processes whose voices need none never connect to one."""

    def fetch(key: str) -> Path:
        target = directory / hashlib.sha256(key.encode()).hexdigest()[:16] / Path(key).name
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.name}.{os.getpid()}.part")
            partial.write_bytes(objects().get_bytes(key))
            os.replace(partial, target)
        return target

    return fetch


def build_synthesizer(settings: Settings) -> Synthesizer:
    """Engines loaded on first use. The device ("auto": CUDA if torch sees one) is resolved then
    too: a process that builds a synthesizer and never loads an engine (a worker of the cpu
    queue only plans and assembles) never imports torch, ~1.5 s of CPU at each start."""
    from speech.engines.registry import load_engine
    from speech.synthesizer import Synthesizer

    resolved: list[str] = []
    cache_dir = settings.data_dir / "weights-cache"

    fetch = object_fetcher(lambda: build_object_store(settings), settings.data_dir / "voices")

    def resolved_device() -> str:
        if not resolved:  # under the synthesizer's lock, as every load is
            device = settings.device
            if device == "auto":
                import torch

                device = "cuda" if torch.cuda.is_available() else "cpu"
            resolved.append(device)
        return resolved[0]

    def loader(voice: Voice) -> Engine:
        from lector.engine_metrics import instrument

        device = resolved_device()
        batching = settings.engine_batching == "on" or (
            settings.engine_batching == "auto" and device.startswith("cuda")
        )
        engine = load_engine(
            voice, device=device, threads=settings.torch_threads, cache_dir=cache_dir,
            dtype=settings.engine_dtype, fetch=fetch, vits_runtime=settings.vits_runtime,
            kokoro_kernels=settings.kokoro_kernels, kokoro_convolutions=settings.kokoro_convolutions,
        )
        # formant voices run on the CPU whatever the device setting
        engine = instrument(engine, kind=str(voice.engine), device=device if voice.engine != "espeak" else "cpu")
        if batching and voice.engine != "espeak":  # the formant voices are cheap, on the CPU
            from speech.batched_engine import BatchedEngine

            return BatchedEngine(engine, window_ms=settings.model_window_ms, max_batch=settings.model_max_batch)
        return engine

    return Synthesizer(loader)
