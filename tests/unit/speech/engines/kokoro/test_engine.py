"""KokoroEngine on the real weights: batching, speed, word timings, IPA input, long sentences.

Batched float32 output equals each item's unbatched output: durations (and so word timings)
exactly, samples at 35 dB SNR or better. We measure 42-64 dB; what is left is the harmonic
source's voiced/unvoiced switch (F0 > 10 Hz, in 12.5 ms blocks), which flips where F0 crosses the
threshold when a padded batch changes the curve in its last ulp.
"""

from __future__ import annotations

import pytest

from speech.engines.kokoro import engine as engine_module
from speech.engines.kokoro.phonemes import MAX_TOKENS, VOCAB, token_ids
from speech.types import SynthesisOptions
from tests.support.snr import snr_db

pytestmark = pytest.mark.slow

SENTENCES = ["Hello there, how are you?", "Fine, thanks.", "The weather is lovely this morning, isn't it?"]


def test_a_batch_gives_each_sentence_its_own_audio(kokoro_engine) -> None:  # type: ignore[no-untyped-def]
    batched = kokoro_engine.synthesize(SENTENCES[:2])
    for sentence, chunk in zip(SENTENCES[:2], batched, strict=True):
        alone = kokoro_engine.synthesize([sentence])[0]
        assert len(chunk.samples) == len(alone.samples) > 0
        assert [(w.word, w.start, w.end) for w in chunk.words] == [(w.word, w.start, w.end) for w in alone.words]
        assert snr_db(alone.samples, chunk.samples) > 35.0


def test_a_short_sentence_batched_with_a_long_one_keeps_its_own_audio(kokoro_engine) -> None:  # type: ignore[no-untyped-def]
    """One pass holds both (the fixture's budget is 4096 ids), so "Yes." is padded to thirty
    times its length; nothing of the padding may reach it (the generator-level check of every
    sample, the last ones included, is ``test_generator.py``)."""
    short, long = "Yes.", SENTENCES[2] + " " + SENTENCES[0]
    batched = kokoro_engine.synthesize([long, short])[1]
    alone = kokoro_engine.synthesize([short])[0]
    assert len(batched.samples) == len(alone.samples) > 0
    assert [(w.word, w.start, w.end) for w in batched.words] == [(w.word, w.start, w.end) for w in alone.words]
    assert snr_db(alone.samples, batched.samples) > 35.0


def test_word_timings_are_ordered_and_inside_the_audio(kokoro_engine) -> None:  # type: ignore[no-untyped-def]
    chunk = kokoro_engine.synthesize([SENTENCES[2]])[0]
    words = [w.word for w in chunk.words]
    assert words == ["The", "weather", "is", "lovely", "this", "morning", "isn't", "it"]
    starts = [w.start for w in chunk.words]
    assert starts == sorted(starts)
    assert all(w.start <= w.end <= chunk.duration + 1e-9 for w in chunk.words)
    assert chunk.words[-1].end > 0.5 * chunk.duration
    assert chunk.sample_rate == 24000


def test_length_scale_is_the_inverse_of_kokoros_speed(kokoro_engine) -> None:  # type: ignore[no-untyped-def]
    normal = kokoro_engine.synthesize([SENTENCES[0]])[0].duration
    slow = kokoro_engine.synthesize([SENTENCES[0]], SynthesisOptions(length_scale=2.0))[0].duration
    fast = kokoro_engine.synthesize([SENTENCES[0]], SynthesisOptions(length_scale=0.5))[0].duration
    assert 1.6 * normal < slow < 2.4 * normal
    assert 0.35 * normal < fast < 0.7 * normal


def test_ipa_between_brackets_is_spoken_as_written(kokoro_engine) -> None:  # type: ignore[no-untyped-def]
    ipa = kokoro_engine.synthesize_phonemes(["həlˈoʊ wˈɜːld"])[0]
    assert ipa.duration > 0.4
    assert [w.word for w in ipa.words] == ["həlˈoʊ wˈɜːld"]
    assert set(kokoro_engine.phonemize("Hello world.")) <= set(VOCAB)
    assert kokoro_engine.synthesize_phonemes(["   "])[0].duration == 0.0


