"""Kokoro-82M at inference: phoneme ids, a style vector and a speed per item to waveforms.

The flow (StyleTTS2's, as Kokoro v1.0 runs it): PL-BERT reads the phonemes; its features,
projected to 512 and conditioned on the prosody half of the style (``style[128:]``), give each
phoneme a duration; phoneme features are expanded to frames (25 ms each); the predictor draws
F0 and energy curves from the expanded features; the acoustic text encoder's output, expanded
the same way, goes with the curves and the timbre half of the style (``style[:128]``) into the
decoder, which makes 600 samples per frame at 24 kHz.

A batch is padded to its longest item; every layer keeps each item to its own length (see
``layers.py``), so an item's audio and durations are what it gets alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from speech.engines.kokoro import kernels
from speech.engines.kokoro.albert import Albert
from speech.engines.kokoro.conv_swap import swap_convolutions
from speech.engines.kokoro.decoder import SAMPLES_PER_FRAME as SAMPLES_PER_FRAME
from speech.engines.kokoro.decoder import Decoder, per_item
from speech.engines.kokoro.graphs import GraphedDecoder, PaddedDecoder
from speech.engines.kokoro.int8 import Int8Conv1d
from speech.engines.kokoro.prosody import ProsodyPredictor, TextEncoder
from speech.engines.kokoro.spectral_conv import replace_long_convolutions


@dataclass(slots=True)
class KokoroOutput:
    audio: list[torch.Tensor]
    """Float32 samples per item, ``600 * sum(durations)`` long."""
    durations: list[torch.Tensor]
    """Frames per input token (including the two boundary pads), per item."""


class KokoroModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.bert = Albert()
        self.bert_encoder = nn.Linear(768, 512)
        self.predictor = ProsodyPredictor()
        self.text_encoder = TextEncoder()
        self.decoder = Decoder()
        self.decoder_dtype: torch.dtype | None = None
        self.graphs: GraphedDecoder | None = None

    def set_decoder_dtype(self, dtype: torch.dtype | None) -> None:
        """Run the decoder (most of the work) at ``dtype``; ``None`` keeps float32. The harmonic
        source and the STFTs stay float32: they carry phase, which half precision would smear;
        so does ``conv_post``, whose log-magnitudes bfloat16 would round in 6% steps."""
        self.decoder_dtype = dtype
        self.decoder.to(dtype or torch.float32)
        generator = self.decoder.generator
        generator.m_source.float()
        generator.conv_post.float()
        generator.window = generator.window.float()

    def compile_kernels(self, fused: kernels.Kernels | None = None) -> None:
        """Fuse the decoder's elementwise chains with ``torch.compile`` (see ``kernels.py``; or
        ``fused``, chains compiled otherwise): the GPU path. Each chain compiles on its first
        call of each variant (``warm_compiled_kernels``)."""
        fused = fused or kernels.compiled()
        for module in self.modules():
            if hasattr(module, "kernels"):
                setattr(module, "kernels", fused)  # noqa: B010 - a plain attribute of several classes

    def warm_compiled_kernels(self) -> None:
        """Compile the fused chains' variants before traffic meets them: a lone item (dynamo
        specialises a batch of 1), a padded pair (the mask; a batch size every larger batch
        shares, the shapes being dynamic) and, on a CPU, where an unpadded batch has no mask, an
        even pair. Left to traffic, a GPU server's first burst of four streams waited 7-11 s for
        Inductor (H200, ``bench/gpu_first_byte.sh``) after a lone stream had compiled only its
        own variant. Runs through ``forward`` under inference mode, as the engine calls it, so
        the graphs (when recorded) and the guards are the ones traffic takes."""
        ids = [0, *range(16, 48), 0]
        styles = torch.zeros(2, 256)
        with torch.inference_mode():
            self([ids], styles[:1], torch.ones(1))
            self([ids, ids[:12] + [0]], styles, torch.ones(2))
            if self.device.type == "cpu":
                self([ids, ids], styles, torch.ones(2))

    def record_graphs(self) -> None:
        """Replay the decoder from CUDA graphs (``graphs.py``): the GPU path when it is
        launch-bound. Call it after ``compile_kernels``, whose fused chains the graphs record."""
        if self.device.type != "cuda":
            raise ValueError("CUDA graphs need the model on a GPU")
        self.graphs = GraphedDecoder(self.decoder)

    def use_spectral_convolutions(self) -> None:
        """The generator's residual blocks' convolutions of kernel 7 and 11 computed blockwise in
        the frequency domain (``spectral_conv.py``): the same arithmetic in less CPU time, for some
        560 MB of kernel spectra in float32 (280 in bfloat16). Call it before
        ``set_decoder_dtype``, so the spectra are taken from the float32 weights."""
        generator = self.decoder.generator
        replace_long_convolutions(generator.resblocks)
        replace_long_convolutions(generator.noise_res)

    def use_time_major_blocks(self) -> None:
        """The generator's residual blocks over time-major activations (``time_major.py``): oneDNN's
        layout for bfloat16 convolutions on a CPU with AMX, where each channel-first convolution
        copied its output back."""
        self.decoder.generator.use_time_major_blocks()

    def quantize_dynamic(self) -> None:
        """The CPU int8 path: every convolution but the last as ``Int8Conv1d`` (activations
        quantized per call, as the shipped onnxruntime graph runs; weights per output channel,
        which keeps more of the original than the graph's per-tensor int8).

        Activation scales are taken over the whole input, so a padded batch would change an
        item's audio: int8 engines run one item per forward pass."""

        last = self.decoder.generator.conv_post
        swap_convolutions(self, lambda conv: None if conv is last else Int8Conv1d(conv))

    @property
    def device(self) -> torch.device:
        return self.bert_encoder.weight.device

    def forward(
        self, ids: Sequence[Sequence[int]], styles: torch.Tensor, speeds: torch.Tensor
    ) -> KokoroOutput:
        """``ids``: token ids per item *with* the boundary zeros; ``styles`` ``[B, 256]``;
        ``speeds`` ``[B]`` (2.0 speaks twice as fast)."""
        if self.decoder_dtype is None and self.device.type == "cuda":
            # float32 on a GPU stays float32: cuDNN's TF32 convolutions (PyTorch's default) keep
            # 10 mantissa bits, and a batch of another size picks other kernels, so batched items
            # fell to 20 dB SNR against their unbatched selves; 40 dB without (H100). TF32, like
            # bfloat16, is for whoever opts out of batch invariance.
            cudnn = torch.backends.cudnn
            with cudnn.flags(
                enabled=cudnn.enabled, benchmark=cudnn.benchmark, deterministic=cudnn.deterministic, allow_tf32=False
            ):
                return self._forward(ids, styles, speeds)
        return self._forward(ids, styles, speeds)

    def _forward(
        self, ids: Sequence[Sequence[int]], styles: torch.Tensor, speeds: torch.Tensor
    ) -> KokoroOutput:
        device = self.device
        width = max(len(item) for item in ids)
        padded = [[*item, *[0] * (width - len(item))] for item in ids]
        tokens = torch.tensor(padded, dtype=torch.long).to(device)  # built on the host, copied once
        lengths = torch.tensor([len(item) for item in ids], device=device)
        valid = torch.arange(width, device=device)[None, :] < lengths[:, None]
        styles = styles.to(device=device, dtype=torch.float32)
        timbre, prosody = styles[:, :128], styles[:, 128:]

        bert = self.bert(tokens, valid)
        d_en = self.bert_encoder(bert)
        d = self.predictor.text_encoder(d_en, prosody, lengths)
        durations = self.predictor.durations(d, lengths, speeds.to(device=device, dtype=torch.float32))
        frames = durations.sum(dim=1)
        counts = frames.tolist()  # the pass's one wait for the device: the frame counts shape the rest
        alignment = _alignment(durations, max(counts))  # [B, T, F]
        en = d.transpose(1, 2) @ alignment
        f0, energy = self.predictor.curves(en, prosody, frames)
        asr = self.text_encoder(tokens, lengths) @ alignment
        if self.decoder_dtype is not None:
            asr, timbre = asr.to(self.decoder_dtype), timbre.to(self.decoder_dtype)
        decode: PaddedDecoder = self.graphs or self.decoder
        audio = per_item(decode(asr, f0, energy, timbre, frames), counts)
        return KokoroOutput(
            audio=[a.float() for a in audio],
            durations=[durations[row, : len(item)] for row, item in enumerate(ids)],
        )


def _alignment(durations: torch.Tensor, width: int) -> torch.Tensor:
    """One-hot ``[B, T, F]``: frame f belongs to token t (zero columns past each item's end)."""
    ends = durations.cumsum(dim=1)
    starts = ends - durations
    steps = torch.arange(width, device=durations.device)[None, None, :]
    return ((steps >= starts[..., None]) & (steps < ends[..., None])).to(torch.float32)
