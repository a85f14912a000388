"""Piper's VITS at inference: phoneme ids to waveform, for a batch of sentences.

The text encoder gives a prior per phoneme, the duration predictor says how many frames each
phoneme lasts, each frame takes its phoneme's prior (plus scaled noise), the flow maps those
frames to the decoder's latent space and HiFi-GAN turns them into samples (256 per frame).

Batches run as time-major packed sequences (``layers.Layout``): the encoder sees the padded
batch as one strided sequence, and the frames of the items are laid end to end with zero gaps
wider than any convolution's reach, so each item's samples are exactly those it gets alone and
no work is spent on padding.

The flow and the decoder run over groups of at most ``decoder_frames`` frames, and each group's
decoder pass over one or more windows of rows. A window cut inside an item carries
``HALO_FRAMES`` extra frames on each side (more than the generator's receptive field, so its
core samples are exact); a cut in a gap needs none.

On CPU, sentences go through the encoder and flow one by one (a padded batch would only add
padding to the work) and, given an executor, sentences and decoder windows run in parallel,
each thread running torch single-threaded: whole sentences and windows per thread scale better
than splitting every operation across OpenMP threads, and keep scaling when other processes
share the cores. With fewer sentences than threads the flow is cut into windows as well
(``FLOW_HALO_FRAMES``). On GPU (``pad_batch``), the batch goes through the encoder as one
padded sequence and the decoder groups stay whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TypeVar

import torch
from torch import nn

from speech.engines.vits.config import ModelShape
from speech.engines.vits.duration import StochasticDurationPredictor
from speech.engines.vits.flow import ResidualCouplingBlock
from speech.engines.vits.generator import Generator
from speech.engines.vits.layers import Layout
from speech.engines.vits.text_encoder import TextEncoder

ID_GAP = 10  # > the widest id-level reach (the duration predictor's dilation-9 convolution)
FRAME_GAP = 6  # > the generator's reach at 8 samples per frame (36 samples) and conv_pre's 3 frames
HALO_FRAMES = 12  # > the generator's receptive field on either side (11 frames, checked by a test)
FLOW_HALO_FRAMES = 34  # > the flow's: four coupling layers of four 5-tap convolutions (32 frames)
MIN_WINDOW_FRAMES = 96  # below this a window's halos cost more than its parallelism gains
MAX_WINDOW_FRAMES = 1024  # bounds a decoder pass's memory (about 12 s of audio)

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class VitsOutput:
    audio: list[torch.Tensor]  # per item, float32 [samples], already cut to the item's length
    durations: list[torch.Tensor]  # per item, frames per phoneme id [ids]


@dataclass(frozen=True, slots=True)
class _Window:
    group: int
    begin: int  # rows [begin, end) of the group's frames go through the decoder
    end: int
    core_begin: int  # of which rows [core_begin, core_end) are kept
    core_end: int


class VitsModel(nn.Module):
    def __init__(self, shape: ModelShape | None = None) -> None:
        super().__init__()
        self.shape = shape or ModelShape()
        self.enc_p = TextEncoder(self.shape)
        self.dp = StochasticDurationPredictor(self.shape)
        self.flow = ResidualCouplingBlock(self.shape)
        self.dec = Generator(self.shape)
        self.decoder_dtype: torch.dtype | None = None
        self.decoder_frames = 1024  # frames per flow/decoder group

    @property
    def hop_length(self) -> int:
        return self.shape.hop_length

    def set_decoder_dtype(self, dtype: torch.dtype | None) -> None:
        """Run the flow and decoder (the bulk of the work) in ``dtype`` (fp16/bf16)."""
        self.decoder_dtype = dtype
        if dtype is not None:
            self.flow.to(dtype)
            self.dec.to(dtype)

    def forward(
        self,
        ids: Sequence[Sequence[int]],
        noise_scale: float,
        length_scale: float,
        noise_w: float,
        *,
        executor: Executor | None = None,
        workers: int = 1,
        pad_batch: bool = False,
    ) -> VitsOutput:
        """Phoneme id sequences (Piper's ``^ _ ... $``) -> audio and durations per item.

        With an ``executor`` (of ``workers`` threads) sentences and decoder windows run in
        parallel; the threads enter ``torch.inference_mode`` themselves. ``pad_batch`` sends the
        whole batch through the encoder as one padded sequence (for GPUs).
        """
        if pad_batch:
            durations, prepared = self._encode_and_flow(ids, noise_scale, length_scale, noise_w)
        elif len(ids) >= workers:
            # Sentence by sentence, sentences in parallel: on CPU a padded batch would only add
            # padding to the encoder's work, and each sentence's products are big enough alone.
            results = _map(
                executor, lambda seq: self._encode_and_flow([seq], noise_scale, length_scale, noise_w), ids
            )
            durations = [d for item_durations, _ in results for d in item_durations]
            prepared = [p for _, item_prepared in results for p in item_prepared]
        else:
            # Fewer sentences than threads: the flow runs in windows too.
            durations, prepared = self._encode_and_flow_windows(
                ids, noise_scale, length_scale, noise_w, executor, workers
            )

        target = self._window_target(prepared, workers, pad_batch)
        windows = [
            w for g, (layout, _) in enumerate(prepared) for w in _plan_windows(g, layout, target, HALO_FRAMES)
        ]

        def decode(window: _Window) -> torch.Tensor:
            layout, z = prepared[window.group]
            samples: torch.Tensor = self.dec(
                z[window.begin : window.end], layout.window(window.begin, window.end)
            )
            hop = self.hop_length
            return samples[(window.core_begin - window.begin) * hop : (window.core_end - window.begin) * hop]

        pieces = _map(executor, decode, windows)
        audio: list[torch.Tensor] = []
        hop = self.hop_length
        for g, (layout, _) in enumerate(prepared):
            samples = torch.cat([p for w, p in zip(windows, pieces, strict=True) if w.group == g]).float()
            audio.extend(
                samples[start * hop : (start + n) * hop]
                for start, n in zip(layout.starts, layout.lengths, strict=True)
            )
        return VitsOutput(audio=audio, durations=durations)

    @staticmethod
    def _window_target(prepared: Sequence[tuple[Layout, torch.Tensor]], workers: int, pad_batch: bool) -> int:
        """Rows per window: the work shared out over the threads, bounded on CPU for memory."""
        total = sum(layout.rows for layout, _ in prepared)
        target = max(MIN_WINDOW_FRAMES, -(-total // max(workers, 1)))
        return target if pad_batch else min(MAX_WINDOW_FRAMES, target)

    def _encode_and_flow_windows(
        self,
        ids: Sequence[Sequence[int]],
        noise_scale: float,
        length_scale: float,
        noise_w: float,
        executor: Executor | None,
        workers: int,
    ) -> tuple[list[torch.Tensor], list[tuple[Layout, torch.Tensor]]]:
        """As ``_encode_and_flow`` sentence by sentence, with the flow cut into parallel windows."""
        priors = []
        durations: list[torch.Tensor] = []
        for seq in ids:
            item_durations, m_p, logs_p, id_starts = self._encode([seq], noise_w, length_scale)
            frames = [max(int(item_durations[0].sum()), 1)]
            durations.extend(item_durations)
            priors.append(self._prior(id_starts, item_durations, frames, m_p, logs_p, noise_scale))
        target = self._window_target(priors, workers, False)
        windows = [
            w
            for g, (layout, _) in enumerate(priors)
            for w in _plan_windows(g, layout, target, FLOW_HALO_FRAMES)
        ]

        def flow(window: _Window) -> torch.Tensor:
            layout, z_p = priors[window.group]
            z: torch.Tensor = self.flow(
                z_p[window.begin : window.end], layout.window(window.begin, window.end).mask
            )
            return z[window.core_begin - window.begin : window.core_end - window.begin]

        pieces = _map(executor, flow, windows)
        prepared = []
        for g, (layout, _) in enumerate(priors):
            z = torch.cat([p for w, p in zip(windows, pieces, strict=True) if w.group == g])
            prepared.append((layout, z * layout.mask))
        return durations, prepared

    def _encode_and_flow(
        self, ids: Sequence[Sequence[int]], noise_scale: float, length_scale: float, noise_w: float
    ) -> tuple[list[torch.Tensor], list[tuple[Layout, torch.Tensor]]]:
        """Durations per item, and the decoder's input per group of items."""
        durations, m_p, logs_p, id_starts = self._encode(ids, noise_w, length_scale)
        frames = [max(int(d.sum()), 1) for d in durations]
        prepared = []
        for group in self._groups(frames):
            layout, z_p = self._prior(
                [id_starts[b] for b in group],
                [durations[b] for b in group],
                [frames[b] for b in group],
                m_p,
                logs_p,
                noise_scale,
            )
            prepared.append((layout, self.flow(z_p, layout.mask) * layout.mask))
        return durations, prepared

    def _encode(
        self, ids: Sequence[Sequence[int]], noise_w: float, length_scale: float
    ) -> tuple[list[torch.Tensor], torch.Tensor, torch.Tensor, list[int]]:
        """Text encoder and duration predictor over the padded batch as one strided sequence."""
        device = self.enc_p.emb.weight.device
        lengths = [len(seq) for seq in ids]
        stride = max(lengths) + ID_GAP
        flat = torch.zeros(len(ids) * stride, dtype=torch.long)
        for b, seq in enumerate(ids):
            flat[b * stride : b * stride + len(seq)] = torch.tensor(list(seq), dtype=torch.long)
        layout = Layout.strided(lengths, stride, device, torch.float32)
        hidden, m_p, logs_p = self.enc_p(flat.to(device), layout)
        logw = self.dp(hidden, layout.mask, noise_w)
        w_ceil = torch.ceil(torch.exp(logw) * layout.mask.squeeze(1) * length_scale)
        durations = [w_ceil[start : start + n] for start, n in zip(layout.starts, lengths, strict=True)]
        return durations, m_p, logs_p, list(layout.starts)

    def _groups(self, frames: list[int]) -> list[list[int]]:
        groups: list[list[int]] = [[]]
        total = 0
        for b, n in enumerate(frames):
            if groups[-1] and total + n > self.decoder_frames:
                groups.append([])
                total = 0
            groups[-1].append(b)
            total += n
        return groups

    def _prior(
        self,
        id_starts: list[int],
        durations: list[torch.Tensor],
        frames: list[int],
        m_p: torch.Tensor,
        logs_p: torch.Tensor,
        noise_scale: float,
    ) -> tuple[Layout, torch.Tensor]:
        """The prior expanded to packed frames (plus noise): the flow's input."""
        device = m_p.device
        dtype = self.decoder_dtype or m_p.dtype
        layout = Layout.packed(frames, FRAME_GAP, device, dtype)
        # Each frame row reads the encoder row of the phoneme it belongs to; gaps read nothing.
        source = torch.full((layout.rows,), -1, dtype=torch.long, device=device)
        for start, id_start, counts, n in zip(layout.starts, id_starts, durations, frames, strict=True):
            rows = torch.arange(id_start, id_start + counts.shape[0], device=device)
            expanded = torch.repeat_interleave(rows, counts.long())
            source[start : start + expanded.shape[0]] = expanded[:n]
        inside = (source >= 0).unsqueeze(1)
        index = source.clamp_min(0)
        z_p = m_p.index_select(0, index) * inside
        if noise_scale > 0:
            scale = torch.exp(logs_p.index_select(0, index)) * inside
            z_p = z_p + torch.randn_like(z_p) * scale * noise_scale
        return layout, z_p.to(dtype)


def _plan_windows(group: int, layout: Layout, target: int, halo: int) -> list[_Window]:
    """Cut ``layout``'s rows into about ``target``-row windows, at gaps where one is near; a cut
    inside an item takes ``halo`` extra rows on each side."""
    gap = (layout.mask.squeeze(1) == 0).tolist()
    rows = layout.rows
    count = max(1, round(rows / target))
    cuts = [0]
    for i in range(1, count):
        ideal = i * rows // count
        near = [r for r in range(max(1, ideal - target // 4), min(rows, ideal + target // 4)) if gap[r]]
        cuts.append(min(near, key=lambda r: abs(r - ideal)) if near else ideal)
    cuts.append(rows)
    windows = []
    for core_begin, core_end in zip(cuts[:-1], cuts[1:], strict=True):
        begin = core_begin if gap[core_begin] else max(0, core_begin - halo)
        end = core_end if core_end == rows or gap[core_end - 1] else min(rows, core_end + halo)
        windows.append(_Window(group, begin, end, core_begin, core_end))
    return windows


def _map(executor: Executor | None, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    if executor is None or len(items) < 2:
        return [fn(item) for item in items]

    def run(item: T) -> R:
        with torch.inference_mode():
            return fn(item)

    return list(executor.map(run, items))
