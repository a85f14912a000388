"""The decoder's fused chains: compiled (the GPU path) equals eager, the padding stays zero, and
the model's warm-up compiles every variant that traffic meets.

They run here on the CPU through Inductor's C++ backend, which fuses the same graph that Triton
fuses on a GPU; a wrong rewrite of a chain (a dropped mask, a swapped scale) fails either way.
"""

from __future__ import annotations

import pytest
import torch

from speech.engines.kokoro import kernels
from speech.engines.kokoro.model import KokoroModel

pytestmark = pytest.mark.slow


def _inputs(batch: int = 3, channels: int = 8, steps: int = 37) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(7)
    lengths = torch.tensor([steps, steps - 9, 5][:batch])
    mask = (torch.arange(steps)[None, :] < lengths[:, None]).unsqueeze(1).float()
    return {
        "x": torch.randn(batch, channels, steps, generator=generator) * 3 + 1,
        "gamma": torch.randn(batch, channels, 1, generator=generator),
        "beta": torch.randn(batch, channels, 1, generator=generator),
        "alpha": torch.rand(1, channels, 1, generator=generator) + 0.5,
        "mask": mask,
    }


def test_compiled_chains_equal_the_eager_ones() -> None:
    """With a mask, as on a GPU, where ``time_mask`` always builds one (compiling costs CPU seconds)."""
    a = _inputs()
    mask = a["mask"]
    fused = kernels.compiled()
    cases = [
        (kernels.EAGER.adain_snake, fused.adain_snake, (a["x"], a["gamma"], a["beta"], a["alpha"], mask, 1e-5)),
        (kernels.EAGER.adain_leaky, fused.adain_leaky, (a["x"], a["gamma"], a["beta"], mask, 1e-5, 0.2)),
    ]
    for eager, compiled, args in cases:
        expected = eager(*args)
        got = compiled(*args)
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    expected = kernels.EAGER.residual(a["x"].clone(), a["beta"], mask, 0.5)
    torch.testing.assert_close(fused.residual(a["x"].clone(), a["beta"], mask, 0.5), expected)


