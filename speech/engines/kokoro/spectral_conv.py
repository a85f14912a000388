"""The generator's long convolutions computed blockwise in the frequency domain.

Four fifths of Kokoro's CPU time goes to convolutions, and most of that to the generator's
residual blocks at kernels 7 and 11, with 128 and 256 channels at 4,800 and 800 steps a second
of audio. A direct convolution spends ``kernel * C_in * C_out`` multiply-adds on every output
step, whatever its dilation. Overlap-save does the same arithmetic in blocks of ``L`` samples:
each block's spectrum is multiplied by the kernel's, one ``C_in x C_out`` complex matrix per
frequency bin, about ``1.5 * C_in * C_out * L / (L - kernel + 1)`` real multiply-adds a step in
the three-product form below (a sixth of kernel 11's direct count, a quarter of kernel 7's; the
blocks' transforms add about ``2 L`` a channel).

Everything here is a GEMM, so it runs at the BLAS's speed on any CPU:
- A dilated kernel is a plain one over the signal's ``dilation`` interleaved phases (every
  ``d``-th sample), so every kernel is short and one block length (64) serves them all.
- The blocks' transforms are matrix products with the 64-point real DFT, computed for all blocks
  and channels at once, and they lay the spectra out bin by bin, as the product wants them, with
  no transposing copy (an FFT library's transforms and the copies around them cost more than
  they saved: ``torch.fft`` came to 0.7x the direct time where this comes to under half; on a
  Zen 3 a 64-point ``rfft`` of a round took 2.4 ms, and laying its output out by bin 8.8 ms
  more, against 7.4 ms for the matrix product). A real block's DC and Nyquist bins are real, so
  the transform is exactly 64 rows (33 cosines, 31 sines), as is the inverse's. The two
  transforms are 0.6x the product's multiply-adds at 128 channels (0.3x at 256), and being
  skinny products that stream their operands from memory they run at half its rate: on a 2-vCPU
  Zen 3 a round of 256 columns at 128 channels took 6.9 ms forward and 6.1 ms inverse against
  10.3 ms for the product (``torch.profiler``), so at 128 channels they are the larger part.
- The complex product takes three real matrix products a bin, not four (Gauss's trick; the
  kernel's three real combinations are kept), and one at the DC and Nyquist bins, where both
  sides are real: 95 products of ``C_out x C_in`` where the plain form takes 132. On a 2-vCPU
  Zen 4 a convolution took 0.76-0.89x the four-product form's time (0.77-0.86x with the AVX2
  kernels forced), for 44% more kernel spectra kept (below).
- The inverse transform computes only the block's ``L - kernel + 1`` valid outputs.

The arithmetic is the convolution's, exact up to float32 rounding (a few parts in 1e7 of the
output), so the voice sounds as the direct path does. In bfloat16 (the module cast with the
decoder, its spectra taken from the float32 weights first) every product accumulates in float32
as oneDNN's bfloat16 GEMMs do and rounds its output once: the decoder then sits 22.6-23.1 dB
SNR from float32, where the direct bfloat16 decoder sits 22.9-23.4, in 0.73-0.75x its time (two
sentences, Zen 4). Input and output stay channel-first, the
layout the direct convolutions and the elementwise chains around them read fastest (handing on a
time-major output cost oneDNN a reorder in the next convolution: ``conv_post`` took 2.5x as
long). Long signals go in rounds of ``COLUMNS`` blocks. No library offers this for ``conv1d`` (oneDNN and cuDNN pick direct, im2col or Winograd
kernels), so it is written here.

A position past an item's end is zero, as ``layers.py`` keeps it, and every output reads only
its own item's samples: a padded batch's item gets what it gets alone, to rounding.
"""

from __future__ import annotations

import math
from typing import cast

import torch
from torch import nn

from speech.engines.kokoro.conv_swap import swap_convolutions

