"""S3ObjectStore against a real S3 implementation (Swift s3api): signatures, multipart ETags and
presigned-URL expiry are the server's doing, not a mock's. The contract both backends meet is
``test_objects.py``; this file holds what only S3 does."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import httpx
import pytest

from store.errors import ObjectNotFound, ObjectStoreError, ObjectStoreUnavailable
from store.objects import S3ObjectStore, build_object_store
from tests.fixtures.swift import S3Server, make_s3_store
from tests.support.servers import free_port

pytestmark = pytest.mark.integration

MIB = 1024 * 1024


def test_content_type_is_stored(s3_store: S3ObjectStore, s3_server: S3Server) -> None:
    s3_store.put_bytes("a.mp3", b"ID3", content_type="audio/mpeg")
    url = s3_store.presigned_url("a.mp3", expires_s=60)
    assert url is not None
    assert httpx.get(url).headers["content-type"] == "audio/mpeg"


def test_put_file_large_uses_multipart(s3_server: S3Server, s3_store: S3ObjectStore, tmp_path: Path) -> None:
    size = 17 * MIB + 123
    src = tmp_path / "book.mp3"
    with open(src, "wb") as out:
        for _ in range(size // MIB):
            out.write(os.urandom(MIB))
        out.write(os.urandom(size % MIB))
    s3_store.put_file("works/book.mp3", src, content_type="audio/mpeg")

    # The ETag of a multipart object is md5(concatenated part md5s)-<part count>: S3's own proof.
    url = s3_store.presigned_url("works/book.mp3", expires_s=60)
    assert url is not None
    with httpx.stream("GET", url) as head:  # the URL signs GET: read the headers, not the body
        assert head.status_code == 200
    etag = head.headers["etag"].strip('"')
    chunk = 8 * MIB  # S3ObjectStore's default part size
    parts = [src.read_bytes()[i : i + chunk] for i in range(0, size, chunk)]
    expected = hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest()
    assert etag == f"{expected}-{len(parts)}"
    assert len(parts) == 3
    assert int(head.headers["content-length"]) == size

    dest = tmp_path / "back.mp3"
    s3_store.download_file("works/book.mp3", dest)
    assert hashlib.sha256(dest.read_bytes()).digest() == hashlib.sha256(src.read_bytes()).digest()


def test_presigned_url_works_then_expires(s3_store: S3ObjectStore) -> None:
    s3_store.put_bytes("share/me.txt", b"hello listener")
    url = s3_store.presigned_url("share/me.txt", expires_s=60)
    assert url is not None
    response = httpx.get(url)
    assert response.status_code == 200
    assert response.content == b"hello listener"

    short = s3_store.presigned_url("share/me.txt", expires_s=1)
    assert short is not None
    time.sleep(2.2)
    expired = httpx.get(short)
    assert expired.status_code == 403
    assert b"expired" in expired.content.lower()


def test_a_download_name_makes_the_presigned_url_an_attachment(s3_store: S3ObjectStore) -> None:
    s3_store.put_bytes("share/book.mp3", b"ID3 not really")
    plain = httpx.get(s3_store.presigned_url("share/book.mp3", expires_s=60) or "")
    assert plain.status_code == 200 and "attachment" not in plain.headers.get("content-disposition", "")
    url = s3_store.presigned_url("share/book.mp3", expires_s=60, download_name='my "book"/ü.mp3')
    response = httpx.get(url or "")
    assert response.status_code == 200 and response.content == b"ID3 not really"
    assert response.headers["content-disposition"] == 'attachment; filename="mybook.mp3"'


def test_presigned_url_is_bound_to_its_signature(s3_store: S3ObjectStore) -> None:
    s3_store.put_bytes("secret/a", b"a")
    s3_store.put_bytes("secret/b", b"b")
    url = s3_store.presigned_url("secret/a", expires_s=60)
    assert url is not None
    assert httpx.get(url.replace("/secret/a?", "/secret/b?")).status_code == 403


def test_delete_prefix_beyond_one_batch(s3_store: S3ObjectStore, monkeypatch: pytest.MonkeyPatch) -> None:
    import store.objects.s3 as s3_module

    monkeypatch.setattr(s3_module, "_DELETE_BATCH", 4)  # three DeleteObjects calls, not 1,000 keys
    for i in range(10):
        s3_store.put_bytes(f"many/{i}", b"")
    assert s3_store.delete_prefix("many/") == 10
    assert list(s3_store.iter_keys("many/")) == []


def test_wrong_secret_is_refused(s3_server: S3Server, s3_store: S3ObjectStore) -> None:
    s3_store.put_bytes("k", b"v")
    intruder = S3ObjectStore(
        bucket=s3_store.bucket,
        endpoint_url=s3_server.endpoint_url,
        region=s3_server.region,
        access_key_id=s3_server.access_key_id,
        secret_access_key="not-the-secret",
    )
    with pytest.raises(ObjectStoreError) as info:
        intruder.get_bytes("k")
    assert not isinstance(info.value, ObjectNotFound | ObjectStoreUnavailable)


def test_missing_bucket_is_an_error_not_a_missing_object(s3_server: S3Server) -> None:
    store = make_s3_store(s3_server, "lector-no-such-bucket")
    with pytest.raises(ObjectStoreError) as info:
        store.get_bytes("k")
    assert not isinstance(info.value, ObjectNotFound)


def test_create_bucket_is_idempotent(s3_server: S3Server, s3_store: S3ObjectStore) -> None:
    s3_store.put_bytes("kept", b"1")
    again = make_s3_store(s3_server, s3_store.bucket, create_bucket=True)
    assert again.get_bytes("kept") == b"1"


def test_endpoint_down_raises_unavailable(tmp_path: Path) -> None:
    closed = f"http://127.0.0.1:{free_port()}"  # bound then released: nothing listens there
    store = S3ObjectStore(
        bucket="lector-down",
        endpoint_url=closed,
        region="us-east-1",
        access_key_id="test:tester",
        secret_access_key="testing",
        max_attempts=2,
    )
    src = tmp_path / "f"
    src.write_bytes(b"x")
    calls = [
        lambda: store.get_bytes("k"),
        lambda: store.put_bytes("k", b"x"),
        lambda: store.put_file("k", src),
        lambda: store.exists("k"),
        lambda: list(store.iter_keys("")),
        lambda: store.delete_prefix("p/"),
    ]
    for call in calls:
        with pytest.raises(ObjectStoreUnavailable) as info:
            call()
        assert info.value.__cause__ is not None  # raised from the botocore error
    # Presigning needs no server: it still works while the endpoint is down.
    assert store.presigned_url("k", expires_s=5)


def test_build_object_store_picks_s3_with_a_bucket(
    s3_server: S3Server, s3_store: S3ObjectStore, tmp_path: Path
) -> None:
    built = build_object_store(
        s3_bucket=s3_store.bucket,
        s3_endpoint_url=s3_server.endpoint_url,
        s3_region=s3_server.region,
        s3_access_key_id=s3_server.access_key_id,
        s3_secret_access_key=s3_server.secret_access_key,
        local_root=tmp_path,
    )
    assert isinstance(built, S3ObjectStore)
    built.put_bytes("via-factory", b"ok")
    assert s3_store.get_bytes("via-factory") == b"ok"
    assert list(tmp_path.iterdir()) == []


def test_a_pickled_store_reaches_the_same_bucket(s3_store: S3ObjectStore) -> None:
    """Assembly hands the store to worker processes by pickling it: the copy builds its own
    client from the same settings and reads what the original wrote."""
    import pickle

    s3_store.put_bytes("jobs/p/chunk", b"pcm")
    copy = pickle.loads(pickle.dumps(s3_store))
    assert copy is not s3_store and copy._client is not s3_store._client  # noqa: SLF001
    assert copy.get_bytes("jobs/p/chunk") == b"pcm"
    copy.put_bytes("jobs/p/back", b"ok")
    assert s3_store.get_bytes("jobs/p/back") == b"ok"
