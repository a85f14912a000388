"""Where lector keeps bytes: source texts, chunk audio, finished works.

``ObjectStore`` is the contract; ``S3ObjectStore`` and ``LocalObjectStore`` implement it;
``build_object_store`` picks one from plain settings values (S3 when a bucket is configured,
else a local directory, so a single machine needs no S3 service).
"""

from __future__ import annotations

from pathlib import Path

from store.objects.base import ObjectStore
from store.objects.local import LocalObjectStore
from store.objects.s3 import S3ObjectStore

__all__ = ["LocalObjectStore", "ObjectStore", "S3ObjectStore", "build_object_store"]


def build_object_store(
    *,
    s3_bucket: str | None,
    s3_endpoint_url: str | None,
    s3_region: str,
    s3_access_key_id: str | None,
    s3_secret_access_key: str | None,
    local_root: Path,
    s3_create_bucket: bool = False,
) -> ObjectStore:
    """Build the configured store. Called from entry points (app lifespan, worker process init)
    with values from ``lector.settings``; it builds clients, so never call it at import."""
    if s3_bucket:
        return S3ObjectStore(
            bucket=s3_bucket,
            endpoint_url=s3_endpoint_url,
            region=s3_region,
            access_key_id=s3_access_key_id,
            secret_access_key=s3_secret_access_key,
            create_bucket=s3_create_bucket,
        )
    return LocalObjectStore(Path(local_root))
