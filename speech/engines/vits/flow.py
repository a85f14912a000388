"""The normalising flow ``flow``, run backwards: prior samples to the decoder's latent frames.

Four mean-only affine coupling layers with channel flips between them. Each layer keeps the
first half of the channels and shifts the second half by what a WaveNet (gated dilated
convolutions with residual and skip outputs) computes from the first half.
Weight norm is already folded into the convolutions by Piper's export. Rows are time-major
frames in a packed ``layers.Layout``; masks keep the gaps at zero.
"""

from __future__ import annotations

import torch
from torch import nn

from speech.engines.vits.config import ModelShape
from speech.engines.vits.layers import TimeConv


class WaveNet(nn.Module):
    def __init__(self, hidden: int, kernel_size: int, n_layers: int, dilation_rate: int = 1) -> None:
        super().__init__()
        self.hidden = hidden
        self.in_layers = nn.ModuleList()
        self.res_skip_layers = nn.ModuleList()
        for i in range(n_layers):
            self.in_layers.append(TimeConv(hidden, 2 * hidden, kernel_size, dilation=dilation_rate**i))
            out = 2 * hidden if i < n_layers - 1 else hidden
            self.res_skip_layers.append(TimeConv(hidden, out, 1))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        output: torch.Tensor | None = None
        last = len(self.in_layers) - 1
        for i, (conv_in, res_skip) in enumerate(zip(self.in_layers, self.res_skip_layers, strict=True)):
            x_in = conv_in(x)
            acts = torch.tanh(x_in[:, : self.hidden]) * torch.sigmoid(x_in[:, self.hidden :])
            res_skip_acts = res_skip(acts)
            skip = res_skip_acts if i == last else res_skip_acts[:, self.hidden :]
            output = skip.clone() if output is None else output.add_(skip)
            if i < last:
                x = (x + res_skip_acts[:, : self.hidden]) * mask
        assert output is not None
        return output * mask


class ResidualCouplingLayer(nn.Module):
    def __init__(self, channels: int, hidden: int, kernel_size: int, n_layers: int) -> None:
        super().__init__()
        self.half_channels = channels // 2
        self.pre = TimeConv(self.half_channels, hidden, 1)
        self.enc = WaveNet(hidden, kernel_size, n_layers)
        self.post = TimeConv(hidden, self.half_channels, 1)  # mean only: no log-scale channels

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x0, x1 = x[:, : self.half_channels], x[:, self.half_channels :]
        h = self.enc(self.pre(x0) * mask, mask)
        mean = self.post(h) * mask
        return torch.cat([x0, (x1 - mean) * mask], dim=1)


class Flip(nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.flip(x, [1])


class ResidualCouplingBlock(nn.Module):
    def __init__(self, shape: ModelShape) -> None:
        super().__init__()
        flows: list[nn.Module] = []
        for _ in range(shape.flow_count):
            flows.append(
                ResidualCouplingLayer(
                    shape.inter_channels, shape.hidden, shape.flow_kernel, shape.flow_layers
                )
            )
            flows.append(Flip())
        self.flows = nn.ModuleList(flows)

    def forward(self, z: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Inverse pass (the only one inference needs): ``z`` [rows, channels], ``mask`` [rows, 1]."""
        for flow in reversed(self.flows):
            z = flow(z, mask)
        return z
