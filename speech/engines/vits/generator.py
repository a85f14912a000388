"""The HiFi-GAN generator ``dec``: latent frames to waveform (resblock type 2).

Three transposed-convolution upsamplings (x8, x8, x4: 256 samples per frame), each followed
by three residual blocks of different kernel sizes and dilations whose outputs are averaged.

Rows are time-major in a packed ``layers.Layout`` scaled with each upsampling. Every
convolution's input has its gap rows zeroed: a plain convolution pads with zeros, so this
gives every item exactly the samples it gets alone (without it, bias terms in the gaps would
leak into the items' edges through the generator's wide receptive field).
"""

from __future__ import annotations

from typing import cast

import torch
from torch import nn

from speech.engines.vits.config import ModelShape
from speech.engines.vits.layers import Layout, TimeConv, TimeConvTranspose, pad_input

LRELU_SLOPE = 0.1


class ResBlock2(nn.Module):
    def __init__(self, channels: int, kernel_size: int, dilations: tuple[int, ...]) -> None:
        super().__init__()
        self.convs = nn.ModuleList(TimeConv(channels, channels, kernel_size, dilation=d) for d in dilations)

    def reach(self) -> int:
        return max(cast(TimeConv, conv).padding for conv in self.convs)

    def forward(
        self, x: torch.Tensor, layout: Layout, first_input: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``first_input``: a ready ``pad_input(leaky(x))`` shared with the sibling blocks."""
        for i, conv in enumerate(self.convs):
            if i == 0 and first_input is not None:
                x = conv(x, padded=first_input, residual=x)
            else:
                x = conv(x, layout=layout, slope=LRELU_SLOPE, residual=x)
        return x


class Generator(nn.Module):
    def __init__(self, shape: ModelShape) -> None:
        super().__init__()
        self.upsample_rates = shape.upsample_rates
        self.num_kernels = len(shape.resblock_kernels)
        channels = shape.upsample_initial
        self.conv_pre = TimeConv(shape.inter_channels, channels, 7)
        self.ups = nn.ModuleList()
        self.resblocks = nn.ModuleList()
        for rate, kernel in zip(shape.upsample_rates, shape.upsample_kernels, strict=True):
            self.ups.append(TimeConvTranspose(channels, channels // 2, kernel, rate, (kernel - rate) // 2))
            channels //= 2
            for k, dilations in zip(shape.resblock_kernels, shape.resblock_dilations, strict=True):
                self.resblocks.append(ResBlock2(channels, k, dilations))
        self.conv_post = TimeConv(channels, 1, 7, bias=False)

    def forward(self, z: torch.Tensor, layout: Layout) -> torch.Tensor:
        """``z`` [rows, channels] frames (zero in the gaps) -> [rows * hop] samples."""
        x = self.conv_pre(z, layout=layout)
        for i, (up, rate) in enumerate(zip(self.ups, self.upsample_rates, strict=True)):
            x = up(x, layout=layout, slope=LRELU_SLOPE)
            layout = layout.scaled(rate)
            blocks: list[ResBlock2] = list(self.resblocks[i * self.num_kernels : (i + 1) * self.num_kernels])  # type: ignore[arg-type]
            # The blocks' first convolutions read the same leaky-ReLU'd input: build it once.
            shared = pad_input(x, max(b.reach() for b in blocks), layout=layout, slope=LRELU_SLOPE)
            total = blocks[0](x, layout, shared)
            for block in blocks[1:]:
                total.add_(block(x, layout, shared))
            x = total.div_(self.num_kernels)
        x = self.conv_post(x, layout=layout, slope=0.01)  # default leaky slope here, as trained
        return torch.tanh_(x.squeeze(1))
