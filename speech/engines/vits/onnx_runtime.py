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
worker thread, with spinning off so that other processes on the cores are not starved.
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


def _graph_with_durations(model_path: str | Path) -> bytes:
    """The serialized graph with the ``Ceil`` node's output (frames per id) as a second output."""
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
    return model.SerializeToString()


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
        self._single = _session(graph, 1)
        self._wide = _session(graph, workers) if workers > 1 else self._single

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
