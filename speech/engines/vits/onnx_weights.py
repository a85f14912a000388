"""Reading a Piper voice's ``.onnx`` into our modules' parameters, by name.

Piper's export keeps PyTorch parameter names for almost every initializer. Three exceptions
are recovered from the graph:

- the text embedding ``enc_p.emb.weight`` is stored as ``sid``;
- the flow's WaveNet convolutions had weight norm folded in by the exporter and became
  anonymous ``onnx::Conv_*`` tensors: the ``Conv`` node using each one also takes the layer's
  bias, whose name gives the layer;
- ``dp.flows.0.logs`` survives only as the folded constant ``exp(-logs)``.

Converted weights can be cached as safetensors named by the source file's sha256, so a voice
is parsed once per machine (the protobuf parse dominates load time).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch

from speech.errors import WeightsError

_LOG = logging.getLogger(__name__)

EMBEDDING_ALIAS = "sid"
EMBEDDING_NAME = "enc_p.emb.weight"
DP_AFFINE_LOGS = "dp.flows.0.logs"
DP_AFFINE_SCOPE = "/dp/flows.0/"
_CACHE_VERSION = "v1"


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_onnx_tensors(path: str | Path) -> dict[str, np.ndarray]:
    """Every inference tensor of a Piper ``.onnx``, under its PyTorch name."""
    import onnx
    from onnx import numpy_helper

    try:
        model = onnx.load(str(path))
    except Exception as exc:  # onnx raises DecodeError, OSError and others
        raise WeightsError(f"cannot read voice weights {path}: {exc}") from exc
    graph = model.graph
    tensors = {init.name: numpy_helper.to_array(init) for init in graph.initializer}

    named: dict[str, np.ndarray] = {}
    for name, value in tensors.items():
        if name == EMBEDDING_ALIAS:
            named[EMBEDDING_NAME] = value
        elif not name.startswith(("/", "onnx::")) and "." in name:
            named[name] = value

    for node in graph.node:
        if node.op_type != "Conv" or len(node.input) < 3:
            continue
        weight, bias = node.input[1], node.input[2]
        if weight.startswith("onnx::") and weight in tensors and bias.endswith(".bias"):
            named[bias[: -len(".bias")] + ".weight"] = tensors[weight]

    folded = _find_dp_affine_scale(graph, tensors)
    if folded is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            named[DP_AFFINE_LOGS] = (-np.log(folded)).astype(np.float32)
    return named


def _find_dp_affine_scale(graph: object, tensors: Mapping[str, np.ndarray]) -> np.ndarray | None:
    """The constant ``exp(-logs)`` that the duration predictor's affine flow multiplies by."""
    shape = tensors.get("dp.flows.0.m", np.zeros((2, 1))).shape
    for node in graph.node:  # type: ignore[attr-defined]
        if node.op_type != "Mul" or not node.name.startswith(DP_AFFINE_SCOPE):
            continue
        for name in node.input:
            if name in tensors and name.startswith(DP_AFFINE_SCOPE) and tensors[name].shape == shape:
                return tensors[name]
    return None


def load_state_dict(
    model: torch.nn.Module, tensors: Mapping[str, np.ndarray | torch.Tensor], *, source: str = "voice"
) -> None:
    """Copy ``tensors`` into ``model``; every parameter must be present with its exact shape."""
    expected = model.state_dict()
    missing = sorted(set(expected) - set(tensors))
    mismatched = []
    bad_values = []
    for name, target in expected.items():
        if name not in tensors:
            continue
        value = _as_tensor(tensors[name])
        if tuple(value.shape) != tuple(target.shape):
            mismatched.append(f"{name}: expected {tuple(target.shape)}, found {tuple(value.shape)}")
        elif not bool(torch.isfinite(value).all()):
            bad_values.append(name)
    if missing or mismatched or bad_values:
        parts = []
        if missing:
            parts.append(f"missing {len(missing)}: {', '.join(missing)}")
        if mismatched:
            parts.append(f"mismatched {len(mismatched)}: {'; '.join(mismatched)}")
        if bad_values:
            parts.append(f"non-finite {len(bad_values)}: {', '.join(bad_values)}")
        raise WeightsError(f"{source} does not fit the VITS model ({' | '.join(parts)})")
    with torch.no_grad():
        for name, target in expected.items():
            target.copy_(_as_tensor(tensors[name]).to(target.dtype))


def _as_tensor(value: np.ndarray | torch.Tensor) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    return torch.from_numpy(np.array(value, copy=True))


def load_voice_weights(
    model: torch.nn.Module, onnx_path: str | Path, *, cache_dir: str | Path | None = None
) -> None:
    """Fill ``model`` from a Piper ``.onnx``, through the safetensors cache when one is given."""
    onnx_path = Path(onnx_path)
    if not onnx_path.is_file():
        raise WeightsError(f"voice weights not found: {onnx_path}")
    cache_file = None
    if cache_dir is not None:
        cache_file = Path(cache_dir) / f"{file_sha256(onnx_path)}-{_CACHE_VERSION}.safetensors"
        cached = _read_cache(cache_file)
        if cached is not None:
            try:
                load_state_dict(model, cached, source=str(cache_file))
                return
            except WeightsError:
                _LOG.warning("weights cache %s does not fit; converting again", cache_file)
    tensors = read_onnx_tensors(onnx_path)
    load_state_dict(model, tensors, source=str(onnx_path))
    if cache_file is not None:
        _write_cache(cache_file, model.state_dict())


def _read_cache(path: Path) -> dict[str, torch.Tensor] | None:
    if not path.is_file():
        return None
    from safetensors.torch import load_file

    try:
        return load_file(str(path))
    except Exception as exc:  # a truncated or foreign file: convert again
        _LOG.warning("weights cache %s unreadable (%s); converting again", path, exc)
        return None


def _write_cache(path: Path, state: Mapping[str, torch.Tensor]) -> None:
    from safetensors.torch import save_file

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        os.close(handle)
        save_file({k: v.detach().float().contiguous() for k, v in state.items()}, tmp)
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old file or the whole new one
    except OSError as exc:
        _LOG.warning("cannot write weights cache %s: %s", path, exc)
