"""Kokoro's decoder replayed from CUDA graphs: the GPU path's answer to being launch-bound.

A small batch's decoder is a few hundred kernels of little work each, launched one by one from
Python, so the GPU waits on the host; a CUDA graph records a call's launches once and replays
them in one. At batch 64 the GPU's work hides the launches: recording every batch there gained
nothing (the figures are at ``MAX_BATCH``).

Only calls of at most ``MAX_BATCH`` items replay: a stream's first sentence, a few streams at
once. A graph's tensors have fixed shapes, so a call is padded up to a bucket: the batch to a power of
two up to 8 and then to a multiple of 8, the frames to a multiple of ``FRAME_STEP``. Padding
changes no item's audio: every layer keeps an item to its own ``frames`` (``layers.py``), as in
any padded batch; rows past the batch are one-frame dummies. A shape is recorded the second
time it is seen (one-off shapes stay eager): that call runs on the padded inputs outside the
graph (the warm-up a capture needs) and its output is the answer, so recording costs one more
pass. At most ``MAX_GRAPHS`` shapes are kept, the least recently used going first.

The graphs share one memory pool: they never run at once (the model's lock serialises forward
passes), and each answer is copied out of the graph's output before the next replay.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import torch

if TYPE_CHECKING:
    from torch.cuda import _POOL_HANDLE

FRAME_STEP = 64  # 1.6 s of audio: a sentence's frames land within 64 of a recorded shape
MAX_GRAPHS = 16
# Larger batches stay eager: there the GPU's work hides the launches, and a bucket's padding is
# pure cost. With every batch replayed (H200, python -m bench.kokoro_graphs), 64 sentences in one
# call (batches of about 20) ran at 665x realtime against 669x without in bfloat16, and 276x
# against 324x in float32, while a stream's first piece alone went from 115 to 70 ms (bfloat16).
# With this limit, on another H200: batch 64 764x against 757x (bfloat16), 326x against 333x
# (float32, noise); the first piece alone 48 against 65 ms (bfloat16), 67 against 68 ms (float32).
MAX_BATCH = 16

_Key = tuple[int, int, torch.dtype]


class PaddedDecoder(Protocol):
    """``Decoder.forward``: padded inputs to padded waveforms, with no host sync inside."""

    def __call__(
        self, asr: torch.Tensor, f0: torch.Tensor, energy: torch.Tensor, style: torch.Tensor, frames: torch.Tensor
    ) -> torch.Tensor: ...


def batch_bucket(batch: int) -> int:
    """1, 2, 4, 8, then multiples of 8: at most 1.3x the items past 8 (a power of two would pad
    37 to 64)."""
    if batch <= 8:
        return 1 << (batch - 1).bit_length()
    return -(-batch // 8) * 8


def frame_bucket(frames: int, step: int = FRAME_STEP) -> int:
    return -(-frames // step) * step


def padded_inputs(
    asr: torch.Tensor, f0: torch.Tensor, energy: torch.Tensor, style: torch.Tensor, frames: torch.Tensor, *, batch: int, width: int
) -> tuple[torch.Tensor, ...]:
    """Zeroed tensors of the bucket's shape, for ``load``."""
    device = asr.device
    return (
        torch.zeros((batch, asr.shape[1], width), dtype=asr.dtype, device=device),
        torch.zeros((batch, 2 * width), dtype=f0.dtype, device=device),
        torch.zeros((batch, 2 * width), dtype=energy.dtype, device=device),
        torch.zeros((batch, style.shape[1]), dtype=style.dtype, device=device),
        torch.ones(batch, dtype=frames.dtype, device=device),
    )


def load(statics: tuple[torch.Tensor, ...], values: tuple[torch.Tensor, ...]) -> None:
    """Copy a call's inputs into the bucket's tensors: zeros past each item (what a padded batch
    holds there), one-frame dummies past the batch."""
    *tensors, frames = statics
    *given, given_frames = values
    for static, value in zip(tensors, given, strict=True):
        static.zero_()
        static[tuple(slice(0, n) for n in value.shape)].copy_(value)
    frames.fill_(1)
    frames[: given_frames.shape[0]].copy_(given_frames)


@dataclass(slots=True)
class _Recorded:
    graph: torch.cuda.CUDAGraph
    inputs: tuple[torch.Tensor, ...]
    output: torch.Tensor


class GraphedDecoder:
    """Calls ``decoder`` through recorded CUDA graphs (see the module's docstring)."""

    def __init__(
        self,
        decoder: PaddedDecoder,
        *,
        frame_step: int = FRAME_STEP,
        max_graphs: int = MAX_GRAPHS,
        max_batch: int = MAX_BATCH,
    ) -> None:
        self._decoder = decoder
        self._max_batch = max_batch
        self._frame_step = frame_step
        self._max_graphs = max_graphs
        self._graphs: OrderedDict[_Key, _Recorded] = OrderedDict()
        self._seen: set[_Key] = set()
        self._pool: _POOL_HANDLE | None = None
        self.recorded = 0
        """Shapes recorded so far (each cost one extra pass): the bench prints it."""
        self.replayed = 0

    def __call__(
        self, asr: torch.Tensor, f0: torch.Tensor, energy: torch.Tensor, style: torch.Tensor, frames: torch.Tensor
    ) -> torch.Tensor:
        batch, _, width = asr.shape
        if batch > self._max_batch:
            return self._decoder(asr, f0, energy, style, frames)
        key = (batch_bucket(batch), frame_bucket(width, self._frame_step), asr.dtype)
        recorded = self._graphs.get(key)
        if recorded is not None:
            self._graphs.move_to_end(key)
            load(recorded.inputs, (asr, f0, energy, style, frames))
            recorded.graph.replay()
            self.replayed += 1
            return recorded.output[:batch].clone()
        if key not in self._seen:
            self._seen.add(key)
            return self._decoder(asr, f0, energy, style, frames)
        return self._record(key, (asr, f0, energy, style, frames))[:batch]

    def _record(self, key: _Key, values: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """Warm up on a side stream (the answer for this call), then record the same pass."""
        batch, width, _ = key
        inputs = padded_inputs(*values, batch=batch, width=width)
        load(inputs, values)
        main = torch.cuda.current_stream()
        side = torch.cuda.Stream()  # type: ignore[no-untyped-call]
        side.wait_stream(main)
        with torch.cuda.stream(side):
            answer = self._decoder(*inputs)
        main.wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        # thread_local: another engine's thread may use the GPU while this one records.
        with torch.cuda.graph(graph, pool=self._pool, capture_error_mode="thread_local"):
            output = self._decoder(*inputs)
        self._pool = graph.pool()
        self._graphs[key] = _Recorded(graph, inputs, output)
        self.recorded += 1
        while len(self._graphs) > self._max_graphs:
            self._graphs.popitem(last=False)
        return answer