def test_the_chains_keep_the_padding_at_zero_and_use_valid_steps_only() -> None:
    a = _inputs()
    out = kernels.EAGER.adain_snake(a["x"], a["gamma"], a["beta"], a["alpha"], a["mask"], 1e-5)
    assert torch.all(out[1, :, 28:] == 0) and torch.all(out[2, :, 5:] == 0)
    # the second item, cut to its own length and run alone, gets the same values
    alone = kernels.EAGER.adain_snake(
        a["x"][1:2, :, :28], a["gamma"][1:2], a["beta"][1:2], a["alpha"], None, 1e-5
    )
    torch.testing.assert_close(out[1:2, :, :28], alone, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("with_mask", [False, True])
def test_bfloat16_statistics_keep_a_small_variance_under_a_large_mean(with_mask: bool) -> None:
    """An activation of mean 1 and spread 0.05: in bfloat16 (8 bits) the mean square is 1.0 or
    1.0078, the squared mean 1.0, and their difference, the variance, came out 0 or three times
    too large; rsqrt(0 + eps) then blew a lone item's decoder up. The statistics must come out
    as float64 reads the same bfloat16 numbers."""
    generator = torch.Generator().manual_seed(3)
    x = (1 + 0.05 * torch.randn(2, 16, 4000, generator=generator)).bfloat16()
    mask = torch.ones(2, 1, 4000) if with_mask else None
    mean, var = kernels.time_stats(x, mask)
    wide = x.double()
    assert mean.dtype == var.dtype == torch.float32
    torch.testing.assert_close(mean.double(), wide.mean(dim=-1, keepdim=True), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(var.double(), wide.var(dim=-1, keepdim=True, unbiased=False), rtol=0.02, atol=1e-6)


def test_an_unpadded_bfloat16_adain_on_a_cpu_rounds_once() -> None:
    """The CPU's bfloat16 AdaIN (one ``batch_norm``) keeps statistics and affine in float32 and
    rounds only its output: every value is within half a bfloat16 step of the float64 result on
    the same bfloat16 input. The former route (the affine in bfloat16 after the statistics)
    rounded twice and missed by up to two steps; a large mean under a small spread, as in the
    decoder, is where a bfloat16 affine loses."""
    generator = torch.Generator().manual_seed(5)
    x = (4 + 0.5 * torch.randn(2, 32, 3000, generator=generator)).bfloat16()
    gamma = torch.randn(2, 32, 1, generator=generator) * 0.3
    beta = torch.randn(2, 32, 1, generator=generator) * 0.3
    got = kernels.adain(x, gamma, beta, None, 1e-5)
    wide = x.double()
    mean, var = wide.mean(dim=-1, keepdim=True), wide.var(dim=-1, keepdim=True, unbiased=False)
    exact = (1 + gamma.double()) * (wide - mean) / torch.sqrt(var + 1e-5) + beta.double()
    assert got.dtype == torch.bfloat16
    step = torch.finfo(torch.bfloat16).eps * exact.abs().clamp(min=2.0**-8)  # one step at each value's exponent
    assert torch.all((got.double() - exact).abs() <= 0.5 * step + 1e-4)


def test_the_bfloat16_adain_with_a_mask_equals_it_without_over_the_valid_steps() -> None:
    """A padded batch takes ``time_stats``; an item's valid steps must read as the unpadded
    route reads the item alone (the two routes differ by rounding only)."""
    generator = torch.Generator().manual_seed(6)
    x = (1 + torch.randn(1, 16, 900, generator=generator)).bfloat16()
    gamma, beta = torch.randn(1, 16, 1, generator=generator), torch.randn(1, 16, 1, generator=generator)
    padded = torch.cat([x, torch.zeros(1, 16, 100, dtype=torch.bfloat16)], dim=-1)
    mask = (torch.arange(1000) < 900)[None, None].float()
    alone = kernels.adain(x, gamma, beta, None, 1e-5)
    batched = kernels.adain(padded, gamma, beta, mask, 1e-5)[..., :900]
    torch.testing.assert_close(batched.float(), alone.float(), rtol=0.02, atol=0.02)


@pytest.mark.parametrize("padded", [False, True], ids=["unpadded", "padded"])
def test_a_time_major_adain_is_the_channel_first_one(padded: bool) -> None:
    """Activations held time-major (``time_major.py``), a batch of two: each item normalised over
    its own steps, the result kept time-major, and every value within one bfloat16 step of the
    channel-first route's (the sums run in another order). One batch norm over both items, or
    the statistics over the wrong axis, misses by whole units."""
    from speech.engines.kokoro.time_major import mask_time_major, to_channel_first, to_time_major

    generator = torch.Generator().manual_seed(8)
    x = (torch.randn(2, 24, 700, generator=generator) * torch.tensor([1.0, 4.0])[:, None, None] + 2).bfloat16()
    gamma, beta = torch.randn(2, 24, 1, generator=generator), torch.randn(2, 24, 1, generator=generator)
    mask = (torch.arange(700)[None, :] < torch.tensor([700, 450])[:, None]).unsqueeze(1).float() if padded else None
    if mask is not None:
        x = x * mask.bfloat16()
    reference = kernels.adain(x, gamma, beta, mask, 1e-5)
    ours = kernels.adain(to_time_major(x), gamma.unsqueeze(-1), beta.unsqueeze(-1), mask_time_major(mask), 1e-5)
    assert ours.shape == (2, 24, 1, 700) and ours.is_contiguous(memory_format=torch.channels_last)
    step = torch.finfo(torch.bfloat16).eps * reference.float().abs().clamp(min=2.0**-8)
    assert torch.all((to_channel_first(ours).float() - reference.float()).abs() <= step + 1e-4)


def test_after_the_warm_up_no_call_compiles_again() -> None:
    """A lone item, padded batches of 3 and 5 and an unpadded batch of 4 after
    ``warm_compiled_kernels``: dynamo traces nothing new. On dynamo's eager backend (its guards
    decide what recompiles, on any backend), with random weights and one frame a phoneme (the
    duration head's bias far negative) so the passes are short."""
    from torch._dynamo.utils import counters

    torch.manual_seed(3)
    model = KokoroModel().eval()
    with torch.no_grad():
        model.predictor.duration_proj.linear_layer.weight.zero_()
        model.predictor.duration_proj.linear_layer.bias.fill_(-20.0)
    model.compile_kernels(kernels.compile_chains("eager"))
    model.warm_compiled_kernels()
    warmed = counters["stats"]["unique_graphs"]
    assert warmed > 0  # the chains were traced: the count below would otherwise prove nothing
    ids = [0, *range(20, 60), 0]
    with torch.inference_mode():
        model([ids[:9] + [0]], torch.randn(1, 256), torch.ones(1))
        model([ids, ids[:9] + [0], ids[:30] + [0]], torch.randn(3, 256), torch.ones(3))
        model([ids[:7] + [0]] * 4, torch.randn(4, 256), torch.ones(4))
        model([ids[: 5 + k] + [0] for k in range(5)], torch.randn(5, 256), torch.full((5,), 1.5))
    assert counters["stats"]["unique_graphs"] == warmed
