"""The object store as a local directory: the single-machine default, so lector runs with no
S3 service at all.

A key maps to the file ``root/<key>``. Writes go to a temporary file under ``root/.incoming``
(same filesystem) and are renamed into place, so a reader sees the old object or the new one,
never half of one, even if the writer dies. That folder is therefore not part of the key space.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from store.errors import ObjectNotFound, ObjectStoreError, ObjectStoreUnavailable
from store.objects.base import check_key, check_prefix

_INCOMING = ".incoming"
# Errors meaning the disk itself is gone or unusable, rather than a problem with one key.
_UNAVAILABLE_ERRNOS = {errno.EIO, errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.ENODEV, errno.ESTALE}


@contextmanager
def _translate(key: str, *, reading: bool) -> Iterator[None]:
    """The one boundary where OS errors become ``store.errors``. A missing path means a missing
    object only when reading; while writing it is a store failure."""
    try:
        yield
    except ObjectStoreError:
        raise
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
        if reading:
            raise ObjectNotFound(key) from exc
        raise ObjectStoreError(f"local object store failed on {key!r}: {exc}") from exc
    except OSError as exc:
        if exc.errno in _UNAVAILABLE_ERRNOS:
            raise ObjectStoreUnavailable(f"local object store unusable: {exc}") from exc
        raise ObjectStoreError(f"local object store failed on {key!r}: {exc}") from exc


class LocalObjectStore:
    """``ObjectStore`` over a directory tree (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self._incoming = self.root / _INCOMING

    def __repr__(self) -> str:
        return f"LocalObjectStore({str(self.root)!r})"

    # -- writes ----------------------------------------------------------------------------

    def put_bytes(self, key: str, data: bytes, *, content_type: str | None = None) -> None:
        """Store ``data``; ``content_type`` is accepted for the protocol and not kept (a local
        file is served by the facade, which knows the format it asked for)."""
        target = self._path(key)
        with _translate(key, reading=False):
            self._atomic_write(target, lambda out: out.write(data))

    def put_file(self, key: str, path: Path, *, content_type: str | None = None) -> None:
        """A missing or unreadable ``path`` is the caller's error and stays an ``OSError``."""
        target = self._path(key)
        with open(path, "rb") as src, _translate(key, reading=False):
            self._atomic_write(target, lambda out: shutil.copyfileobj(src, out, 1 << 20))

    def delete(self, key: str) -> None:
        target = self._path(key)
        with _translate(key, reading=False):
            try:
                target.unlink()
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                return
            self._prune_empty_dirs(target.parent)

    def delete_prefix(self, prefix: str) -> int:
        count = 0
        for key in list(self.iter_keys(prefix)):
            self.delete(key)
            count += 1
        return count

    # -- reads -----------------------------------------------------------------------------

    def get_bytes(self, key: str) -> bytes:
        source = self._path(key)
        with _translate(key, reading=True):
            return source.read_bytes()

    def download_file(self, key: str, path: Path) -> None:
        """Errors writing ``path`` itself are the caller's and stay ``OSError``."""
        source = self._path(key)
        with _translate(key, reading=True):
            src = open(source, "rb")
        with src:
            # The destination is replaced atomically as well: a crash leaves no truncated file.
            dest = Path(path)
            fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
            try:
                with os.fdopen(fd, "wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
                os.replace(tmp, dest)
            except BaseException:
                _unlink_quietly(tmp)
                raise

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def presigned_url(self, key: str, *, expires_s: int, download_name: str | None = None) -> str | None:
        """None: a directory cannot sign URLs; the facade streams the file itself."""
        self._path(key)  # still refuse an invalid key, as S3 would
        return None

    def iter_keys(self, prefix: str = "") -> Iterator[str]:
        """Keys in the same order S3 lists them (by code point), walking only the directory the
        prefix points into."""
        check_prefix(prefix)
        base, _, name_start = prefix.rpartition("/")
        start_dir = self.root / base if base else self.root
        with _translate(prefix, reading=False):
            yield from self._walk(start_dir, f"{base}/" if base else "", name_start)

    # -- helpers ---------------------------------------------------------------------------

    def _path(self, key: str) -> Path:
        check_key(key)
        if key.split("/", 1)[0] == _INCOMING:
            raise ObjectStoreError(f"invalid object key {key!r}: {_INCOMING!r} is reserved")
        return self.root / key

    def _atomic_write(self, target: Path, write: Callable[[BinaryIO], object]) -> None:
        self._incoming.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self._incoming, prefix="put-")
        try:
            with os.fdopen(fd, "wb") as out:
                write(out)
                out.flush()
                os.fsync(out.fileno())
            # A concurrent delete may prune the freshly made parent between mkdir and replace:
            # make it again and retry once.
            for attempt in (1, 2):
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.replace(tmp, target)
                    break
                except FileNotFoundError:
                    if attempt == 2:
                        raise
        except BaseException:
            _unlink_quietly(tmp)
            raise

    def _prune_empty_dirs(self, directory: Path) -> None:
        """Remove directories a delete left empty, up to the root, so delete_prefix leaves no
        skeleton behind. Losing a race with a writer (the dir is no longer empty) is fine."""
        while directory != self.root and self.root in directory.parents:
            try:
                directory.rmdir()
            except OSError:
                return
            directory = directory.parent

    def _walk(self, directory: Path, key_prefix: str, name_start: str) -> Iterator[str]:
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            return
        # A directory "a" sorts as "a/" so the whole listing is in plain key order.
        items = []
        for entry in entries:
            if not entry.name.startswith(name_start):
                continue
            if directory == self.root and entry.name == _INCOMING:
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if is_dir or entry.is_file(follow_symlinks=False):
                items.append((entry.name + "/" if is_dir else entry.name, entry, is_dir))
        for sort_name, entry, is_dir in sorted(items, key=lambda item: item[0]):
            if is_dir:
                yield from self._walk(Path(entry.path), key_prefix + sort_name, "")
            else:
                yield key_prefix + entry.name


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
