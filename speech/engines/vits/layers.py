"""Building blocks shared by the VITS modules: time-major convolutions over packed sequences.

Every module works on ``[rows, channels]`` tensors ("time-major"): the items of a batch are
laid end to end along the rows with zero gaps between them (``Layout``). A convolution is then
one matrix product per kernel tap on shifted row windows of a zero-padded copy of its input
(BLAS on CPU, cuBLAS on GPU):

- no per-shape set-up: oneDNN's convolutions create a primitive for every new input length,
  which costs as much as the work itself when every sentence has a new length;
- no padding waste: a batch costs what its items cost, plus a few gap rows each;
- exact batching: a gap is re-zeroed before each convolution and is at least as wide as the
  convolution's reach, so each item sees exactly the zeros it would see alone.

Parameters keep the names and shapes of ``torch.nn.Conv1d`` (``weight``, ``bias``), so Piper's
weights load by name; the per-tap matrices are derived from them on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F


@dataclass(frozen=True)
class Layout:
    """Where each item sits in a packed ``[rows, channels]`` tensor."""

    rows: int
    starts: tuple[int, ...]
    lengths: tuple[int, ...]
    mask: torch.Tensor  # [rows, 1], 1.0 on item rows, 0.0 on gaps
    gap_rows: torch.Tensor | None  # indices of the gap rows (None when there are none)

    @classmethod
    def build(
        cls,
        starts: Sequence[int],
        lengths: Sequence[int],
        rows: int,
        device: torch.device,
        dtype: torch.dtype,
    ) -> Layout:
        inside = torch.zeros(rows, dtype=torch.bool)
        for start, length in zip(starts, lengths, strict=True):
            inside[start : start + length] = True
        gaps = torch.nonzero(~inside).squeeze(1)
        return cls(
            rows=rows,
            starts=tuple(starts),
            lengths=tuple(lengths),
            mask=inside.to(device=device, dtype=dtype).unsqueeze(1),
            gap_rows=gaps.to(device) if gaps.numel() else None,
        )

    @classmethod
    def strided(cls, lengths: Sequence[int], stride: int, device: torch.device, dtype: torch.dtype) -> Layout:
        """Item ``b`` at row ``b * stride`` (a padded batch seen as one sequence)."""
        return cls.build(
            [b * stride for b in range(len(lengths))], lengths, stride * len(lengths), device, dtype
        )

    @classmethod
    def packed(cls, lengths: Sequence[int], gap: int, device: torch.device, dtype: torch.dtype) -> Layout:
        """Items end to end with ``gap`` zero rows before, between and after them."""
        starts, row = [], gap
        for length in lengths:
            starts.append(row)
            row += length + gap
        return cls.build(starts, lengths, row, device, dtype)

    def window(self, begin: int, end: int) -> Layout:
        """Rows ``[begin, end)`` as a layout of their own (items cut at the edges stay, clipped)."""
        starts, lengths = [], []
        for start, length in zip(self.starts, self.lengths, strict=True):
            lo, hi = max(start, begin), min(start + length, end)
            if lo < hi:
                starts.append(lo - begin)
                lengths.append(hi - lo)
        return Layout.build(starts, lengths, end - begin, self.mask.device, self.mask.dtype)

    def scaled(self, factor: int) -> Layout:
        """The same items at ``factor`` rows per row (after an upsampling)."""
        mask = self.mask.repeat_interleave(factor, dim=0)
        gaps = None
        if self.gap_rows is not None:
            offsets = torch.arange(factor, device=self.gap_rows.device)
            gaps = (self.gap_rows.unsqueeze(1) * factor + offsets).reshape(-1)
        return Layout(
            rows=self.rows * factor,
            starts=tuple(s * factor for s in self.starts),
            lengths=tuple(n * factor for n in self.lengths),
            mask=mask,
            gap_rows=gaps,
        )

    def zero_gaps_(self, x: torch.Tensor) -> torch.Tensor:
        if self.gap_rows is not None:
            x.index_fill_(0, self.gap_rows, 0.0)
        return x


class _Derived:
    """A tensor derived from a parameter, rebuilt when the parameter changes (load, ``.to``)."""

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._value: torch.Tensor | None = None

    def get(self, source: torch.Tensor, build: object) -> torch.Tensor:
        key = (source.data_ptr(), source._version, source.dtype, source.device)
        if key != self._key or self._value is None:
            with torch.no_grad():
                self._value = build(source)  # type: ignore[operator]
            self._key = key
        return self._value


class TimeConv(nn.Module):
    """``Conv1d`` ("same" padding) on time-major rows; groups must be 1 or the channel count."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        *,
        dilation: int = 1,
        groups: int = 1,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if groups not in (1, in_channels) or (groups > 1 and in_channels != out_channels):
            raise ValueError("only dense or depthwise convolutions are supported")
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.groups = groups
        self.padding = (kernel_size * dilation - dilation) // 2
        self.weight = nn.Parameter(torch.zeros(out_channels, in_channels // groups, kernel_size))
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias else None
        self._taps = _Derived()
        self._columns = _Derived()

    def taps(self) -> torch.Tensor:
        """``[kernel, in, out]`` for dense, ``[kernel, channels]`` for depthwise weights."""
        if self.groups > 1:
            return self._taps.get(self.weight, lambda w: w[:, 0, :].t().contiguous())
        return self._taps.get(self.weight, lambda w: w.permute(2, 1, 0).contiguous())

    def forward(
        self,
        x: torch.Tensor,
        *,
        layout: Layout | None = None,
        slope: float | None = None,
        residual: torch.Tensor | None = None,
        padded: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``x`` [rows, in] -> [rows, out]; input is leaky-ReLU'd first when ``slope`` is given, its
        gap rows zeroed when ``layout`` is given, and ``residual`` is added to the output.
        ``padded`` may pass a ready ``pad_input`` buffer (shared by convolutions of one input)."""
        rows = x.shape[0]
        pad = self.padding
        if padded is None:
            padded, reach = pad_input(x, pad, layout=layout, slope=slope), pad
        else:
            reach = (padded.shape[0] - rows) // 2
        offset = reach - pad
        taps = self.taps()
        d = self.dilation

        if self.groups > 1:
            out = padded[offset : offset + rows] * taps[0]
            for k in range(1, self.kernel_size):
                out.addcmul_(padded[offset + k * d : offset + k * d + rows], taps[k])
            if self.bias is not None:
                out.add_(self.bias)
            if residual is not None:
                out.add_(residual)
            return out

        cout = self.weight.shape[0]
        if cout * self.kernel_size <= 16:
            # Few outputs (conv_post): one product with every tap as a column, then add the
            # diagonals; K products with one output column each would each re-read the input.
            span = padded[offset : offset + rows + (self.kernel_size - 1) * d]
            columns = self._columns.get(self.weight, lambda w: w.permute(1, 2, 0).reshape(w.shape[1], -1))
            products = span @ columns
            out = products[:rows, :cout].clone()
            for k in range(1, self.kernel_size):
                out.add_(products[k * d : k * d + rows, k * cout : (k + 1) * cout])
        elif residual is not None:
            # Start from residual + bias (one pass) and accumulate every tap onto it.
            out = residual.clone() if self.bias is None else torch.add(residual, self.bias)
            for k in range(self.kernel_size):
                start = offset + k * d
                out.addmm_(padded[start : start + rows], taps[k])
            return out
        else:
            out = torch.mm(padded[offset : offset + rows], taps[0])
            for k in range(1, self.kernel_size):
                start = offset + k * d
                out.addmm_(padded[start : start + rows], taps[k])
        if residual is not None:
            out.add_(residual)
        if self.bias is not None:
            out.add_(self.bias)
        return out


def pad_input(
    x: torch.Tensor, pad: int, *, layout: Layout | None = None, slope: float | None = None
) -> torch.Tensor:
    """``[pad + rows + pad, channels]``: zeros around (leaky-ReLU of) ``x`` with its gaps zeroed."""
    rows, channels = x.shape
    if pad == 0 and slope is None and layout is None:
        return x
    buffer = x.new_empty(rows + 2 * pad, channels)
    if pad:
        buffer[:pad].zero_()
        buffer[pad + rows :].zero_()
    core = buffer[pad : pad + rows]
    if slope is None:
        core.copy_(x)
    else:
        torch._C._nn.leaky_relu(x, slope, out=core)
    if layout is not None:
        layout.zero_gaps_(core)
    return buffer


class TimeConvTranspose(nn.Module):
    """``ConvTranspose1d`` on time-major rows, for kernels a multiple of the stride.

    Each input row's product with the weights gives ``kernel`` output rows; neighbouring rows'
    contributions overlap and are added (``kernel / stride`` shifted adds).
    """

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int
    ) -> None:
        super().__init__()
        if kernel_size % stride:
            raise ValueError("kernel must be a multiple of the stride")
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.out_channels = out_channels
        self.weight = nn.Parameter(torch.zeros(in_channels, out_channels, kernel_size))
        self.bias = nn.Parameter(torch.zeros(out_channels))
        self._flat = _Derived()

    def forward(
        self, x: torch.Tensor, *, layout: Layout | None = None, slope: float | None = None
    ) -> torch.Tensor:
        rows = x.shape[0]
        source = pad_input(x, 0, layout=layout, slope=slope)
        flat = self._flat.get(self.weight, lambda w: w.permute(0, 2, 1).reshape(w.shape[0], -1).contiguous())
        s, overlap, cout = self.stride, self.kernel_size // self.stride, self.out_channels
        products = (source @ flat).view(rows, overlap, s, cout)
        full = products.new_empty(rows + overlap - 1, s, cout)
        if overlap == 2:  # the usual case (kernel = 2 * stride): one pass, no copy
            full[0].copy_(products[0, 0])
            torch.add(products[1:, 0], products[:-1, 1], out=full[1:rows])
            full[rows].copy_(products[rows - 1, 1])
        else:
            full[:rows].copy_(products[:, 0])
            full[rows:].zero_()
            for j in range(1, overlap):
                full[j : j + rows].add_(products[:, j])
        length = (rows - 1) * s + self.kernel_size - 2 * self.padding
        out = full.view(-1, cout)[self.padding : self.padding + length]
        return out.add_(self.bias)


class ChannelLayerNorm(nn.Module):
    """Layer norm over the channels of time-major rows (VITS names: gamma, beta)."""

    def __init__(self, channels: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.channels = channels
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(channels))
        self.beta = nn.Parameter(torch.zeros(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, (self.channels,), self.gamma, self.beta, self.eps)
