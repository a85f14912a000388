"""The composition root: settings in, the concrete parts every process shares out.

Entry points (the API factory, the Celery app, the CLI, the bench scripts) call these; nothing
below them reads settings. Each builder does its I/O when called, never at import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lector.settings import Settings

if TYPE_CHECKING:
    from speech.synthesizer import Synthesizer

DEFAULT_DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/lector"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def resolved_database_url(settings: Settings) -> str:
    return settings.database_url or DEFAULT_DATABASE_URL


def resolved_redis_url(settings: Settings) -> str:
    return settings.redis_url or DEFAULT_REDIS_URL


def build_object_store(settings: Settings) -> Any:
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


def build_catalog(settings: Settings) -> Any:
    from speech.voices import Catalog

    return Catalog.load()


def build_synthesizer(settings: Settings) -> Synthesizer:
    from speech.engines.registry import load_engine
    from speech.synthesizer import Synthesizer

    device = settings.device
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    cache_dir = settings.data_dir / "weights-cache"

    def loader(voice: Any) -> Any:
        return load_engine(voice, device=device, threads=settings.torch_threads, cache_dir=cache_dir)

    return Synthesizer(loader)
