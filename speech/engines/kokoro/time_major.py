"""The generator's residual blocks over time-major activations, for oneDNN on a CPU with AMX.

The residual blocks' convolutions are most of Kokoro's CPU time (128 and 256 channels at 4,800
and 800 steps a second of audio). In bfloat16 on a CPU with AMX, oneDNN runs them in a
time-major ("channels last") layout: handed channel-first ``[B, C, T]`` activations it reorders
each input and clones each output back, and that copy was a quarter of a convolution's time. On
a 2-vCPU Intel Xeon (family 6 model 207), one 128-channel convolution over 13,801 steps took
15.7 ms channel-first and 7.3 ms time-major (kernel 11), 9.0 and 2.3 ms (kernel 3), with the
same bits out. So the blocks' activations are held time-major, as 4-D channels-last tensors
``[B, C, 1, T]`` (one item's memory is ``T x C``), from a stage's entry to its exit: one
transposing copy in and one out per upsampling stage, where the stage's 24 block convolutions
each copied before. The elementwise chains (``kernels.py``) read either layout: an operand's shape
decides, and every per-channel factor gains a trailing axis.

oneDNN's bfloat16 products accumulate in float32 in either layout, so the audio is the
channel-first path's up to the order of the instance norms' sums (``test_generator.py``:
113 dB in float32; ``test_kernels.py``: within a bfloat16 step).
Where AMX is absent the spectral form (``spectral_conv.py``) is faster (with oneDNN capped below
AMX on that Xeon, ``ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16``: RTF 0.383 spectral, 0.487 time-major,
0.552 channel-first), and float32 keeps it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from speech.engines.kokoro.conv_swap import swap_convolutions


def to_time_major(x: torch.Tensor) -> torch.Tensor:
    """``[B, C, T]`` -> ``[B, C, 1, T]`` in the channels-last layout (one copy)."""
    return x.unsqueeze(2).contiguous(memory_format=torch.channels_last)


def to_channel_first(x: torch.Tensor) -> torch.Tensor:
    """``[B, C, 1, T]`` (any layout) -> contiguous ``[B, C, T]`` (one copy from time-major)."""
    return x.squeeze(2).contiguous()


def mask_time_major(mask: torch.Tensor | None) -> torch.Tensor | None:
    """A ``[B, 1, T]`` padding mask for ``[B, C, 1, T]`` activations."""
    return None if mask is None else mask.unsqueeze(2)


class TimeMajorConv1d(nn.Module):
    """An ``nn.Conv1d`` over ``[B, C, 1, T]`` channels-last input, as a 2-D convolution of height
    one: the output keeps the input's layout, so the next block reads it without a reorder."""

    weight: torch.Tensor
    bias: torch.Tensor | None

    def __init__(self, conv: nn.Conv1d) -> None:
        super().__init__()
        if conv.groups != 1 or conv.padding_mode != "zeros" or not isinstance(conv.padding, tuple):
            raise ValueError("TimeMajorConv1d takes a plain zero-padded convolution")
        self.padding = (0, conv.padding[0])
        self.dilation = (1, conv.dilation[0])
        self.stride = (1, conv.stride[0])
        self.weight = nn.Parameter(
            conv.weight.detach().unsqueeze(2).contiguous(memory_format=torch.channels_last), requires_grad=False
        )
        self.bias = None if conv.bias is None else nn.Parameter(conv.bias.detach(), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation)


def replace_block_convolutions(module: nn.Module) -> int:
    """Every ``nn.Conv1d`` inside ``module`` swapped for its ``TimeMajorConv1d``; returns how many."""
    return swap_convolutions(module, TimeMajorConv1d)