#: Samples per block. With every kernel undilated (see above), 64 is where the spectral
#: product (which wants long blocks, so that fewer outputs are thrown away) meets the
#: transforms (which grow with the block): for kernel 11 at 128 channels, 46.7 thousand
#: multiply-adds a step against 45.0 at 32 (in smaller, slower GEMMs) and 60.7 at 128 (180
#: direct).
BLOCK = 64
#: The bins from DC to Nyquist, whose real parts lead a block's spectrum.
HALF = BLOCK // 2 + 1
#: Blocks (of all phases) transformed and multiplied at once: long sentences go in rounds, so
#: that a call's temporaries stay near 35 MB at 128 channels (a 15-second sentence's whole
#: signal at once took 170 MB a call, and peak memory with it) and within the last-level cache.
COLUMNS = 256
#: Kernels at least this long are worth it: at kernel 3 the spectral product alone costs what
#: the direct convolution does.
MIN_KERNEL = 7


def _transforms(length: int, kernel: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The real DFT of a block (``[L, L]``: the cosine rows of bins 0 to ``L/2``, then the
    negated sine rows of bins 1 to ``L/2 - 1``, the others being zero), the same for the
    kernel's ``kernel`` taps, and the inverse that returns a block's valid outputs from such a
    spectrum (``[L - kernel + 1, L]``). Built in float64, used in the module's precision."""
    bins = length // 2 + 1
    f = torch.arange(bins, dtype=torch.float64)
    angle = 2 * math.pi * f[:, None] * torch.arange(length, dtype=torch.float64)[None, :] / length
    forward = torch.cat([torch.cos(angle), -torch.sin(angle[1:-1])])  # [L, L]
    taps = forward[:, :kernel]
    valid = length - kernel + 1
    weight = torch.full((bins,), 2.0, dtype=torch.float64)
    weight[0] = weight[-1] = 1.0  # DC and Nyquist appear once in the full spectrum, the rest twice
    out_angle = angle[:, :valid].T  # [valid, bins]
    sines = -torch.sin(out_angle[:, 1:-1]) * weight[1:-1]
    inverse = torch.cat([torch.cos(out_angle) * weight, sines], dim=1) / length
    return forward.float(), taps.float(), inverse.float()


class SpectralConv1d(nn.Module):
    """An ``nn.Conv1d`` (stride 1, one group, zero "same" padding) by overlap-save (module
    docstring). Keeps three real combinations of the kernel's spectrum, ``95 x C_in x C_out``
    values: 6.2 MB at 128 channels, 25 MB at 256, in float32 (half in bfloat16)."""

    forward_dft: torch.Tensor
    inverse_dft: torch.Tensor
    real: torch.Tensor
    plus: torch.Tensor
    minus: torch.Tensor
    bias: torch.Tensor | None

    def __init__(self, conv: nn.Conv1d) -> None:
        super().__init__()
        (kernel,), (dilation,), (stride,) = conv.kernel_size, conv.dilation, conv.stride
        padding = cast(tuple[int, ...], conv.padding)[0]
        if stride != 1 or conv.groups != 1 or 2 * padding != (kernel - 1) * dilation or conv.padding_mode != "zeros":
            raise ValueError("SpectralConv1d takes stride-1, single-group convolutions with 'same' zero padding")
        self.kernel, self.dilation, self.padding = kernel, dilation, padding
        self.step = BLOCK - kernel + 1
        self.in_channels, self.out_channels = conv.in_channels, conv.out_channels
        forward, taps, inverse = _transforms(BLOCK, kernel)
        # The kernel's spectrum, [L, C_out, C_in]: one matrix product from the taps.
        weight = conv.weight.detach().float().permute(2, 1, 0).reshape(kernel, -1)  # [k, C_in C_out]
        spectrum = (taps @ weight).view(BLOCK, conv.in_channels, conv.out_channels).transpose(1, 2)
        # The product is the block's spectrum times the kernel's conjugate, a + ib with a its
        # real part and b its negated imaginary part (bins 1 to L/2 - 1): kept as a (all bins),
        # a + b and b - a, the three products' left sides (``_blocks``).
        real, imag = spectrum[:HALF], -spectrum[HALF:]
        self.register_buffer("forward_dft", forward, persistent=False)
        self.register_buffer("inverse_dft", inverse, persistent=False)
        self.register_buffer("real", real.contiguous(), persistent=False)
        self.register_buffer("plus", (real[1:-1] + imag).contiguous(), persistent=False)
        self.register_buffer("minus", (imag - real[1:-1]).contiguous(), persistent=False)
        self.register_buffer(
            "bias", None if conv.bias is None else conv.bias.detach().float().contiguous(), persistent=False
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, channels, steps = x.shape
        d, step = self.dilation, self.step
        # Output t = p + d m belongs to phase p; phase p's blocks start at m = n * step.
        blocks = math.ceil(math.ceil(steps / d) / step)
        width = d * ((blocks - 1) * step + BLOCK)
        signal = x.new_empty(batch, channels, width)
        signal[..., : self.padding].zero_()
        signal[..., self.padding + steps :].zero_()
        signal[..., self.padding : self.padding + steps].copy_(x)
        y = x.new_empty(batch, self.out_channels, d * blocks * step)
        per_round = max(1, COLUMNS // d)
        for item in range(batch):
            for first in range(0, blocks, per_round):
                count = min(per_round, blocks - first)
                out = self._blocks(signal[item], first, count)  # [C_out, phase, count * step]
                span = y[item, :, d * first * step : d * (first + count) * step]
                span.view(self.out_channels, count * step, d).copy_(out.transpose(1, 2))
        return y[..., :steps]

    def _blocks(self, signal: torch.Tensor, first: int, count: int) -> torch.Tensor:
        """Blocks ``first`` to ``first + count`` of every phase of one item's padded signal
        ``[C_in, width]``: their valid outputs, ``[C_out, phase, count * step]``."""
        channels = signal.shape[0]
        d, step = self.dilation, self.step
        # One row per (channel, phase, block), its L samples: p + d (n step + l).
        frames = signal.as_strided(
            (channels, d, count, BLOCK),
            (signal.stride(0), 1, d * step, d),
            signal.storage_offset() + first * d * step,
        ).contiguous()
        # [L, C_in, (phase, block)]: the transform reads the rows as columns. Rows 0 to L/2 are
        # the bins' real parts x, the rest the imaginary parts y of bins 1 to L/2 - 1.
        spectra = (self.forward_dft @ frames.view(-1, BLOCK).T).view(BLOCK, channels, d * count)
        x, y = spectra[:HALF], spectra[HALF:]
        inner = slice(1, HALF - 1)
        # (a + ib)(x + iy) from three products: k1 = a (x + y), k2 = (a + b) y, k3 = (b - a) x;
        # real part k1 - k2, imaginary part k1 + k3. At DC and Nyquist only a x.
        product = spectra.new_empty(BLOCK, self.out_channels, d * count)
        real, imag = product[:HALF], product[HALF:]
        for edge in (0, HALF - 1):
            torch.mm(self.real[edge], x[edge], out=real[edge])
        torch.bmm(self.real[inner], torch.add(x[inner], y), out=real[inner])
        imag.copy_(real[inner])
        real[inner].baddbmm_(self.plus, y, alpha=-1)
        imag.baddbmm_(self.minus, x[inner])
        if self.bias is not None:  # a constant is the DC bin alone: L times it there
            real[0].add_(self.bias[:, None], alpha=BLOCK)
        # Each column's valid outputs, [(C_out, phase, block), step].
        out = product.view(BLOCK, -1).T @ self.inverse_dft.T
        return out.view(self.out_channels, d, count * step)


def replace_long_convolutions(module: nn.Module) -> int:
    """Every ``nn.Conv1d`` inside ``module`` with a kernel of ``MIN_KERNEL`` or more, stride 1 and
    one group, swapped for its ``SpectralConv1d``; returns how many."""

    def spectral(conv: nn.Conv1d) -> nn.Module | None:
        long = conv.kernel_size[0] >= MIN_KERNEL and conv.stride[0] == 1 and conv.groups == 1
        return SpectralConv1d(conv) if long else None

    return swap_convolutions(module, spectral)