def test_empty_sentences_give_empty_chunks_in_place(kokoro_engine) -> None:  # type: ignore[no-untyped-def]
    chunks = kokoro_engine.synthesize(["", "Yes.", "  "])
    assert [len(c.samples) > 0 for c in chunks] == [False, True, False]
    assert chunks[1].text == "Yes."


def test_a_sentence_longer_than_one_utterance_is_spoken_whole(kokoro_engine, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Cut between words into pieces of at most MAX_TOKENS (lowered here so that the test is
    short; the real limit is 510), joined back: every word once, in order, timed in order."""
    sentence = "The grey rabbit hopped, the grey rabbit ran, the grey rabbit slept."
    whole = kokoro_engine.synthesize([sentence])[0]
    monkeypatch.setattr(engine_module, "MAX_TOKENS", 24)
    assert len(token_ids(kokoro_engine.phonemize(sentence))[0]) > 2 * engine_module.MAX_TOKENS
    chunk = kokoro_engine.synthesize([sentence])[0]
    words = [w.word for w in chunk.words]
    assert words == [w.word for w in whole.words]
    assert words.count("rabbit") == 3
    starts = [w.start for w in chunk.words]
    assert starts == sorted(starts) and chunk.words[-1].end <= chunk.duration + 1e-9
    assert 0.8 * whole.duration < chunk.duration < 1.6 * whole.duration  # each piece has its own onset and release
    assert MAX_TOKENS == 510


def test_another_decoder_precision_keeps_the_durations_and_the_sound(kokoro_engine) -> None:  # type: ignore[no-untyped-def]
    """The bfloat16 path for GPUs, exercised on CPU at float64 (bfloat16 convolutions are slow on
    CPUs without native support): the decoder changes precision while the harmonic source and the
    STFTs stay float32, and durations, which the predictor makes, do not move."""
    import copy

    import torch

    model = copy.deepcopy(kokoro_engine.model)
    model.set_decoder_dtype(torch.float64)
    assert model.decoder.generator.m_source.l_linear.weight.dtype == torch.float32
    assert model.decoder.generator.window.dtype == torch.float32
    ids = token_ids(kokoro_engine.phonemize("Yes, thanks."))[0]
    style = kokoro_engine.pack[len(ids) - 1][None]
    with torch.inference_mode():
        wide = model([[0, *ids, 0]], style, torch.tensor([1.0]))
        base = kokoro_engine.model([[0, *ids, 0]], style, torch.tensor([1.0]))
    assert torch.equal(wide.durations[0], base.durations[0])
    assert wide.audio[0].dtype == torch.float32
    assert snr_db(base.audio[0].numpy(), wide.audio[0].numpy()) > 20.0


def test_the_engine_names_the_precision_its_audio_comes_from(kokoro_engine) -> None:  # type: ignore[no-untyped-def]
    """What the chunk cache keys audio by (``scheduler.content_keys``): the resolved dtype."""
    from speech.engines.base import numerics_of

    assert numerics_of(kokoro_engine) == "float32"
    assert engine_module.shared_model("cpu", "float32").dtype == "float32"


def test_the_sound_does_not_hang_on_the_last_bits_of_the_harmonic_source(kokoro_engine) -> None:  # type: ignore[no-untyped-def]
    """The trained voice, its excitation changed by one part in 1e7 (what another CPU family's
    FFT and GEMM kernels do to it): 60 dB. We measure 94 dB; before the source STFT's phase was
    made canonical (``decoder._phase``) it read 23-25 dB, which moved Whisper's scores by up to
    0.16 between hosts and failed the padded-batch test on an Intel Xeon."""
    import torch

    sentences = [SENTENCES[2], "She sells sea shells, softly, by the shore."]
    plain = [chunk.samples for chunk in kokoro_engine.synthesize(sentences)]
    rng = torch.Generator().manual_seed(5)

    def nudge(_module, _inputs, source: torch.Tensor) -> torch.Tensor:  # type: ignore[no-untyped-def]
        return source * (1 + 1e-7 * torch.randn(source.shape, generator=rng))

    handle = kokoro_engine.model.decoder.generator.m_source.register_forward_hook(nudge)
    try:
        nudged = [chunk.samples for chunk in kokoro_engine.synthesize(sentences)]
    finally:
        handle.remove()
    for before, after in zip(plain, nudged, strict=True):
        assert snr_db(before, after) > 60.0
