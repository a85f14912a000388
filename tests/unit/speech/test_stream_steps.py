"""Stream units from SSML and lexicons, and how ``Synthesizer.render`` voices them (with a fake
engine that records what it was asked: unit tests only; the real voices are in tests/e2e)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from speech.stream_steps import StreamStep, steps_for_request
from speech.synthesizer import Controls, Synthesizer
from speech.text.pls import parse_pls
from speech.types import AudioChunk, SynthesisOptions, WordTiming

RATE = 1000


@dataclass
class _Voice:
    key: str
    lang: str = "en"
    speaker: str = ""


@dataclass
class _Engine:
    """One second of 0.5 per text (times the length scale); phonemes recorded."""

    calls: list[tuple[str, str]] = field(default_factory=list)
    sample_rate: int = RATE

    def phonemize(self, text: str) -> str:
        return text

    def _chunk(self, text: str, options: SynthesisOptions | None) -> AudioChunk:
        seconds = (options.length_scale if options else 1.0)
        return AudioChunk(np.full(int(RATE * seconds), 0.5, dtype=np.float32), RATE, text, [WordTiming(text, 0.0, seconds)])

    def synthesize(self, texts: list[str], options: SynthesisOptions | None = None) -> list[AudioChunk]:
        self.calls += [("text", t) for t in texts]
        return [self._chunk(t, options) for t in texts]

    def synthesize_phonemes(self, phonemes: list[str], options: SynthesisOptions | None = None) -> list[AudioChunk]:
        self.calls += [("ipa", p) for p in phonemes]
        return [self._chunk(p, options) for p in phonemes]


def _synth() -> tuple[Synthesizer, dict[str, _Engine]]:
    engines: dict[str, _Engine] = {}

    def load(voice: Any) -> _Engine:
        return engines.setdefault(voice.key, _Engine())

    return Synthesizer(load), engines  # type: ignore[arg-type]


NS = 'xmlns="http://www.w3.org/2001/10/synthesis"'


def test_ssml_units_carry_pauses_marks_rates_levels_languages_and_voices() -> None:
    plan = steps_for_request(
        f'<speak {NS}>Hello.<break time="300ms"/><mark name="m"/><prosody rate="200%" volume="-6dB">Fast.</prosody>'
        f'<lang xml:lang="fr">Bonjour.</lang><voice name="nora">Hi.</voice><phoneme ph="wɪn">Nguyen</phoneme></speak>',
        "en", ssml=True)
    assert plan.units == [
        StreamStep(text="Hello."), StreamStep(pause_ms=300), StreamStep(mark="m"),
        StreamStep(text="Fast.", rate=2.0, gain_db=-6.0), StreamStep(text="Bonjour.", lang="fr"),
        StreamStep(text="Hi.", speaker="nora"), StreamStep(phonemes="wɪn", word="Nguyen"),
    ]
    assert plan.billed_text == "Hello.Fast.Bonjour.Hi.Nguyen"


def test_lexicons_apply_to_plain_text_and_billing_keeps_the_written_text() -> None:
    lexicon = parse_pls('<lexicon version="1.0" alphabet="ipa" xml:lang="en"><lexeme><grapheme>Nguyen</grapheme>'
                        "<phoneme>wɪn</phoneme></lexeme><lexeme><grapheme>Dr.</grapheme><alias>Doctor</alias></lexeme></lexicon>")
    plan = steps_for_request("Ask Dr. Nguyen now.", "en", lexicons=[lexicon])
    assert plan.units == [StreamStep(text="Ask Doctor"), StreamStep(phonemes="wɪn", word="Nguyen"), StreamStep(text="now.")]
    assert plan.billed_text == "Ask Dr. Nguyen now."


def test_without_ssml_or_lexicons_units_are_the_sentences_as_before() -> None:
    assert steps_for_request("One. Two.", "en").units == [StreamStep(text="One."), StreamStep(text="Two.")]


def test_render_a_mark_is_silent_and_named_in_the_timings() -> None:
    synth, _ = _synth()
    chunk = synth.render(_Voice("joe"), StreamStep(mark="here"), Controls())
    assert len(chunk.samples) == 0 and chunk.words == [WordTiming("here", 0.0, 0.0)]


def test_render_rate_and_gain() -> None:
    synth, _ = _synth()
    normal = synth.render(_Voice("joe"), StreamStep(text="x"), Controls())
    fast = synth.render(_Voice("joe"), StreamStep(text="x", rate=2.0, gain_db=-6.0), Controls(time_scale=1.0))
    assert len(fast.samples) == len(normal.samples) // 2
    assert float(fast.samples.max()) == pytest.approx(0.5 * 10 ** (-6 / 20), rel=1e-5)


def test_render_phonemes_show_the_written_word_and_a_switched_voice_is_used() -> None:
    synth, engines = _synth()
    nora = _Voice("nora")
    chunk = synth.render(_Voice("joe"), StreamStep(phonemes="wɪn", word="Nguyen", voice=nora), Controls())
    assert [w.word for w in chunk.words] == ["Nguyen"]
    assert engines["nora"].calls == [("ipa", "wɪn")] and "joe" not in engines


def test_render_another_language_speaks_that_languages_phonemes() -> None:
    synth, engines = _synth()
    chunk = synth.render(_Voice("joe"), StreamStep(text="Bonjour", lang="fr"), Controls())
    ((kind, ipa),) = engines["joe"].calls
    assert kind == "ipa" and "ʒ" in ipa  # eSpeak NG's French, not English, reading
    assert [w.word for w in chunk.words] == ["Bonjour"]
