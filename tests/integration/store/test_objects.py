"""The object-store contract, one suite run against both backends: the local directory and S3
(the Swift s3api server the fixtures start). What only one backend does (atomic local writes,
multipart uploads, presigned URLs) stays in ``test_objects_local.py`` / ``test_objects_s3.py``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from store.errors import ObjectNotFound, ObjectStoreError
from store.objects import LocalObjectStore, ObjectStore

pytestmark = pytest.mark.integration


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    if request.param == "local":
        return LocalObjectStore(tmp_path / "objects")
    s3: ObjectStore = request.getfixturevalue("s3_store")
    return s3


def test_satisfies_the_protocol(store: ObjectStore) -> None:
    assert isinstance(store, ObjectStore)


def test_round_trip_overwrite_and_empty(store: ObjectStore) -> None:
    payload = os.urandom(10_000)
    store.put_bytes("jobs/1/source.txt", payload, content_type="text/plain")
    assert store.get_bytes("jobs/1/source.txt") == payload
    store.put_bytes("jobs/1/source.txt", b"second")
    assert store.get_bytes("jobs/1/source.txt") == b"second"
    store.put_bytes("empty", b"")
    assert store.get_bytes("empty") == b""


def test_put_file_and_download_over_an_old_file(store: ObjectStore, tmp_path: Path) -> None:
    src = tmp_path / "in.bin"
    src.write_bytes(os.urandom(1024 * 1024 + 7))
    store.put_file("works/book.mp3", src, content_type="audio/mpeg")
    dest = tmp_path / "out.bin"
    dest.write_bytes(b"old content")
    store.download_file("works/book.mp3", dest)
    assert dest.read_bytes() == src.read_bytes()


def test_a_missing_key_is_object_not_found(store: ObjectStore, tmp_path: Path) -> None:
    with pytest.raises(ObjectNotFound) as info:
        store.get_bytes("no/such")
    assert info.value.key == "no/such"
    with pytest.raises(ObjectNotFound):
        store.download_file("no/such", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    store.put_bytes("dir/file", b"x")
    with pytest.raises(ObjectNotFound):
        store.get_bytes("dir")  # a "directory" is not an object


def test_exists_and_delete(store: ObjectStore) -> None:
    assert not store.exists("a/b/c")
    store.put_bytes("a/b/c", b"1")
    assert store.exists("a/b/c") and not store.exists("a/b")
    store.delete("a/b/c")
    assert not store.exists("a/b/c")
    store.delete("a/b/c")  # missing: no error


def test_keys_come_in_s3_order_and_by_prefix(store: ObjectStore) -> None:
    keys = ["a/b", "a-c", "a/a/z", "b", "jobs/7/chunks/000001.pcm", "jobs/7/chunks/000000.pcm", "jobs/70/x",
            "jobs/7/plan.json"]
    for key in keys:
        store.put_bytes(key, b"")
    assert list(store.iter_keys()) == sorted(keys)  # '-' < '/': "a-c" before "a/..."
    assert list(store.iter_keys("jobs/7/")) == sorted(k for k in keys if k.startswith("jobs/7/"))
    assert list(store.iter_keys("jobs/7")) == sorted(k for k in keys if k.startswith("jobs/7"))
    assert list(store.iter_keys("jobs/7/chunks/000001")) == ["jobs/7/chunks/000001.pcm"]
    assert list(store.iter_keys("nothing/")) == []


def test_delete_prefix_counts_what_it_deleted(store: ObjectStore) -> None:
    for i in range(5):
        store.put_bytes(f"jobs/1/chunks/{i}", b"x")
    store.put_bytes("jobs/1/source.txt", b"x")
    store.put_bytes("jobs/10/source.txt", b"x")
    assert store.delete_prefix("jobs/1/chunks/") == 5
    assert list(store.iter_keys()) == ["jobs/1/source.txt", "jobs/10/source.txt"]
    assert store.delete_prefix("jobs/1/chunks/") == 0
    assert store.delete_prefix("") == 2
    assert list(store.iter_keys()) == []


@pytest.mark.parametrize("key", ["", "/abs", "a/../b", "a//b", "a/"])
def test_invalid_keys_are_refused(store: ObjectStore, key: str) -> None:
    for call in (lambda: store.put_bytes(key, b"x"), lambda: store.get_bytes(key), lambda: store.exists(key),
                 lambda: store.delete(key)):
        with pytest.raises(ObjectStoreError):
            call()
