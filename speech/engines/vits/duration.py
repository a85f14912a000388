"""The stochastic duration predictor ``dp``, run backwards: noise to log-durations per phoneme.

At inference VITS draws two channels of Gaussian noise per phoneme (scaled by ``noise_w``) and
sends them through the inverse of a normalising flow conditioned on the text encoder's hidden
sequence; the first channel is the log-duration. The flow is a stack of spline coupling layers
(``ConvFlow``) and channel flips ending in an element-wise affine map. The training graph's
second coupling layer is never used backwards (the reference drops it), and Piper's export leaves
out its weights, so ``flows.1`` is a placeholder here. Rows are time-major (``layers.Layout``).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from speech.engines.vits.config import ModelShape
from speech.engines.vits.layers import ChannelLayerNorm, TimeConv
from speech.engines.vits.spline import inverse_rational_quadratic


class DilatedDepthSeparableConv(nn.Module):
    """Residual stack of depthwise (dilations 1, k, k^2 ...) and 1x1 convolutions (``DDSConv``)."""

    def __init__(self, channels: int, kernel_size: int, n_layers: int) -> None:
        super().__init__()
        self.convs_sep = nn.ModuleList()
        self.convs_1x1 = nn.ModuleList()
        self.norms_1 = nn.ModuleList()
        self.norms_2 = nn.ModuleList()
        for i in range(n_layers):
            dilation = kernel_size**i
            self.convs_sep.append(
                TimeConv(channels, channels, kernel_size, groups=channels, dilation=dilation)
            )
            self.convs_1x1.append(TimeConv(channels, channels, 1))
            self.norms_1.append(ChannelLayerNorm(channels))
            self.norms_2.append(ChannelLayerNorm(channels))

    def forward(self, x: torch.Tensor, x_mask: torch.Tensor, g: torch.Tensor | None = None) -> torch.Tensor:
        if g is not None:
            x = x + g
        for sep, pointwise, norm_1, norm_2 in zip(
            self.convs_sep, self.convs_1x1, self.norms_1, self.norms_2, strict=True
        ):
            y = F.gelu(norm_1(sep(x * x_mask)))
            y = F.gelu(norm_2(pointwise(y)))
            x = x + y
        return x * x_mask


class Flip(nn.Module):
    def forward(self, x: torch.Tensor, x_mask: torch.Tensor, g: torch.Tensor | None = None) -> torch.Tensor:
        return torch.flip(x, [1])  # swaps the two channels of time-major rows


class Unused(nn.Module):
    """Stands where a training-only flow sits, so the others keep their parameter names."""


class ElementwiseAffine(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.m = nn.Parameter(torch.zeros(channels, 1))
        self.logs = nn.Parameter(torch.zeros(channels, 1))

    def forward(self, x: torch.Tensor, x_mask: torch.Tensor, g: torch.Tensor | None = None) -> torch.Tensor:
        return (x - self.m.t()) * torch.exp(-self.logs.t()) * x_mask


class ConvFlow(nn.Module):
    """Spline coupling: the second channel is transformed by a spline the first one parameterises."""

    def __init__(
        self, filter_channels: int, kernel_size: int, n_layers: int, num_bins: int, tail_bound: float
    ) -> None:
        super().__init__()
        self.filter_channels = filter_channels
        self.num_bins = num_bins
        self.tail_bound = tail_bound
        self.pre = TimeConv(1, filter_channels, 1)
        self.convs = DilatedDepthSeparableConv(filter_channels, kernel_size, n_layers)
        self.proj = TimeConv(filter_channels, num_bins * 3 - 1, 1)

    def forward(self, x: torch.Tensor, x_mask: torch.Tensor, g: torch.Tensor | None = None) -> torch.Tensor:
        x0 = x[:, :1]
        h = self.convs(self.pre(x0), x_mask, g)
        h = self.proj(h) * x_mask  # [rows, 3 * bins - 1]
        scale = 1.0 / math.sqrt(self.filter_channels)
        bins = self.num_bins
        x1 = inverse_rational_quadratic(
            x[:, 1], h[:, :bins] * scale, h[:, bins : 2 * bins] * scale, h[:, 2 * bins :], self.tail_bound
        )
        return torch.cat([x0, x1.unsqueeze(1)], dim=1) * x_mask


class StochasticDurationPredictor(nn.Module):
    def __init__(self, shape: ModelShape) -> None:
        super().__init__()
        channels = shape.hidden
        self.pre = TimeConv(channels, channels, 1)
        self.convs = DilatedDepthSeparableConv(channels, shape.kernel_size, 3)
        self.proj = TimeConv(channels, channels, 1)
        flows: list[nn.Module] = [ElementwiseAffine(2)]
        for i in range(shape.dp_flows):
            flow = ConvFlow(channels, shape.kernel_size, 3, shape.dp_bins, shape.dp_tail_bound)
            flows += [Unused() if i == 0 else flow, Flip()]
        self.flows = nn.ModuleList(flows)

    def forward(self, x: torch.Tensor, x_mask: torch.Tensor, noise_w: float) -> torch.Tensor:
        """Log-durations [rows] from the encoder's hidden rows ``x`` [rows, hidden]."""
        cond = self.proj(self.convs(self.pre(x), x_mask)) * x_mask
        rows = x.shape[0]
        if noise_w > 0:
            z = torch.randn(rows, 2, device=x.device, dtype=x.dtype) * noise_w
        else:
            z = torch.zeros(rows, 2, device=x.device, dtype=x.dtype)
        for flow in reversed(self.flows):
            if not isinstance(flow, Unused):
                z = flow(z, x_mask, g=cond)
        return z[:, 0]
