"""Inverse of the monotonic rational-quadratic spline used by the duration predictor's flows.

Inside ``[-tail_bound, tail_bound]`` each value is mapped through a spline of ``num_bins`` bins
whose widths, heights and knot derivatives come from the network; outside it the map is the
identity (linear tails). Only the inverse is needed at inference: solve the per-bin quadratic
for the input that maps onto each value. Vectorised with ``where`` instead of boolean indexing,
so shapes stay static and padded batches work.
"""

from __future__ import annotations

import math

import torch
from torch.nn import functional as F


def _knots(unnormalized: torch.Tensor, lower: float, upper: float, minimum: float) -> torch.Tensor:
    """Cumulative knot positions from logits: each bin at least ``minimum`` of the range."""
    num_bins = unnormalized.shape[-1]
    sizes = minimum + (1 - minimum * num_bins) * torch.softmax(unnormalized, dim=-1)
    cum = F.pad(torch.cumsum(sizes, dim=-1), (1, 0), value=0.0)
    cum = (upper - lower) * cum + lower
    # Pin the ends exactly, as the reference does, so rounding never leaves a gap.
    return torch.cat(
        [torch.full_like(cum[..., :1], lower), cum[..., 1:-1], torch.full_like(cum[..., :1], upper)], -1
    )


def inverse_rational_quadratic(
    values: torch.Tensor,
    unnormalized_widths: torch.Tensor,
    unnormalized_heights: torch.Tensor,
    unnormalized_derivatives: torch.Tensor,
    tail_bound: float,
    min_bin_width: float = 1e-3,
    min_bin_height: float = 1e-3,
    min_derivative: float = 1e-3,
) -> torch.Tensor:
    """``values`` [...]; the three parameter tensors [..., bins], [..., bins], [..., bins - 1]."""
    inside = (values >= -tail_bound) & (values <= tail_bound)
    y = values.clamp(-tail_bound, tail_bound)

    # Derivatives at the two outer knots match the identity tails (softplus(c) + min == 1).
    edge = math.log(math.exp(1 - min_derivative) - 1)
    derivatives = F.pad(unnormalized_derivatives, (1, 1), value=edge)
    derivatives = min_derivative + F.softplus(derivatives)

    cumwidths = _knots(unnormalized_widths, -tail_bound, tail_bound, min_bin_width)
    widths = cumwidths[..., 1:] - cumwidths[..., :-1]
    cumheights = _knots(unnormalized_heights, -tail_bound, tail_bound, min_bin_height)
    heights = cumheights[..., 1:] - cumheights[..., :-1]

    # Bin of each value: how many knots (the last nudged up) lie at or below it, minus one.
    search = torch.cat([cumheights[..., :-1], cumheights[..., -1:] + 1e-6], dim=-1)
    num_bins = widths.shape[-1]
    bin_idx = (torch.sum(y.unsqueeze(-1) >= search, dim=-1) - 1).clamp(0, num_bins - 1).unsqueeze(-1)

    def pick(t: torch.Tensor) -> torch.Tensor:
        return torch.gather(t, -1, bin_idx).squeeze(-1)

    x_left = pick(cumwidths)
    bin_width = pick(widths)
    y_low = pick(cumheights)
    bin_height = pick(heights)
    delta = pick(heights / widths)
    d_left = pick(derivatives)
    d_right = pick(derivatives[..., 1:])

    dy = y - y_low
    curvature = d_left + d_right - 2 * delta
    a = dy * curvature + bin_height * (delta - d_left)
    b = bin_height * d_left - dy * curvature
    c = -delta * dy
    discriminant = b.pow(2) - 4 * a * c
    root = (2 * c) / (-b - torch.sqrt(discriminant))
    return torch.where(inside, root * bin_width + x_left, values)
