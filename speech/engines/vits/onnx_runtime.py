"""The CPU runtime of a Piper voice: the voice's own ``.onnx`` graph on onnxruntime.

Why: on CPUs our PyTorch VITS spends about 80% of its time in float32 matrix products
(``aten::addmm_``/``aten::mm`` under ``torch.profiler``), which torch sends to MKL. On the AMD
EPYC (Zen 5) of the development VM, one thread, a [4096, 256] x [256, 256] product ran at
36-52 GFLOPS in torch (MKL) and 68-77 GFLOPS in onnxruntime (its own MLAS kernels, which
dispatch on the instruction set, not the vendor), and the whole voice was 1.8-1.95x slower in
PyTorch. So on CPU the engine runs the voice's graph as Piper does, and keeps the PyTorch
modules for GPUs (where batching and bfloat16 win).

The engine API stays the same: the graph is edited once on load to also return its rounded
durations (the output of its one ``Ceil`` node, ``w_ceil`` in VITS), from which the engine
derives word timings exactly as it does from the PyTorch model's durations.

Sentences run one per ``session.run`` (the graph takes one sentence; a padded batch would only
add padding). With at least as many sentences as worker threads they run in parallel on a
single-threaded session; a lone sentence (a stream's first) runs on a session using every
worker thread, with spinning off so that other processes on the cores are not starved. The
single-threaded session's graph has its convolutions (nine tenths of its time) made planar
(``_as_planar_convolutions``); the wide session keeps the voice's own, where the planar form was
slower.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import numpy as np
import torch

from speech.engines.vits.model import VitsOutput
from speech.errors import WeightsError

DURATIONS_OUTPUT = "durations"  # the extra graph output added on load


def _graph_with_durations(model_path: str | Path) -> Any:
    """The voice's graph (an ``onnx.ModelProto``) with the ``Ceil`` node's output (frames per id)
    as a second output."""
    import onnx
    from onnx import helper

    try:
        model = onnx.load(str(model_path))
    except Exception as exc:  # onnx raises DecodeError, OSError and others
        raise WeightsError(f"cannot read voice graph {model_path}: {exc}") from exc
    ceil = [node for node in model.graph.node if node.op_type == "Ceil"]
    if len(ceil) != 1:
        raise WeightsError(f"voice graph {model_path} is not a Piper VITS export (expected one Ceil node)")
    model.graph.node.append(helper.make_node("Identity", [ceil[0].output[0]], [DURATIONS_OUTPUT]))
    model.graph.output.append(helper.make_tensor_value_info(DURATIONS_OUTPUT, onnx.TensorProto.FLOAT, None))
    return model


def _as_planar_convolutions(model: Any) -> int:
    """Rewrite every ``Conv`` over ``[N, C, T]`` with constant weights as a ``Conv`` over
    ``[N, C, 1, T]`` between an ``Unsqueeze`` and a ``Squeeze``; returns how many.

    Why: onnxruntime's NCHWc transformer, which reorders a convolution's data into blocks of 8
    (AVX2) or 16 (AVX-512) channels for MLAS's direct kernels, handles two-dimensional
    convolutions only; a one-dimensional one runs as im2col and a GEMM. The arithmetic is the
    same products summed in another order (float32 rounding apart). Measured on a 2-vCPU AMD EPYC
    Zen 1 (AVX2), four sentences, best of four rounds: on one thread the graph 3% faster (2.56 s
    against 2.63), the blocks' reorders counted; on two threads with spinning off 10% slower
    (1.75 s against 1.59), so only the single-threaded session takes it (``docs/benchmarks.md``).
    """
    from onnx import helper, numpy_helper

    weights = {init.name: init for init in model.graph.initializer}
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    axes_name = "lector/planar_axis"
    if opset >= 13:  # Unsqueeze and Squeeze take their axes as an input from opset 13
        model.graph.initializer.append(numpy_helper.from_array(np.array([2], dtype=np.int64), axes_name))

    def reshape_node(op: str, source: str, target: str) -> Any:
        if opset >= 13:
            return helper.make_node(op, [source, axes_name], [target])
        return helper.make_node(op, [source], [target], axes=[2])

    planar: dict[str, str] = {}
    nodes = []
    count = 0
    for node in model.graph.node:
        weight = weights.get(node.input[1]) if node.op_type == "Conv" and len(node.input) > 1 else None
        if weight is None or len(weight.dims) != 3:
            nodes.append(node)
            continue
        if weight.name not in planar:
            array = numpy_helper.to_array(weight)
            planar[weight.name] = f"{weight.name}/planar"
            model.graph.initializer.append(numpy_helper.from_array(array[:, :, None, :], planar[weight.name]))
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        for name in ("kernel_shape", "strides", "dilations"):
            if name in attributes:
                attributes[name] = [1, *attributes[name]]
        if "pads" in attributes:
            begin, end = attributes["pads"]
            attributes["pads"] = [0, begin, 0, end]
        source, target = f"{node.input[0]}/planar{count}", f"{node.output[0]}/planar"
        nodes.append(reshape_node("Unsqueeze", node.input[0], source))
        nodes.append(
            helper.make_node(
                "Conv", [source, planar[weight.name], *node.input[2:]], [target], name=node.name, **attributes
            )
        )
        nodes.append(reshape_node("Squeeze", target, node.output[0]))
        count += 1
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    used = {name for node in model.graph.node for name in node.input} | {i.name for i in model.graph.input}
    kept = [init for init in model.graph.initializer if init.name in used]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    return count


def _session(graph: bytes, threads: int) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if threads > 1:
        # Spinning threads burn the cores other processes (and our own other calls) need.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])


class OnnxVitsModel:
    """Callable like ``VitsModel`` (ids and scales in, ``VitsOutput`` out), on onnxruntime."""

    def __init__(self, model_path: str | Path, *, workers: int, hop_length: int) -> None:
        graph = _graph_with_durations(model_path)
        self.hop_length = hop_length
        own = graph.SerializeToString() if workers > 1 else None
        _as_planar_convolutions(graph)
        self._single = _session(graph.SerializeToString(), 1)
        self._wide = _session(own, workers) if own is not None else self._single

    def __call__(
        self,
        ids: Sequence[Sequence[int]],
        noise_scale: float,
        length_scale: float,
        noise_w: float,
        *,
        executor: Executor | None = None,
        workers: int = 1,
        pad_batch: bool = False,  # noqa: ARG002 - VitsModel's signature; the graph takes one item
    ) -> VitsOutput:
        scales = np.array([noise_scale, length_scale, noise_w], dtype=np.float32)
        parallel = executor is not None and len(ids) >= workers > 1
        session = self._single if parallel else self._wide

        def run(seq: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
            audio, durations = session.run(
                None,
                {
                    "input": np.asarray([seq], dtype=np.int64),
                    "input_lengths": np.array([len(seq)], dtype=np.int64),
                    "scales": scales,
                },
            )
            return torch.from_numpy(audio.reshape(-1)), torch.from_numpy(durations.reshape(-1))

        results = list(executor.map(run, ids)) if parallel else [run(seq) for seq in ids]  # type: ignore[union-attr]
        return VitsOutput(audio=[a for a, _ in results], durations=[d for _, d in results])
