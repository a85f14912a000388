"""The decoder replayed from CUDA graphs (``graphs.py``) gives each item the audio it gets
without them.

On the CPU: the buckets, and that padding a call up to its bucket (zeros past each item, one-frame
dummy rows past the batch) changes no item's audio, with the whole decoder at random weights
(the property is the code's, as in ``test_generator.py``). On a GPU (skipped without one): a
replay computes what the same padded pass computes eagerly, and the engine sounds the same
with graphs as without.
"""

from __future__ import annotations

import math

import pytest
import torch

from speech.engines.kokoro.decoder import SAMPLES_PER_FRAME, Decoder, per_item
from speech.engines.kokoro.graphs import GraphedDecoder, batch_bucket, frame_bucket, load, padded_inputs

FRAMES = (11, 4, 7)


def test_buckets_round_up_to_powers_of_two_then_eights_and_to_frame_steps() -> None:
    assert [batch_bucket(n) for n in (1, 2, 3, 5, 8, 9, 16, 17, 37, 64)] == [1, 2, 4, 8, 8, 16, 16, 24, 40, 64]
    assert all(n <= batch_bucket(n) < max(2 * n, n + 8) for n in range(1, 200))
    assert [frame_bucket(n, 64) for n in (1, 64, 65, 300)] == [64, 64, 128, 320]


def test_load_puts_each_item_first_zeros_after_it_and_one_frame_dummies_past_the_batch() -> None:
    values = (torch.ones(2, 3, 5), torch.ones(2, 10), torch.ones(2, 10), torch.ones(2, 4), torch.tensor([5, 3]))
    statics = padded_inputs(*values, batch=4, width=8)
    for static in statics[:4]:
        static.fill_(7.0)  # what an earlier call left
    load(statics, values)
    asr, f0, _, style, frames = statics
    assert asr.shape == (4, 3, 8) and f0.shape == (4, 16) and style.shape == (4, 4)
    assert float(asr[:2, :, :5].min()) == 1.0 and float(asr[:, :, 5:].abs().sum()) == 0.0
    assert float(asr[2:].abs().sum()) == 0.0 and float(f0[:, 10:].abs().sum()) == 0.0
    assert frames.tolist() == [5, 3, 1, 1]


@pytest.fixture(scope="module")
def decoder() -> Decoder:
    torch.manual_seed(5)
    model = Decoder().eval()
    with torch.no_grad():
        model.generator.conv_post.weight.mul_(0.05)  # keep exp(log-magnitude) finite under random weights
    return model


def _inputs(frames: tuple[int, ...], device: str = "cpu") -> tuple[torch.Tensor, ...]:
    rng = torch.Generator().manual_seed(3)
    width = max(frames)
    asr = torch.randn(len(frames), 512, width, generator=rng) * 0.3
    f0 = 80 + 200 * torch.rand(len(frames), 2 * width, generator=rng)
    energy = torch.randn(len(frames), 2 * width, generator=rng)
    for row, n in enumerate(frames):  # what the model hands over past an item's end
        asr[row, :, n:] = 0
    style = torch.randn(len(frames), 128, generator=rng) * 0.1
    counts = torch.tensor(frames)
    return tuple(t.to(device) for t in (asr, f0, energy, style, counts))


def _snr(reference: torch.Tensor, other: torch.Tensor) -> float:
    noise = float(((reference - other) ** 2).sum())
    return 10 * math.log10(float((reference**2).sum()) / max(noise, 1e-30))


@pytest.mark.slow
def test_padding_a_call_to_its_bucket_changes_no_item(decoder: Decoder) -> None:
    """The same 60 dB as ``test_generator.py``'s padded batch, over each item and its last 150
    samples: a bucket is one more padded batch."""
    values = _inputs(FRAMES)
    statics = padded_inputs(*values, batch=batch_bucket(len(FRAMES)), width=frame_bucket(max(FRAMES), 16))
    load(statics, values)
    with torch.inference_mode():
        plain = per_item(decoder(*values), FRAMES)
        padded = per_item(decoder(*statics)[: len(FRAMES)], FRAMES)
    for n, a, b in zip(FRAMES, plain, padded, strict=True):
        assert a.shape == b.shape == (SAMPLES_PER_FRAME * n,)
        assert float(a.abs().max()) > 1e-3
        assert _snr(a, b) > 60.0 and _snr(a[-150:], b[-150:]) > 60.0


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a GPU; run on a GPU host")
def test_a_replay_computes_what_the_eager_pass_does(decoder: Decoder) -> None:
    gpu = Decoder().eval().cuda()
    gpu.load_state_dict(decoder.state_dict())
    values = _inputs(FRAMES, "cuda")
    graphed = GraphedDecoder(gpu, frame_step=16)
    # float32 without TF32, as the model runs it (model.py): then only the shape picks kernels.
    with torch.inference_mode(), torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        first = graphed(*values)  # seen: eager
        second = graphed(*values)  # recorded: the warm-up's answer
        third = graphed(*values)  # replayed
        statics = padded_inputs(*values, batch=4, width=16)
        load(statics, values)
        eager = gpu(*statics)[:3]
    assert (graphed.recorded, graphed.replayed) == (1, 1)
    torch.testing.assert_close(third, eager, rtol=0, atol=0)
    torch.testing.assert_close(second, eager, rtol=0, atol=0)
    for a, b in zip(per_item(first, FRAMES), per_item(third, FRAMES), strict=True):
        assert _snr(a, b) > 40.0  # another shape, other kernels: float32 without TF32 (model.py)
