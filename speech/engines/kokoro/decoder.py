"""Kokoro's decoder: StyleTTS2's AdaIN residual stack, then an iSTFTNet generator with a
harmonic-plus-noise source.

The source turns the F0 curve into nine harmonics (phase integrated at the frame rate, as the
model was trained), merged by a linear layer and tanh. Its STFT (magnitude and phase, n_fft 20,
hop 5) is added into both upsampling stages through the ``noise_convs``. The generator ends
in 11 log-magnitude and 11 phase bins per 5 samples, turned into audio by an inverse STFT.

The source is deterministic: the exported graph drops the random initial phase and the noise
of training, and so do we. Everything runs on the padded batch at once, a fixed number of
kernel launches whatever the batch size (a loop per item cost the host more time than the GPU
spent on the batch). What spans an item's end is made to see what the item sees alone: the
phase stops accumulating at the item's last curve step, the source's STFT reflects at the
item's own end, and the inverse STFT overlap-adds and normalises over the item's frames only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from speech.engines.kokoro import kernels
from speech.engines.kokoro.layers import AdaIN1d, AdainResBlk1d, masked, time_mask
from speech.engines.kokoro.time_major import (
    mask_time_major,
    replace_block_convolutions,
    to_channel_first,
    to_time_major,
)

STYLE = 128
SAMPLE_RATE = 24000
N_FFT = 20
HOP = 5
UPSAMPLE_RATES = (10, 6)
UPSAMPLE_KERNELS = (20, 12)
RESBLOCK_KERNELS = (3, 7, 11)
DILATIONS = (1, 3, 5)
HARMONICS = 9
SINE_AMP = 0.1
VOICED_THRESHOLD = 10.0
SAMPLES_PER_CURVE_STEP = math.prod(UPSAMPLE_RATES) * HOP  # 300: the F0 curve runs at 2x the frame rate
SAMPLES_PER_FRAME = 2 * SAMPLES_PER_CURVE_STEP
# The source STFT's phase (see ``_phase``): a bin well below PHASE_FLOOR has none (100x the rounding
# of a 20-point FFT of a signal bounded by tanh, ~1e-6; 30x below the noise training added,
# 3e-3), and an imaginary part below PHASE_ROUNDING of the bin's magnitude (~100 float32 ulps)
# is rounding of a real bin.
PHASE_FLOOR = 1e-4
PHASE_ROUNDING = 1e-5


def _padding(kernel: int, dilation: int = 1) -> int:
    return (kernel * dilation - dilation) // 2


class AdaINResBlock1(nn.Module):
    """HiFi-GAN's ResBlock1 with AdaIN before each conv and Snake activations."""

    def __init__(self, channels: int, kernel: int, dilations: tuple[int, ...] = DILATIONS) -> None:
        super().__init__()
        self.convs1 = nn.ModuleList(
            [nn.Conv1d(channels, channels, kernel, 1, dilation=d, padding=_padding(kernel, d)) for d in dilations]
        )
        self.convs2 = nn.ModuleList(
            [nn.Conv1d(channels, channels, kernel, 1, padding=_padding(kernel)) for _ in dilations]
        )
        self.adain1 = nn.ModuleList([AdaIN1d(STYLE, channels) for _ in dilations])
        self.adain2 = nn.ModuleList([AdaIN1d(STYLE, channels) for _ in dilations])
        self.alpha1 = nn.ParameterList([nn.Parameter(torch.ones(1, channels, 1)) for _ in dilations])
        self.alpha2 = nn.ParameterList([nn.Parameter(torch.ones(1, channels, 1)) for _ in dilations])
        self.kernels = kernels.EAGER

    def forward(self, x: torch.Tensor, style: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """``x`` ``[B, C, T]``, or time-major ``[B, C, 1, T]`` (``time_major.py``) with a mask to match."""
        ops = self.kernels
        fit = _channel_factor if x.dim() == 4 else _same
        for c1, c2, n1, n2, a1, a2 in zip(
            self.convs1, self.convs2, self.adain1, self.adain2, self.alpha1, self.alpha2, strict=True
        ):
            h = c1(ops.adain_snake(x, *map(fit, n1.affine(style)), fit(a1), mask, n1.eps))
            h = c2(ops.adain_snake(h, *map(fit, n2.affine(style)), fit(a2), mask, n2.eps))
            x = ops.residual(h, x, mask, 1.0)
        return x


def _same(factor: torch.Tensor) -> torch.Tensor:
    return factor


def _channel_factor(factor: torch.Tensor) -> torch.Tensor:
    """A per-channel ``[B, C, 1]`` factor for time-major ``[B, C, 1, T]`` activations."""
    return factor.unsqueeze(-1)


class SourceModule(nn.Module):
    """F0 (at the curve rate) to the merged harmonic excitation at the sample rate."""

    def __init__(self) -> None:
        super().__init__()
        self.l_linear = nn.Linear(HARMONICS, 1)

    def forward(self, f0: torch.Tensor, steps: torch.Tensor | None = None) -> torch.Tensor:
        """``f0`` ``[B, S]`` (or ``[S]``, one item) -> excitation ``[B, 300 S]`` (or ``[300 S]``).
        ``steps``: valid curve steps per item (all ``S`` if ``None``); past an item's
        ``300 * steps`` samples the excitation is unvoiced and never read (see
        ``Generator._harmonic_spectrum``).

        As trained, the phase increment is taken per curve step (nearest upsampling followed by
        the trained linear downsampling gives back each step's own value, so it is computed at
        the curve rate directly), integrated there and interpolated up linearly. Past an item's
        end the increment is zero, so the phase holds its last value, which is what the
        interpolation clamps to when the item is alone.

        The phase is integrated in float64: in float32 a phase of 1e5 radians (a few seconds
        of the ninth harmonic) keeps only 0.01 rad, so one ulp of difference in F0 (a batch
        of another size, another BLAS) became audible sample differences. The exported graph
        integrates in float32; the parity test accounts for that."""
        one = f0.dim() == 1
        if one:
            f0 = f0[None]
        valid = None if steps is None else time_mask(steps, f0.shape[-1])
        if valid is not None:
            f0 = masked(f0, valid[:, 0])
        scale = SAMPLES_PER_CURVE_STEP
        f0_64 = f0.to(torch.float64)
        harmonics = torch.arange(1, HARMONICS + 1, device=f0.device, dtype=torch.float64)
        # Harmonics lead ([9, B, S]), so that the merge below reads each item's sines in the
        # layout it has alone, and one item's excitation is the same bits in a batch or not.
        rad = f0_64[None, :, :] * harmonics[:, None, None] / SAMPLE_RATE
        rad = rad - torch.floor(rad)
        phase = torch.cumsum(rad, dim=-1) * (2 * math.pi) * scale
        phase = F.interpolate(phase, scale_factor=float(scale), mode="linear", align_corners=False)
        phase = torch.remainder(phase, 2 * math.pi).to(f0.dtype)
        voiced = (f0 > VOICED_THRESHOLD).to(f0.dtype).repeat_interleave(scale, dim=-1)  # nearest upsampling
        sines = torch.sin(phase) * SINE_AMP * voiced[None]  # [9, B, T]
        merged = self.l_linear(sines.reshape(HARMONICS, -1).transpose(0, 1))  # [B T, 1]
        source = torch.tanh(merged).view(f0.shape[0], -1)
        return source[0] if one else source


def _phase(spec: torch.Tensor, magnitude: torch.Tensor) -> torch.Tensor:
    """The source STFT's phase ``[B, 11, N]``, the same bits on every CPU.

    ``torch.angle`` of a rounded number is fine until the number sits where the angle is not
    continuous, and the excitation puts bins there all the time. Where it is unvoiced it is a
    constant (``tanh`` of the merge's bias), and the DFT of a constant under a periodic Hann
    window is real: bin 0 is ``10 c``, bin 1 is ``-5 c``, the rest zero. So bin 1 (and DC, for a
    negative constant) lies on the negative real axis, where the angle jumps from pi to -pi with
    the sign of an imaginary part that is only rounding, and bins 2-10 hold rounding alone, whose
    angle is anything. The generator reads the phase at full weight whatever the magnitude: one
    part in 1e7 of difference in the source (another FFT or GEMM kernel, a batch of another size,
    an Intel CPU's AVX-512 paths) moved whole silences and consonants (4-8 dB SNR), and a batched
    item's end on an Intel Xeon (30 dB). So an imaginary part within rounding of the magnitude
    counts as +0 (the angle of a negative real is then pi), and the phase fades to 0 as the
    bin's magnitude falls below ``PHASE_FLOOR`` (smoothly: a cut-off would itself flip a bin
    whose magnitude sits on it, as two in a hundred thousand did in the test). Training added
    noise to the source, so the model never relied on either value."""
    real, imag = spec.real, spec.imag
    on_axis = imag.abs() <= PHASE_ROUNDING * magnitude
    phase = torch.atan2(torch.where(on_axis, torch.zeros_like(imag), imag), real)
    power = magnitude.square()
    return phase * (power / (power + PHASE_FLOOR**2))


class Generator(nn.Module):
    window: torch.Tensor  # a buffer (``register_buffer``), typed for the checker

    def __init__(self, initial_channels: int = 512) -> None:
        super().__init__()
        self.m_source = SourceModule()
        self.ups = nn.ModuleList()
        self.resblocks = nn.ModuleList()
        self.noise_convs = nn.ModuleList()
        self.noise_res = nn.ModuleList()
        channels = initial_channels
        for i, (rate, kernel) in enumerate(zip(UPSAMPLE_RATES, UPSAMPLE_KERNELS, strict=True)):
            out = initial_channels // 2 ** (i + 1)
            self.ups.append(nn.ConvTranspose1d(channels, out, kernel, rate, padding=(kernel - rate) // 2))
            for k in RESBLOCK_KERNELS:
                self.resblocks.append(AdaINResBlock1(out, k))
            if i + 1 < len(UPSAMPLE_RATES):
                stride = math.prod(UPSAMPLE_RATES[i + 1 :])
                self.noise_convs.append(nn.Conv1d(N_FFT + 2, out, stride * 2, stride, padding=(stride + 1) // 2))
                self.noise_res.append(AdaINResBlock1(out, 7))
            else:
                self.noise_convs.append(nn.Conv1d(N_FFT + 2, out, 1))
                self.noise_res.append(AdaINResBlock1(out, 11))
            channels = out
        self.conv_post = nn.Conv1d(channels, N_FFT + 2, 7, 1, padding=3)
        self.register_buffer("window", torch.hann_window(N_FFT, periodic=True), persistent=False)
        self.time_major = False  # ``KokoroModel.use_time_major_blocks``

    def use_time_major_blocks(self) -> None:
        """Hold the residual blocks' activations time-major (``time_major.py``)."""
        replace_block_convolutions(self.resblocks)
        replace_block_convolutions(self.noise_res)
        self.time_major = True

    def _harmonic_spectrum(self, f0: torch.Tensor, steps: torch.Tensor) -> torch.Tensor:
        """Excitation -> STFT magnitude and phase, ``[B, 22, 60 S + 1]`` for ``f0`` ``[B, S]``,
        each item's columns past its own ``60 steps + 1`` zero.

        A lone item's centred STFT reflects its signal at both ends; each row is reflected at its
        own end here (one gather), so the frames near an item's end never see the padding."""
        source = self.m_source(f0, steps)  # [B, T]
        width = source.shape[-1]
        samples = steps * SAMPLES_PER_CURVE_STEP
        pad = N_FFT // 2
        index = (torch.arange(-pad, width + pad, device=source.device)[None, :]).abs()  # [1, T + 20]
        last = samples[:, None] - 1
        index = torch.where(index > last, 2 * last - index, index).clamp(0, width - 1)  # [B, T + 20]
        padded = source.gather(1, index)
        spec = torch.stft(padded, N_FFT, HOP, N_FFT, window=self.window, center=False, return_complex=True)
        magnitude = spec.abs()
        har = torch.cat([magnitude, _phase(spec, magnitude)], dim=1)
        return masked(har, time_mask(samples // HOP + 1, har.shape[-1]))

    def _istft(self, x: torch.Tensor, frames: torch.Tensor) -> torch.Tensor:
        """Log-magnitude and phase ``[B, 22, N]`` -> audio ``[B, 5 (N - 1)]``; item ``b`` is
        exact over its first ``5 (frames[b] - 1)`` samples.

        ``torch.istft``'s own steps (inverse FFT per frame, window, overlap-add, division by the
        summed squared window, trimming the centring), in its order and with its overlap-add
        (``unfold_backward``), so that one item alone gets the same bits as from ``torch.istft``.
        Written out so that each item's frames past its end are dropped from both the sum and
        the normalisation: in a batch those frames would change the item's last samples. Unlike
        ``torch.istft`` it does not ask the device whether the window sum is nonzero (a wait
        per call); for a Hann window at hop ``N_FFT / 4`` it is."""
        batch, _, count = x.shape
        mask = time_mask(frames, count)  # [B, 1, N] or None
        spec = torch.polar(torch.exp(x[:, : N_FFT // 2 + 1]), torch.sin(x[:, N_FFT // 2 + 1 :]))
        chunks = torch.fft.irfft(spec.transpose(1, 2), n=N_FFT, dim=-1) * self.window  # [B, N, 20]
        weights = self.window.pow(2).expand(1, count, N_FFT)
        if mask is not None:
            chunks = masked(chunks, mask.transpose(1, 2))
            weights = masked(weights, mask.transpose(1, 2))  # [B, N, 20]
        size = HOP * (count - 1) + N_FFT
        overlap_add = torch.ops.aten.unfold_backward
        audio: torch.Tensor = overlap_add(chunks, [batch, size], 1, N_FFT, HOP)
        envelope: torch.Tensor = overlap_add(weights, [weights.shape[0], size], 1, N_FFT, HOP)
        pad = N_FFT // 2
        return audio[:, pad : size - pad] / envelope[:, pad : size - pad].clamp(min=1e-11)

    def forward(self, x: torch.Tensor, style: torch.Tensor, f0: torch.Tensor, frames: torch.Tensor) -> torch.Tensor:
        """``x`` ``[B, 512, 2F]`` -> padded waveforms ``[B, 600 F]``: item ``b``'s audio is its first
        ``600 * frames[b]`` samples (``per_item``)."""
        har = self._harmonic_spectrum(f0.float(), frames * 2).to(x.dtype)
        lengths = frames * 2
        for i, up in enumerate(self.ups):
            x = F.leaky_relu(x, 0.1)
            lengths = lengths * UPSAMPLE_RATES[i]
            x = up(x)
            if i == len(self.ups) - 1:
                x = F.pad(x, (1, 0), mode="reflect")
                lengths = lengths + 1
            mask = time_mask(lengths, x.shape[-1])
            source = masked(self.noise_convs[i](har)[..., : x.shape[-1]], mask)
            blocks = self.resblocks[i * len(RESBLOCK_KERNELS) : (i + 1) * len(RESBLOCK_KERNELS)]
            if self.time_major:  # the blocks' activations time-major, from here to the stage's end
                x, source, mask = to_time_major(x), to_time_major(source), mask_time_major(mask)
            source = self.noise_res[i](source, style, mask)
            x = masked(x + source, mask)
            x = sum(block(x, style, mask) for block in blocks) / len(RESBLOCK_KERNELS)
            if self.time_major:
                x = to_channel_first(x)
        # conv_post runs in float32 (its weights stay there, ``KokoroModel.set_decoder_dtype``):
        # its output is a log-magnitude, and bfloat16 would round a value near 8 to a step of
        # 1/16, a 6% step in every bin's amplitude.
        return self._istft(self.conv_post(F.leaky_relu(x, 0.01).float()), lengths)


class Decoder(nn.Module):
    def __init__(self, dim_in: int = 512) -> None:
        super().__init__()
        self.encode = AdainResBlk1d(dim_in + 2, 1024, STYLE)
        self.decode = nn.ModuleList(
            [AdainResBlk1d(1024 + 2 + 64, 1024, STYLE) for _ in range(3)]
            + [AdainResBlk1d(1024 + 2 + 64, 512, STYLE, upsample=True)]
        )
        self.F0_conv = nn.Conv1d(1, 1, 3, 2, 1)
        self.N_conv = nn.Conv1d(1, 1, 3, 2, 1)
        self.asr_res = nn.Sequential(nn.Conv1d(512, 64, 1))
        self.generator = Generator()

    def forward(
        self,
        asr: torch.Tensor,
        f0: torch.Tensor,
        energy: torch.Tensor,
        style: torch.Tensor,
        frames: torch.Tensor,
    ) -> torch.Tensor:
        """``asr`` ``[B, 512, F]``, ``f0`` and ``energy`` ``[B, 2F]`` -> padded waveforms ``[B, 600 F]``
        (``per_item`` cuts them). No step asks the device anything, so a CUDA graph can record
        the whole call (``graphs.py``)."""
        mask = time_mask(frames, asr.shape[-1])
        f0_down = masked(self.F0_conv(f0[:, None].to(asr.dtype)), mask)
        n_down = masked(self.N_conv(energy[:, None].to(asr.dtype)), mask)
        x = self.encode(torch.cat([asr, f0_down, n_down], dim=1), style, frames)
        residual = masked(self.asr_res(asr), mask)
        lengths = frames
        for block in self.decode:
            x = torch.cat([x, residual, f0_down, n_down], dim=1)
            x = block(x, style, lengths)
            if block.upsample:
                lengths = lengths * 2
        return self.generator(x, style, f0, frames)


def per_item(audio: torch.Tensor, counts: Sequence[int]) -> list[torch.Tensor]:
    """Each item's waveform out of a padded ``[B, N]`` batch. ``counts`` are the frames on the
    host: asking the device for them would wait for the whole stack."""
    return [audio[row, : SAMPLES_PER_FRAME * n] for row, n in enumerate(counts)]
