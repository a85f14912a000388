"""The iSTFTNet generator runs a padded batch in one pass: each item's audio is its audio alone.

The harmonic source, its STFT and the inverse STFT run on the whole batch at once, and each of
them has a place where a shorter item's padding could reach its last samples: the phase
interpolation past the last curve step, the source STFT's reflection at the item's end, and the
inverse STFT's overlap-add and window normalisation over frames past the item's end. A short
item batched with a much longer one must therefore equal itself alone in every sample, its
last ones included. Random weights (seeded) and random inputs: the property is the code's, not
the trained model's, and the curves here come straight in, so no voiced/unvoiced decision can
flip on a last-ulp difference (the end-to-end tolerance in ``test_engine.py`` allows for that).

Equal here is not enough: on an Intel Xeon (AVX-512, AMX) the batch's source came out of other
FFT and GEMM kernels a few ulps away from the item's alone, and the source STFT's phase turned
those ulps into another sound (30 dB at the item's end). So the generator must also give an
item the same sound when its source differs in the last bits, whatever kernels a CPU picks.
"""

from __future__ import annotations

import math

import pytest
import torch

from speech.engines.kokoro.decoder import N_FFT, SAMPLES_PER_FRAME, Generator, _phase, per_item

pytestmark = pytest.mark.slow

FRAMES = (3, 17, 9)  # decoder frames per item: the short one first, padded to 17


def _generator(time_major: bool) -> Generator:
    torch.manual_seed(11)
    model = Generator().eval()
    with torch.no_grad():
        model.conv_post.weight.mul_(0.05)  # keep exp(log-magnitude) finite under random weights
    if time_major:
        model.use_time_major_blocks()
    return model


@pytest.fixture(scope="module", params=[False, True], ids=["channel-first", "time-major"])
def generator(request: pytest.FixtureRequest) -> Generator:
    """Both layouts of the residual blocks' activations (``time_major.py``) keep every property."""
    return _generator(request.param)


def _item(frames: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Decoder features ``[512, 2F]``, a timbre style ``[128]`` and a voiced/unvoiced F0 ``[2F]``."""
    rng = torch.Generator().manual_seed(seed)
    x = torch.randn(512, 2 * frames, generator=rng) * 0.3
    style = torch.randn(128, generator=rng) * 0.1
    f0 = 80 + 200 * torch.rand(2 * frames, generator=rng)
    f0[frames // 2 : frames] = 0.0  # an unvoiced stretch
    return x, style, f0


def _run(generator: Generator, items: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]], frames: list[int]):  # type: ignore[no-untyped-def]
    width = 2 * max(frames)
    x = torch.zeros(len(items), 512, width)  # the decoder hands over zero padding
    f0 = torch.full((len(items), width), 250.0)  # voiced padding: must not be heard either
    for row, (features, _, curve) in enumerate(items):
        x[row, :, : features.shape[-1]] = features
        f0[row, : curve.shape[-1]] = curve
    style = torch.stack([s for _, s, _ in items])
    with torch.inference_mode():
        return per_item(generator(x, style, f0, torch.tensor(frames)), frames)


def _snr(reference: torch.Tensor, other: torch.Tensor) -> float:
    noise = float(((reference - other) ** 2).sum())
    return 10 * math.log10(float((reference**2).sum()) / max(noise, 1e-30))


def test_each_item_of_a_padded_batch_sounds_as_it_does_alone(generator: Generator) -> None:
    """60 dB over the whole item and over its last 150 samples (a quarter frame). We measure
    113-118 dB under every kernel set we can force here (``ATEN_CPU_CAPABILITY`` default, avx2,
    avx512; ``ONEDNN_MAX_CPU_ISA`` AVX2, SSE41) (convolutions over a batch of another size round differently); a source that
    differed in its last bits measured 68 dB, as the phase of near-silent STFT bins amplifies
    such differences. Each leak this guards against, put back on purpose, fell far below: the
    source STFT reflecting at the batch's end and not the item's (11-12 dB on the tail, 24-29
    overall), the inverse STFT summing and normalising over the padding's frames (33 dB on the
    tail, 46-51 overall), the source hearing the padding's F0 (-3 dB on the tail)."""
    items = [_item(n, seed) for seed, n in enumerate(FRAMES)]
    batched = _run(generator, items, list(FRAMES))
    for item, n, audio in zip(items, FRAMES, batched, strict=True):
        alone = _run(generator, [item], [n])[0]
        assert alone.shape == audio.shape == (SAMPLES_PER_FRAME * n,)
        assert torch.isfinite(alone).all() and float(alone.abs().max()) > 1e-3
        assert _snr(alone, audio) > 60.0
        assert _snr(alone[-150:], audio[-150:]) > 60.0


