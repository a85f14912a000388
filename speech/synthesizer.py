"""Text in, audio chunks out: the one path every transport and the batch engine share.

Owns the engines (one per voice, loaded on first use and kept), the text front-end steps, and
the mapping of a rate and a length factor onto the engine's length scale. Callers resolve the
voice through the catalog first, so an unknown voice is an error, never a silent fallback.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

import numpy as np

from speech.engines.base import Engine, gathers_calls, speaks_phonemes
from speech.errors import PhonemesNotSupported
from speech.text import normalize, split_sentences
from speech.text.kana import to_kana
from speech.types import AudioChunk, SynthesisOptions, WordTiming

if TYPE_CHECKING:  # both import this module
    from speech.stream_steps import StreamStep
    from speech.voices.entries import Voice

EngineLoader = Callable[["Voice"], Engine]


@dataclass(frozen=True, slots=True)
class Controls:
    """How fast to speak, already validated and clamped by the caller. What a vendor's controls
    mean for each of its models is the caller's rule (``facade.vendor_controls``), not the core's."""

    time_scale: float = 1.0  # a length factor: above 1.0 slower
    speed: float | None = None  # a rate: above 1.0 faster; None: the voice's own
    route: str | None = None
    """Opaque here: which backend a synthesizer that has several sends the request to (the
    facade's remote synthesizer keys its model services by it); the core never reads it."""

    def length_scale(self, base: float = 1.0) -> float:
        scale = base * self.time_scale
        if self.speed:
            scale /= self.speed
        return scale


# Lone surrogates (JSON allows "\ud800") and C0/C1 controls other than tab and newline cannot be
# spoken and break the C libraries below us (eSpeak NG takes UTF-8).
_UNSPEAKABLE = re.compile("[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    return _UNSPEAKABLE.sub(" ", text)


def prepare(text: str, lang: str, *, normalize_text: bool = True) -> list[str]:
    """Sentences ready for an engine: segmented on the raw text (so "Mr." and "3.5" are seen as
    written), then normalised one by one; sentences with nothing to say are dropped.

    Without normalisation, Japanese kanji are still read as kana: that is how the voice reads the
    script at all (eSpeak NG spells kanji out as "Chinese letter"), not a rewriting of the text."""
    text = clean(text)
    sentences = []
    for span in split_sentences(text, lang):
        sentence = span.text.strip()
        if normalize_text:
            sentence = normalize(sentence, lang).strip()
        elif lang == "ja":
            sentence = to_kana(sentence).strip()
        if sentence:
            sentences.append(sentence)
    return sentences


def _written(chunk: AudioChunk, word: str) -> AudioChunk:
    """Phonemes spoken for a written word (SSML ``phoneme``, a lexicon, a language switch): the
    timings show the word as written, not the IPA."""
    if not word or not chunk.words:
        return chunk
    start, end = chunk.words[0].start, chunk.words[-1].end
    return replace(chunk, words=[WordTiming(word, start, end)])


def _foreign_ipa(text: str, lang: str) -> str:
    """Text of another language than the voice's (SSML ``lang``), as eSpeak NG's IPA for that
    language: the voice then says the words with their own language's sounds."""
    from speech.text.languages import espeak_voice
    from speech.text.phonemize import default_phonemizer

    return default_phonemizer().phonemize(text, espeak_voice(lang))


class BatchSynthesizer(Protocol):
    """What a book's synthesis step asks of a synthesizer (``scheduler.synthesis``): a voice's
    engine (its sample rate) and a batch of sentences at once. ``Synthesizer`` is one; a test
    may hand in its own."""

    def engine(self, voice: Voice) -> Engine: ...

    def synthesize(
        self, voice: Voice, sentences: Sequence[str], controls: Controls | None = None
    ) -> list[AudioChunk]: ...

    def render(self, voice: Voice, unit: StreamStep, controls: Controls) -> AudioChunk: ...


class Synthesizer:
    """Engines by voice, loaded lazily and shared by every request of the process."""

    def __init__(self, loader: EngineLoader) -> None:
        self._loader = loader
        self._engines: dict[str, Engine] = {}
        self._lock = threading.Lock()
        # One inference at a time per engine: on CPU a second concurrent forward pass only
        # fights the first for the same cores; the model service batches across requests instead.
        self._run_locks: dict[str, threading.Lock] = {}

    def engine(self, voice: Voice) -> Engine:
        key = voice.key
        with self._lock:
            engine = self._engines.get(key)
            if engine is None:
                engine = self._loader(voice)
                self._engines[key] = engine
                self._run_locks[key] = threading.Lock()
            return engine

    def _run_lock(self, voice: Voice, engine: Engine) -> contextlib.AbstractContextManager[object]:
        """The voice's one-at-a-time lock; none for an engine that gathers concurrent calls into
        shared forward passes itself (``speech.batched_engine``): holding callers back would
        leave it nothing to gather."""
        if gathers_calls(engine):
            return contextlib.nullcontext()
        return self._run_locks[voice.key]

    def synthesize(
        self, voice: Voice, sentences: Sequence[str], controls: Controls | None = None
    ) -> list[AudioChunk]:
        """All sentences in one call, batched by the engine (the batch path)."""
        engine = self.engine(voice)
        options = SynthesisOptions(length_scale=(controls or Controls()).length_scale())
        with self._run_lock(voice, engine):
            return engine.synthesize(list(sentences), options)

    def stream(
        self, voice: Voice, sentences: Sequence[str], controls: Controls | None = None
    ) -> Iterator[AudioChunk]:
        """Sentence by sentence, so the first audio leaves before the last sentence is computed."""
        for sentence in sentences:
            if sentence.strip():
                yield from self.synthesize(voice, [sentence], controls)

    def render(self, voice: Voice, unit: StreamStep, controls: Controls) -> AudioChunk:
        """One stream unit (see ``speech.stream_steps``): a sentence, a pause, raw phonemes or a mark,
        in the unit's own voice when SSML switched it, at its rate and level."""
        voice = unit.voice or voice
        engine = self.engine(voice)
        if unit.pause_ms or unit.mark:
            silence = np.zeros(int(engine.sample_rate * unit.pause_ms / 1000), dtype=np.float32)
            marks = [WordTiming(unit.mark, 0.0, 0.0)] if unit.mark else []
            return AudioChunk(silence, engine.sample_rate, "", marks)
        if unit.speed is not None:
            controls = replace(controls, speed=unit.speed)
        if unit.rate:
            controls = replace(controls, time_scale=controls.time_scale / unit.rate)
        if unit.phonemes:
            chunk = self.synthesize_phonemes(voice, [unit.phonemes], controls)[0]
            chunk = _written(chunk, unit.word)
        elif unit.lang and unit.lang != voice.lang:
            chunk = _written(self.synthesize_phonemes(voice, [_foreign_ipa(unit.text, unit.lang)], controls)[0], unit.text)
        else:
            chunk = self.synthesize(voice, [unit.text], controls)[0]
        if unit.gain_db:
            chunk = replace(chunk, samples=(chunk.samples * np.float32(10 ** (unit.gain_db / 20))).clip(-1.0, 1.0))
        return chunk

    def synthesize_phonemes(
        self, voice: Voice, phoneme_strings: Sequence[str], controls: Controls | None = None
    ) -> list[AudioChunk]:
        """IPA spoken as written (``{...}`` markup), for engines that take phonemes."""
        engine = self.engine(voice)
        speaker = speaks_phonemes(engine)
        if speaker is None:
            raise PhonemesNotSupported(voice.speaker)
        options = SynthesisOptions(length_scale=(controls or Controls()).length_scale())
        with self._run_lock(voice, engine):
            return speaker.synthesize_phonemes(list(phoneme_strings), options)

    def speaks_phonemes(self, voice: Voice) -> bool:
        """Whether ``voice``'s engine takes IPA directly (``{...}`` markup); asked before a
        stream starts, so a voice that cannot gets a 400 instead of a stream cut short."""
        return speaks_phonemes(self.engine(voice)) is not None

    def phonemize(self, voice: Voice, text: str) -> str:
        return self.engine(voice).phonemize(text)
