"""The object store contract: what the rest of lector may ask of wherever bytes live.

Two backends satisfy it: S3 (any S3 implementation; production and the integration tests run
against a real one) and a local directory (the single-machine default, so `make run` needs no
service). Keys are '/'-separated relative paths such as ``jobs/<id>/chunks/00012.wav``; callers
build them deterministically so that a task that runs twice overwrites rather than duplicates.

Every method raises only ``store.errors`` classes: ``ObjectNotFound`` for a missing key,
``ObjectStoreUnavailable`` when the backend cannot be reached, ``ObjectStoreError`` otherwise
(an invalid key included). The one exception is the caller's own local file in ``put_file`` and
``download_file``: a missing source or an unwritable destination stays an ``OSError``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, runtime_checkable

from store.errors import ObjectStoreError


@runtime_checkable
class ObjectStore(Protocol):
    """A flat key -> bytes store. Small and synchronous on purpose: Celery tasks and the
    facade's thread pool call it; nothing needs more than these operations."""

    def put_bytes(self, key: str, data: bytes, *, content_type: str | None = None) -> None:
        """Store ``data`` under ``key``, replacing any object there. Readers never see a partial
        object: an interrupted write leaves the previous object (or none)."""
        ...

    def put_file(self, key: str, path: Path, *, content_type: str | None = None) -> None:
        """Store the file at ``path`` under ``key`` without reading it into memory. Large files
        (a finished audiobook) go up in parts, so one failed part does not restart the upload."""
        ...

    def get_bytes(self, key: str) -> bytes:
        """The whole object in memory: meant for small objects (source text, one chunk's audio)."""
        ...

    def download_file(self, key: str, path: Path) -> None:
        """Stream the object to ``path`` (created or replaced), for objects too big for memory."""
        ...

    def exists(self, key: str) -> bool:
        """Whether an object is stored under ``key``; lets an idempotent task skip done work."""
        ...

    def delete(self, key: str) -> None:
        """Remove the object under ``key``. Deleting a missing key is not an error, so a retried
        cleanup succeeds."""
        ...

    def delete_prefix(self, prefix: str) -> int:
        """Remove every object whose key starts with ``prefix`` (a job's intermediate chunks) and
        return how many were removed."""
        ...

    def presigned_url(self, key: str, *, expires_s: int, download_name: str | None = None) -> str | None:
        """A URL a customer can fetch the object from without credentials, valid ``expires_s``
        seconds; None where the backend cannot presign (a local directory), so the caller serves
        the bytes itself instead. With ``download_name`` the object is served as an attachment
        of that name (a browser saves it instead of playing it)."""
        ...

    def iter_keys(self, prefix: str = "") -> Iterator[str]:
        """Keys starting with ``prefix``, in lexicographic order, lazily (a job may have
        thousands of chunks)."""
        ...


def check_key(key: str) -> str:
    """Return ``key`` if it is a valid object key, else raise ``ObjectStoreError``.

    Both backends apply the same rule, so a key that works on a developer's disk works on S3
    and the reverse: a relative '/'-separated path with no empty, '.' or '..' segment, no
    backslash and no NUL. On disk this is what keeps a key inside the store's root.
    """
    if not isinstance(key, str) or not key:
        raise ObjectStoreError(f"invalid object key {key!r}: empty")
    if "\x00" in key or "\\" in key:
        raise ObjectStoreError(f"invalid object key {key!r}: NUL or backslash")
    if key.startswith("/"):
        raise ObjectStoreError(f"invalid object key {key!r}: absolute")
    if any(part in ("", ".", "..") for part in key.split("/")):
        raise ObjectStoreError(f"invalid object key {key!r}: empty, '.' or '..' segment")
    return key


def check_prefix(prefix: str) -> str:
    """Return ``prefix`` if keys could start with it (``""`` means every key), else raise.
    A prefix may end in a partial segment (``jobs/12/chunk-``) or a '/'."""
    if prefix == "":
        return prefix
    head, _, tail = prefix.rpartition("/")
    if head:
        check_key(head)
    if tail in (".", "..") or "\x00" in tail or "\\" in tail:
        raise ObjectStoreError(f"invalid key prefix {prefix!r}")
    if prefix.startswith("/"):
        raise ObjectStoreError(f"invalid key prefix {prefix!r}: absolute")
    return prefix