def test_the_batched_source_equals_each_item_alone(generator: Generator) -> None:
    """Batched excitation is each item's excitation alone over the item's own samples (to the
    bit on this machine; another BLAS may round a taller matrix product otherwise)."""
    f0 = torch.stack([_item(17, 0)[2], torch.cat([_item(4, 1)[2], torch.full((26,), 250.0)])])
    steps = torch.tensor([34, 8])
    with torch.inference_mode():
        batched = generator.m_source(f0, steps)
        short = generator.m_source(f0[1, :8])
        long = generator.m_source(f0[0])
    assert batched.shape == (2, 34 * 300) and short.shape == (8 * 300,)
    torch.testing.assert_close(batched[0], long, rtol=0, atol=1e-6)  # the same bits here
    torch.testing.assert_close(batched[1, : 8 * 300], short, rtol=0, atol=1e-6)


def test_the_batched_inverse_stft_of_one_item_is_torchs(generator: Generator) -> None:
    """The inverse STFT written out for batches (each item normalised over its own frames) is
    ``torch.istft`` for one item: the CPU's one-item passes sound as they did before."""
    rng = torch.Generator().manual_seed(3)
    x = torch.randn(2, 22, 241, generator=rng)
    frames = torch.tensor([241, 121])
    with torch.inference_mode():
        batched = generator._istft(x, frames)
    for row, n in enumerate(frames.tolist()):
        spec = torch.polar(torch.exp(x[row, :11, :n]), torch.sin(x[row, 11:, :n]))
        expected = torch.istft(spec, 20, 5, 20, window=generator.window, center=True)
        torch.testing.assert_close(batched[row, : expected.shape[0]], expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("seed", "frames"), list(enumerate(FRAMES)))
def test_an_item_sounds_the_same_when_its_source_differs_in_the_last_bits(
    generator: Generator, seed: int, frames: int
) -> None:
    """What another CPU's kernels do to the excitation (one part in 1e7, about one float32 ulp,
    at every sample) must not be heard: 50 dB over the item and over its last 150 samples. We
    measure 66-71 dB. Before the source phase was made canonical (``decoder._phase``) this read
    4-8 dB: the phase of bins holding only rounding, and of bin 1 of every constant stretch (on
    the negative real axis, pi or -pi by the sign of a rounded zero), followed the last bits."""
    item = _item(frames, seed)
    alone = _run(generator, [item], [frames])[0]
    rng = torch.Generator().manual_seed(5)

    def nudge(_module, _inputs, source: torch.Tensor) -> torch.Tensor:  # type: ignore[no-untyped-def]
        return source * (1 + 1e-7 * torch.randn(source.shape, generator=rng))

    handle = generator.m_source.register_forward_hook(nudge)
    try:
        nudged = _run(generator, [item], [frames])[0]
    finally:
        handle.remove()
    assert _snr(alone, nudged) > 50.0
    assert _snr(alone[-150:], nudged[-150:]) > 50.0


def test_the_source_phase_does_not_follow_rounding() -> None:
    """A constant stretch of the source: bin 1 on the negative real axis reads pi whichever sign
    its rounded imaginary part has, and bins holding rounding alone read (about) zero phase,
    whatever angle the rounding has. A real bin keeps its angle."""
    bins = N_FFT // 2 + 1
    angles = torch.linspace(-3.0, 3.0, bins)
    spec = torch.polar(torch.full((2, bins, 1), 1e-7), angles[None, :, None].expand(2, -1, -1)).clone()
    spec[:, 0] = 3.0  # DC of a positive constant
    spec[0, 1] = complex(-1.5, 1e-8)
    spec[1, 1] = complex(-1.5, -1e-8)
    spec[:, 4] = torch.polar(torch.tensor(0.5), torch.tensor(2.0))  # a harmonic
    phase = _phase(spec, spec.abs())
    torch.testing.assert_close(phase[0], phase[1], rtol=0, atol=0)
    assert float(phase[0, 1, 0]) == pytest.approx(math.pi)
    assert float(phase[0, 0, 0]) == 0.0
    assert float(phase[0, 4, 0]) == pytest.approx(2.0, abs=1e-6)
    tiny = [b for b in range(2, bins) if b != 4]
    assert float(phase[:, tiny].abs().max()) < 1e-5


def test_time_major_blocks_compute_what_channel_first_ones_do() -> None:
    """The same weights in either layout give the same audio up to float32 rounding (the
    convolutions and the instance norms sum in another order): 80 dB. We measure 113-114 dB; one
    of the thirty convolutions given the wrong dilation reads 27."""
    channel_first, time_major = _generator(False), _generator(True)
    items = [_item(n, seed) for seed, n in enumerate(FRAMES)]
    for ours, reference in zip(
        _run(time_major, items, list(FRAMES)), _run(channel_first, items, list(FRAMES)), strict=True
    ):
        assert _snr(reference, ours) > 80.0
