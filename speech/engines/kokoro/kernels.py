"""The elementwise chains of Kokoro's decoder, written once as plain functions.

On an H100 at batch 64, two thirds of the decoder's GPU time went to elementwise passes over
``[B, C, T]`` tensors at up to 24 kHz: the instance norm's statistics, the AdaIN affine,
Snake's sine, square and multiply-add, the masks and the residual sums. Each eager op reads and
writes the whole tensor, so the decoder was bound by memory traffic, not arithmetic. The
functions here are those chains; ``COMPILED`` hands them to ``torch.compile`` (Inductor), which
fuses each chain into a reduction and one pointwise kernel. ``EAGER`` runs them op by op and is
what the CPU uses: there, compiling costs seconds at start and a C++ toolchain, and the int8
path (opt-in on CPU) gains nothing from it. For float32, the CPU default now, the fused chains
took 0.78-0.86x eager's CPU time on a 2-vCPU Zen 5 (``python -m bench.kokoro_kernels``, audio 45 dB
SNR against eager), after about 30 s of compiling at start and again on some new shapes: not yet the CPU default (issue 24's
speed item; ``docs/benchmarks.md``).

Every function keeps the padding at zero (``mask``), as ``layers.py`` promises, so compiled and
eager blocks are interchangeable and a batched item still gets its unbatched output.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F


def masked(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """``x`` with the padding set to zero."""
    return x if mask is None else x * mask.to(x.dtype)


def time_stats(x: torch.Tensor, mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and (biased) variance over time, from the valid positions only, in float32 whatever
    ``x``'s precision: a bfloat16 mean square keeps 8 bits, so the variance, a difference of two
    such numbers, can come out zero or negative, and ``rsqrt`` then blew a single item's
    decoder up to 1e22 on a CPU with AMX (a padded batch took the other branch and hid it)."""
    if mask is None:
        # Two vectorised reductions (the mean and the mean square): several times faster on
        # CPU than torch.var_mean's Welford loop. These activations' means are within a few
        # standard deviations of zero, so float32 keeps the variance to ~1e-6 (parity-tested).
        if x.dtype in (torch.float32, torch.float64):
            mean = x.mean(dim=-1, keepdim=True)
            square = (x * x).mean(dim=-1, keepdim=True)
        else:
            # Squares rounded to bfloat16 lose exactly the part that is the variance (for x near
            # 1 on a grid of 1/128, the k^2/16384 of (1 + k/128)^2), so the norm squares in float32.
            mean = x.mean(dim=-1, keepdim=True, dtype=torch.float32)
            norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True, dtype=torch.float32)
            square = norm.square_() / x.shape[-1]
        return mean, (square - mean * mean).clamp_(min=0)
    mask = mask.to(x.dtype)
    count = mask.sum(dim=-1, keepdim=True, dtype=torch.float32).clamp(min=1)
    mean = (x * mask).sum(dim=-1, keepdim=True, dtype=torch.float32) / count
    centred = (x - mean.to(x.dtype)) * mask
    return mean, (centred * centred).sum(dim=-1, keepdim=True, dtype=torch.float32) / count


def adain(
    x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, mask: torch.Tensor | None, eps: float
) -> torch.Tensor:
    """Instance norm with a style-given scale and shift: ``(1 + gamma) * norm(x) + beta``. The
    per-channel scale and shift are made in float32 and only then meet ``x`` at its precision."""
    if mask is None and x.dtype == torch.bfloat16 and x.device.type == "cpu" and not torch.compiler.is_compiling():
        return _adain_batch_norm(x, gamma, beta, eps)
    mean, var = time_stats(x, mask)
    scale = (1 + gamma.float()) * torch.rsqrt(var + eps)
    shift = beta.float() - mean * scale
    return torch.addcmul(shift.to(x.dtype), x, scale.to(x.dtype))


def _adain_batch_norm(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float) -> torch.Tensor:
    """``adain`` for an unpadded bfloat16 batch on a CPU, as one ``batch_norm`` over the ``B * C``
    rows: the CPU kernel reads bfloat16 and keeps its sums, the statistics and the affine in
    float32 (its mixed-type path), rounding once, at the output. ``time_stats`` reaches float32
    by converting the whole tensor, twice (the mean and the norm each copy it): on a 2-vCPU Zen 5
    those copies and the bfloat16 ``addcmul`` were a third of Kokoro's decoder time, and this is
    one pass to read the statistics and one to write."""
    batch, channels = x.shape[:2]
    weight = (1 + gamma.float()).reshape(batch, channels)
    bias = beta.float().reshape(batch, channels)
    if x.dim() == 4:  # time-major [B, C, 1, T] (``time_major.py``): an item's channels over its own steps
        items = [
            torch.batch_norm(x[b : b + 1], weight[b], bias[b], None, None, True, 0.0, eps, False) for b in range(batch)
        ]
        return items[0] if batch == 1 else torch.cat(items)
    flat = x.reshape(1, batch * channels, x.shape[-1])
    return torch.batch_norm(flat, weight.reshape(-1), bias.reshape(-1), None, None, True, 0.0, eps, False).view(x.shape)


def adain_snake(
    x: torch.Tensor,
    gamma: torch.Tensor,
    beta: torch.Tensor,
    alpha: torch.Tensor,
    mask: torch.Tensor | None,
    eps: float,
) -> torch.Tensor:
    """AdaIN, then Snake (``h + sin(alpha h)^2 / alpha``), padding zeroed: a resblock's conv input."""
    h = adain(x, gamma, beta, mask, eps)
    wave = torch.mul(alpha, h).sin_().square_()  # in place: one temporary the size of h, not three
    return masked(h.addcmul_(wave, alpha.reciprocal()), mask)


def adain_leaky(
    x: torch.Tensor,
    gamma: torch.Tensor,
    beta: torch.Tensor,
    mask: torch.Tensor | None,
    eps: float,
    slope: float,
) -> torch.Tensor:
    """AdaIN, then LeakyReLU, padding zeroed: the decoder's residual blocks' conv input."""
    return masked(F.leaky_relu(adain(x, gamma, beta, mask, eps), slope), mask)


def residual(h: torch.Tensor, shortcut: torch.Tensor, mask: torch.Tensor | None, scale: float) -> torch.Tensor:
    """``(h + shortcut) * scale``, padding zeroed; ``h`` (a convolution's fresh output) is reused."""
    out = h.add_(shortcut)
    if scale != 1.0:
        out = out.mul_(scale)
    return masked(out, mask)


@dataclass(frozen=True, slots=True)
class Kernels:
    adain_snake: Callable[..., torch.Tensor]
    adain_leaky: Callable[..., torch.Tensor]
    residual: Callable[..., torch.Tensor]


EAGER = Kernels(adain_snake, adain_leaky, residual)


@functools.cache
def compiled() -> Kernels:
    """The same functions through ``torch.compile`` with dynamic shapes (batch and length vary
    per call), built once per process; each compiles on first use.

    Each chain meets a handful of variants (float32 and bfloat16, the mask's presence, the
    residual's two scales, batch 1): more than dynamo's default of 8 per function, past which it
    would quietly run the rest eager."""
    return compile_chains("inductor")


def compile_chains(backend: str) -> Kernels:
    """The chains through ``torch.compile`` on ``backend``: dynamo's guards, and so which
    variants recompile, are the same on any backend ("eager" traces without generating code)."""
    import torch._dynamo

    torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, 64)
    return Kernels(*(torch.compile(fn, dynamic=True, backend=backend) for fn in (adain_snake, adain_leaky, residual)))
