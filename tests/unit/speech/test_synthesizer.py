"""``speech.synthesizer``: the one path from text to audio that every transport shares.

The engine here is a recording double of the ``Engine`` protocol (our own contract, not a third
party): these tests are about what the synthesizer does around an engine (one engine per voice,
one inference at a time unless the engine gathers calls, how each kind of stream step is made),
which the real voices' tests cannot isolate."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pytest

from speech.errors import PhonemesNotSupported
from speech.stream_steps import StreamStep
from speech.synthesizer import Controls, Synthesizer, clean, prepare
from speech.types import AudioChunk, SynthesisOptions, WordTiming
from speech.voices import Catalog, Voice

RATE = 8000


@dataclass
class RecordingEngine:
    """Speaks each sentence as 10 ms a character of a constant tone, and notes every call."""

    sample_rate: int = RATE
    calls: list[tuple[str, list[str], float | None]] = field(default_factory=list)
    busy: int = 0
    most_busy: int = 0
    hold_s: float = 0.0

    def phonemize(self, text: str) -> str:
        return f"/{text}/"

    def _speak(self, kind: str, items: Sequence[str], options: SynthesisOptions | None) -> list[AudioChunk]:
        self.busy += 1
        self.most_busy = max(self.most_busy, self.busy)
        try:
            time.sleep(self.hold_s)
            scale = options.length_scale if options and options.length_scale else 1.0
            self.calls.append((kind, list(items), options.length_scale if options else None))
            chunks = []
            for item in items:
                n = int(len(item) * RATE * 0.01 * scale)
                words = [WordTiming(w, 0.0, n / RATE) for w in item.split()]
                chunks.append(AudioChunk(np.full(n, 0.5, dtype=np.float32), RATE, item, words))
            return chunks
        finally:
            self.busy -= 1

    def synthesize(self, sentences: Sequence[str], options: SynthesisOptions | None = None) -> list[AudioChunk]:
        return self._speak("text", sentences, options)


class PhonemeSpeakingEngine(RecordingEngine):
    def synthesize_phonemes(self, phonemes: Sequence[str], options: SynthesisOptions | None = None) -> list[AudioChunk]:
        return self._speak("phonemes", phonemes, options)


class GatheringDouble(RecordingEngine):
    batches_calls = True


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.load()


@pytest.fixture
def joe(catalog: Catalog) -> Voice:
    return catalog.voice("coda", "joe")


def test_each_voice_gets_one_engine_loaded_once(catalog: Catalog) -> None:
    loaded: list[str] = []

    def loader(voice: Voice) -> RecordingEngine:
        loaded.append(voice.speaker)
        return RecordingEngine()

    synth = Synthesizer(loader)
    joe, ivy = catalog.voice("coda", "joe"), catalog.voice("coda", "ivy")
    assert synth.engine(joe) is synth.engine(joe)
    synth.engine(ivy)
    assert loaded == ["joe", "ivy"]


def _concurrency(engine: RecordingEngine, voice: Voice) -> int:
    engine.hold_s = 0.05
    synth = Synthesizer(lambda _voice: engine)
    threads = [threading.Thread(target=synth.synthesize, args=(voice, ["Hello there."])) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return engine.most_busy


def test_one_inference_at_a_time_per_voice(joe: Voice) -> None:
    assert _concurrency(RecordingEngine(), joe) == 1


def test_an_engine_that_gathers_calls_is_not_held_back(joe: Voice) -> None:
    assert _concurrency(GatheringDouble(), joe) > 1


def test_the_controls_reach_the_engine_as_a_length_scale(joe: Voice) -> None:
    engine = RecordingEngine()
    Synthesizer(lambda _voice: engine).synthesize(joe, ["Slowly."], Controls(time_scale=2.0))
    assert engine.calls == [("text", ["Slowly."], 2.0)]


def test_stream_speaks_sentence_by_sentence_and_skips_blank_ones(joe: Voice) -> None:
    engine = RecordingEngine()
    chunks = list(Synthesizer(lambda _voice: engine).stream(joe, ["One.", "  ", "Two."]))
    assert [c.text for c in chunks] == ["One.", "Two."]
    assert [call[1] for call in engine.calls] == [["One."], ["Two."]]  # one call each: first audio early


def test_a_pause_step_is_silence_of_its_length_and_calls_no_engine(joe: Voice) -> None:
    engine = RecordingEngine()
    chunk = Synthesizer(lambda _voice: engine).render(joe, StreamStep(pause_ms=250), Controls())
    assert chunk.samples.shape == (RATE // 4,) and not chunk.samples.any()
    assert engine.calls == []


def test_a_mark_step_is_its_name_at_zero_length(joe: Voice) -> None:
    chunk = Synthesizer(lambda _voice: RecordingEngine()).render(joe, StreamStep(mark="chapter-2"), Controls())
    assert chunk.samples.size == 0
    assert [(w.word, w.start, w.end) for w in chunk.words] == [("chapter-2", 0.0, 0.0)]


def test_a_rate_step_shortens_the_audio_and_a_gain_step_scales_it(joe: Voice) -> None:
    synth = Synthesizer(lambda _voice: RecordingEngine())
    plain = synth.render(joe, StreamStep(text="Twelve chars"), Controls())
    fast = synth.render(joe, StreamStep(text="Twelve chars", rate=2.0), Controls())
    quiet = synth.render(joe, StreamStep(text="Twelve chars", gain_db=-6.0), Controls())
    assert fast.samples.size == pytest.approx(plain.samples.size / 2, abs=1)
    assert float(quiet.samples.max()) == pytest.approx(0.5 * 10 ** (-6 / 20), rel=1e-4)


def test_phonemes_show_the_written_word_in_the_timings(joe: Voice) -> None:
    engine = PhonemeSpeakingEngine()
    chunk = Synthesizer(lambda _voice: engine).render(joe, StreamStep(phonemes="təmɑːtəʊ", word="tomato"), Controls())
    assert engine.calls[0][:2] == ("phonemes", ["təmɑːtəʊ"])
    assert [w.word for w in chunk.words] == ["tomato"]


def test_a_voice_without_phonemes_says_so_before_anything_is_spoken(joe: Voice) -> None:
    synth = Synthesizer(lambda _voice: RecordingEngine())
    assert synth.speaks_phonemes(joe) is False
    with pytest.raises(PhonemesNotSupported):
        synth.render(joe, StreamStep(phonemes="həloʊ"), Controls())


def test_a_step_in_another_voice_is_spoken_by_that_voice(catalog: Catalog, joe: Voice) -> None:
    engines: dict[str, RecordingEngine] = {}
    synth = Synthesizer(lambda voice: engines.setdefault(voice.speaker, RecordingEngine()))
    ivy = catalog.voice("coda", "ivy")
    synth.render(joe, StreamStep(text="Hello.", voice=ivy), Controls())
    assert list(engines) == ["ivy"]


def test_prepare_splits_on_the_raw_text_then_normalises_each_sentence() -> None:
    assert prepare("Dr. Smith paid $5. Then he left.", "en") == ["Doctor Smith paid five dollars.", "Then he left."]


def test_clean_removes_what_no_engine_can_speak() -> None:
    assert clean("a\ud800b\x00c\td\n") == "a b c\td\n"
