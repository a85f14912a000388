"""The object store on S3 through boto3: AWS itself or any S3 implementation (the tests use
OpenStack Swift's s3api, a real one that checks signatures and expires presigned URLs).

Choices, and why:
- Path-style addressing and SigV4: S3-compatible servers on a host:port cannot serve
  virtual-hosted buckets, and SigV4 is the only signature every implementation accepts.
- Retries in botocore's "standard" mode: throttling and transient 5xx/connection errors are
  retried with backoff before anything reaches lector's own error handling.
- Checksums only where an operation requires them: flexible checksums (boto3 >= 1.36 default)
  are not understood by every S3 implementation.
- DeleteObjects gets a Content-MD5 header from an event hook: S3 requires an integrity header
  on it, boto3 >= 1.36 sends a CRC32 instead, and Swift (like older S3 implementations) insists
  on Content-MD5.
- Every botocore/boto3 error is translated in one place, ``_translate``, into ``store.errors``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3
from boto3.exceptions import S3TransferFailedError, S3UploadFailedError
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError

from store.errors import ObjectNotFound, ObjectStoreError, ObjectStoreUnavailable
from store.objects.base import check_key, check_prefix

MIB = 1024 * 1024
_NOT_FOUND_CODES = {"NoSuchKey", "404", "NotFound"}
_UNAVAILABLE_CODES = {"ServiceUnavailable", "503", "SlowDown"}
_DELETE_BATCH = 1000  # the S3 limit per DeleteObjects request


def _unwrap(exc: BaseException) -> BaseException:
    """boto3's transfer manager wraps the real error (S3UploadFailedError, S3TransferFailedError);
    find what it wrapped, so a refused connection is still told apart from a missing bucket."""
    seen: set[int] = set()
    while isinstance(exc, S3UploadFailedError | S3TransferFailedError) and id(exc) not in seen:
        seen.add(id(exc))
        inner = exc.__cause__ or exc.__context__
        if inner is None:
            break
        exc = inner
    return exc


def _map_error(exc: BaseException, key: str) -> ObjectStoreError:
    inner = _unwrap(exc)
    if isinstance(inner, ClientError):
        error = inner.response.get("Error", {})
        code = str(error.get("Code", ""))
        status = inner.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if code in _NOT_FOUND_CODES:
            return ObjectNotFound(key)
        if code in _UNAVAILABLE_CODES or status == 503:
            return ObjectStoreUnavailable(f"S3 unavailable ({code}): {error.get('Message', '')}")
        return ObjectStoreError(f"S3 error on {key!r}: {code} {error.get('Message', '')}".rstrip())
    if isinstance(inner, BotoConnectionError | HTTPClientError):
        return ObjectStoreUnavailable(f"S3 endpoint cannot be reached: {inner}")
    return ObjectStoreError(f"S3 error on {key!r}: {inner}")


@contextmanager
def _translate(key: str) -> Iterator[None]:
    """The one boundary where boto3/botocore errors become ``store.errors`` (raised ``from`` the
    original, so the traceback keeps the S3 response)."""
    try:
        yield
    except (ClientError, BotoCoreError, S3UploadFailedError, S3TransferFailedError) as exc:
        raise _map_error(exc, key) from exc


def _add_content_md5(params: dict[str, Any], **_: Any) -> None:
    """Event hook (``before-call.s3.DeleteObjects``): see the module docstring."""
    body = params.get("body") or b""
    if isinstance(body, str):
        body = body.encode()
    digest = hashlib.md5(body, usedforsecurity=False).digest()
    params["headers"]["Content-MD5"] = base64.b64encode(digest).decode("ascii")


class S3ObjectStore:
    """``ObjectStore`` on one S3 bucket (see the module docstring).

    The boto3 client is built here, not at import, and is safe to share between threads; build
    the store after a fork (Celery's ``worker_process_init``), not before.
    """

    def __init__(
        self,
        *,
        bucket: str,
        endpoint_url: str | None = None,
        region: str,
        access_key_id: str | None,
        secret_access_key: str | None,
        create_bucket: bool = False,
        multipart_threshold: int = 16 * MIB,
        multipart_chunksize: int = 8 * MIB,
        max_attempts: int = 4,
        connect_timeout_s: float = 5.0,
        read_timeout_s: float = 60.0,
    ) -> None:
        """``access_key_id``/``secret_access_key`` None: boto3's default chain (environment,
        instance or pod role). ``create_bucket``: create it now if missing (dev and tests)."""
        self._settings: dict[str, Any] = {
            "bucket": bucket, "endpoint_url": endpoint_url, "region": region, "access_key_id": access_key_id,
            "secret_access_key": secret_access_key, "multipart_threshold": multipart_threshold,
            "multipart_chunksize": multipart_chunksize, "max_attempts": max_attempts,
            "connect_timeout_s": connect_timeout_s, "read_timeout_s": read_timeout_s,
        }
        self.bucket = bucket
        self.endpoint_url = endpoint_url
        options: dict[str, Any] = {
            "region_name": region,
            "signature_version": "s3v4",
            "s3": {"addressing_style": "path"},
            "retries": {"mode": "standard", "max_attempts": max_attempts},
            "connect_timeout": connect_timeout_s,
            "read_timeout": read_timeout_s,
        }
        if "request_checksum_calculation" in Config.OPTION_DEFAULTS:  # botocore >= 1.36
            options["request_checksum_calculation"] = "when_required"
            options["response_checksum_validation"] = "when_required"
        self._client = boto3.session.Session().client(
            "s3",
            endpoint_url=endpoint_url,
            region_name=region,
            aws_access_key_id=access_key_id,
            aws_secret_access_key=secret_access_key,
            config=Config(**options),
        )
        self._client.meta.events.register("before-call.s3.DeleteObjects", _add_content_md5)
        self._transfer = TransferConfig(
            multipart_threshold=multipart_threshold,
            multipart_chunksize=multipart_chunksize,
            max_concurrency=4,
        )
        if create_bucket:
            self._create_bucket(region)

    def __repr__(self) -> str:
        return f"S3ObjectStore(bucket={self.bucket!r}, endpoint_url={self.endpoint_url!r})"

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        """Pickled as its settings, so a worker process builds its own client (assembly's
        segments are read in worker processes); the bucket exists by then."""
        return _rebuild, (self._settings,)

    def _create_bucket(self, region: str) -> None:
        kwargs: dict[str, Any] = {"Bucket": self.bucket}
        if region != "us-east-1":  # S3 refuses an explicit us-east-1 location constraint
            kwargs["CreateBucketConfiguration"] = {"LocationConstraint": region}
        try:
            with _translate(self.bucket):
                self._client.create_bucket(**kwargs)
        except ObjectStoreError as exc:
            cause = exc.__cause__
            if isinstance(cause, ClientError) and cause.response.get("Error", {}).get("Code") in (
                "BucketAlreadyOwnedByYou",
                "BucketAlreadyExists",
            ):
                return
            raise

    # -- writes ----------------------------------------------------------------------------

    def put_bytes(self, key: str, data: bytes, *, content_type: str | None = None) -> None:
        check_key(key)
        extra = {"ContentType": content_type} if content_type else {}
        with _translate(key):
            self._client.put_object(Bucket=self.bucket, Key=key, Body=data, **extra)

    def put_file(self, key: str, path: Path, *, content_type: str | None = None) -> None:
        """Multipart above ``multipart_threshold`` (parts uploaded concurrently, each retried on
        its own); a failed multipart upload is aborted by boto3 so no parts linger."""
        check_key(key)
        if not Path(path).is_file():
            raise FileNotFoundError(path)
        extra = {"ContentType": content_type} if content_type else None
        with _translate(key):
            self._client.upload_file(str(path), self.bucket, key, ExtraArgs=extra, Config=self._transfer)

    def delete(self, key: str) -> None:
        check_key(key)
        with _translate(key):
            self._client.delete_object(Bucket=self.bucket, Key=key)

    def delete_prefix(self, prefix: str) -> int:
        """Batched DeleteObjects, 1,000 keys a request. Keys are listed first and counted as
        the server confirms them; any per-key failure raises."""
        deleted = 0
        batch: list[str] = []
        for key in self.iter_keys(prefix):
            batch.append(key)
            if len(batch) == _DELETE_BATCH:
                deleted += self._delete_batch(batch, prefix)
                batch = []
        if batch:
            deleted += self._delete_batch(batch, prefix)
        return deleted

    def _delete_batch(self, keys: list[str], prefix: str) -> int:
        with _translate(prefix):
            response = self._client.delete_objects(
                Bucket=self.bucket,
                Delete={"Objects": [{"Key": k} for k in keys], "Quiet": False},
            )
        errors = response.get("Errors") or []
        if errors:
            first = errors[0]
            raise ObjectStoreError(
                f"S3 refused to delete {len(errors)} of {len(keys)} keys under {prefix!r}, "
                f"first {first.get('Key')!r}: {first.get('Code')} {first.get('Message', '')}"
            )
        return len(response.get("Deleted") or [])

    # -- reads -----------------------------------------------------------------------------

    def get_bytes(self, key: str) -> bytes:
        check_key(key)
        with _translate(key):
            response = self._client.get_object(Bucket=self.bucket, Key=key)
            body: bytes = response["Body"].read()
        return body

    def download_file(self, key: str, path: Path) -> None:
        """boto3 writes to a temporary name and renames, so ``path`` is never left truncated."""
        check_key(key)
        with _translate(key):
            self._client.download_file(self.bucket, key, str(path), Config=self._transfer)

    def exists(self, key: str) -> bool:
        check_key(key)
        try:
            with _translate(key):
                self._client.head_object(Bucket=self.bucket, Key=key)
        except ObjectNotFound:
            return False
        return True

    def presigned_url(self, key: str, *, expires_s: int, download_name: str | None = None) -> str | None:
        """A SigV4 presigned GET, computed locally (no request); S3 caps ``expires_s`` at 7 days.
        ``download_name`` becomes ``response-content-disposition: attachment``."""
        check_key(key)
        if expires_s <= 0:
            raise ObjectStoreError(f"presigned URL lifetime must be positive, got {expires_s}")
        params: dict[str, Any] = {"Bucket": self.bucket, "Key": key}
        if download_name:
            safe = "".join(c for c in download_name if c.isascii() and (c.isalnum() or c in "._-")) or "download"
            params["ResponseContentDisposition"] = f'attachment; filename="{safe}"'
        with _translate(key):
            url: str = self._client.generate_presigned_url("get_object", Params=params, ExpiresIn=expires_s)
        return url

    def iter_keys(self, prefix: str = "") -> Iterator[str]:
        check_prefix(prefix)
        paginator = self._client.get_paginator("list_objects_v2")
        with _translate(prefix):
            for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
                for item in page.get("Contents") or []:
                    yield item["Key"]


def _rebuild(settings: dict[str, Any]) -> S3ObjectStore:
    return S3ObjectStore(**settings)
