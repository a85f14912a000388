"""LocalObjectStore: what only the directory backend does (files under its root, pruned parents,
atomic writes, path-safe keys). The object-store contract both backends meet is
``tests/integration/store/test_objects.py``."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

import store.objects.local as local_module
from store.errors import ObjectNotFound, ObjectStoreError
from store.objects import LocalObjectStore, build_object_store


@pytest.fixture
def store(tmp_path: Path) -> LocalObjectStore:
    return LocalObjectStore(tmp_path / "objects")


def test_an_object_is_a_file_under_the_root(store: LocalObjectStore) -> None:
    store.put_bytes("jobs/1/source.txt", b"payload", content_type="text/plain")
    assert (store.root / "jobs" / "1" / "source.txt").read_bytes() == b"payload"


def test_put_file_and_download_leave_no_temporary_files(store: LocalObjectStore, tmp_path: Path) -> None:
    src = tmp_path / "in.bin"
    src.write_bytes(os.urandom(3 * 1024 * 1024 + 7))
    store.put_file("works/book.mp3", src)
    store.download_file("works/book.mp3", tmp_path / "out.bin")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.bin", "objects", "out.bin"]


def test_a_file_is_not_a_directory(store: LocalObjectStore) -> None:
    store.put_bytes("dir/file", b"x")
    with pytest.raises(ObjectNotFound):
        store.get_bytes("dir/file/deeper")


def test_missing_source_file_is_the_callers_oserror(store: LocalObjectStore, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        store.put_file("k", tmp_path / "absent")
    assert not store.exists("k")


def test_delete_prunes_empty_parents(store: LocalObjectStore) -> None:
    store.put_bytes("a/b/c", b"1")
    store.delete("a/b/c")
    assert list(store.root.iterdir()) == [store.root / ".incoming"]


@pytest.mark.parametrize(
    "key",
    [
        "",
        "/etc/passwd",
        "../outside",
        "a/../../outside",
        "a/./b",
        "a//b",
        "a/",
        "a\\b",
        "a\x00b",
        ".incoming/x",
    ],
)
def test_invalid_keys_are_refused(store: LocalObjectStore, tmp_path: Path, key: str) -> None:
    for call in (
        lambda: store.put_bytes(key, b"x"),
        lambda: store.get_bytes(key),
        lambda: store.exists(key),
        lambda: store.delete(key),
        lambda: store.presigned_url(key, expires_s=10),
    ):
        with pytest.raises(ObjectStoreError):
            call()
    assert not (tmp_path / "outside").exists()


def test_invalid_prefix_is_refused(store: LocalObjectStore) -> None:
    for prefix in ["../", "/abs", "a/../b/"]:
        with pytest.raises(ObjectStoreError):
            list(store.iter_keys(prefix))


def test_delete_prefix_removes_the_emptied_directories(store: LocalObjectStore) -> None:
    for i in range(5):
        store.put_bytes(f"jobs/1/chunks/{i}", b"x")
    assert store.delete_prefix("jobs/1/chunks/") == 5
    assert not (store.root / "jobs" / "1" / "chunks").exists()


def test_presigned_url_is_none(store: LocalObjectStore) -> None:
    store.put_bytes("k", b"v")
    assert store.presigned_url("k", expires_s=60) is None


def test_a_failed_write_leaves_the_previous_object(
    store: LocalObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.put_bytes("work.mp3", b"complete old object")

    def crash(src: object, dst: object) -> None:
        raise OSError("disk went away mid-write")

    monkeypatch.setattr(local_module.os, "replace", crash)
    with pytest.raises(ObjectStoreError):
        store.put_bytes("work.mp3", b"new object that never lands")
    monkeypatch.undo()
    assert store.get_bytes("work.mp3") == b"complete old object"
    assert list((store.root / ".incoming").iterdir()) == []  # no temp file left behind
    assert list(store.iter_keys()) == ["work.mp3"]


def test_readers_never_see_a_partial_object(store: LocalObjectStore) -> None:
    big_a, big_b = b"a" * (4 * 1024 * 1024), b"b" * (4 * 1024 * 1024)
    store.put_bytes("hot", big_a)
    stop = threading.Event()
    seen: set[bytes] = set()

    def read() -> None:
        while not stop.is_set():
            data = store.get_bytes("hot")
            seen.add(data[:1] + data[-1:] + str(len(data)).encode())

    reader = threading.Thread(target=read)
    reader.start()
    for i in range(20):
        store.put_bytes("hot", big_b if i % 2 else big_a)
    stop.set()
    reader.join()
    assert seen <= {b"aa" + str(len(big_a)).encode(), b"bb" + str(len(big_b)).encode()}


def test_build_object_store_without_bucket_is_local(tmp_path: Path) -> None:
    built = build_object_store(
        s3_bucket=None,
        s3_endpoint_url=None,
        s3_region="us-east-1",
        s3_access_key_id=None,
        s3_secret_access_key=None,
        local_root=tmp_path / "objs",
    )
    assert isinstance(built, LocalObjectStore)
    built.put_bytes("x", b"1")
    assert (tmp_path / "objs" / "x").read_bytes() == b"1"


def test_exports_are_sorted_and_complete() -> None:
    import store.objects as package

    assert package.__all__ == sorted(package.__all__)
    assert set(package.__all__) == {"LocalObjectStore", "ObjectStore", "S3ObjectStore", "build_object_store"}
