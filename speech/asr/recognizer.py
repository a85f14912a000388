"""Whisper through faster-whisper (CTranslate2, int8 on CPU): what a rendered chunk sounds like.

Why two models: Whisper tiny.en is English-only and small (about 0.1 of the audio's duration on
two cores), and it hears English better than the multilingual tiny; every other language takes
Whisper base, the smallest multilingual model that transcribes all ten API languages well enough
to tell a dropped sentence from a clean one (``tests/support/asr_multilingual.py``'s checks).
English chunks that tiny.en fails are heard again by base, with a beam of five, as a second
opinion (``speech.asr.listening``); base is already loaded for the other languages.
The language is forced, never detected: the job says what it is, and detection on a short
chunk guesses wrong. Forcing it does not stop Whisper base from writing what it understood as
an English translation, or Hindi in Latin letters: such a transcript
(``speech.asr.language.in_language``) is decoded again with a neutral sentence in the language
as the prompt, and that reading counts if it is in the language. The check would otherwise fail
a chunk the voice said well, the recogniser's error, not the voice's.

Models load on first use, once per process and model, and calls are serialised per recognizer:
CTranslate2 already spreads one call over ``cpu_threads`` cores. They all run on one thread of
the recognizer's own whose CPU priority is ``niceness`` below the process (Linux applies
``setpriority`` to one thread; the threads CTranslate2 starts from it inherit it): on a host
shared with a synth worker the check takes idle cycles, not the engine's, as assembly's pool does
(``books.parallel.NICE``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final, Protocol

import numpy as np

from speech.asr import models
from speech.asr.language import PROMPTS, in_language
from speech.audio.resample import resample
from speech.errors import RecognizerError

ASR_RATE: Final = 16000
NICENESS: Final = 5
REFEREE_BEAM: Final = 5


def _lower_priority(step: int) -> None:
    if step and hasattr(os, "setpriority") and hasattr(threading, "get_native_id"):
        tid = threading.get_native_id()
        try:
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + step)
        except OSError:
            pass  # a process limit: the check runs at the process's priority


class WhisperRecognizer:
    """``transcribe(samples, rate, lang)``: the words heard, as Whisper writes them."""

    def __init__(
        self, *, cache_root: Path, cpu_threads: int = 2, beam_size: int = 1, niceness: int = NICENESS, referee: bool = True
    ) -> None:
        self._cache_root = cache_root
        self._referee = referee
        self._cpu_threads = cpu_threads
        self._beam_size = beam_size
        self._models: dict[str, Any] = {}
        self._niceness = niceness
        self._thread: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    @staticmethod
    def model_name(lang: str) -> str:
        return "tiny.en" if lang == "en" else "base"

    def referee_name(self, lang: str) -> str | None:
        """The second opinion's model (``speech.asr.listening``): base for English; none for the
        other languages, whose first model is already the largest shipped."""
        return "base" if lang == "en" and self._referee else None

    def _model(self, name: str) -> Any:
        if name not in self._models:
            try:
                from faster_whisper import WhisperModel
            except ImportError as exc:
                raise RecognizerError("faster-whisper is not installed (pip install 'lector[qa]')") from exc
            path = models.english_model_dir() if name == "tiny.en" else models.multilingual_model_dir(self._cache_root)
            self._models[name] = WhisperModel(str(path), device="cpu", compute_type="int8", cpu_threads=self._cpu_threads)
        return self._models[name]

    def transcribe(self, samples: np.ndarray, sample_rate: int, lang: str) -> str:
        """What Whisper heard, with the language forced to ``lang``."""
        return self._pool().submit(self._transcribe, samples, sample_rate, lang, self.model_name(lang), self._beam_size).result()

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._thread is None:
                self._thread = ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix="asr", initializer=_lower_priority, initargs=(self._niceness,)
                )
            return self._thread

    def second_opinion(self, samples: np.ndarray, sample_rate: int, lang: str) -> str | None:
        """The referee model's reading, with a beam of five (it hears a few chunks an hour)."""
        name = self.referee_name(lang)
        if name is None:
            return None
        return self._pool().submit(self._transcribe, samples, sample_rate, lang, name, REFEREE_BEAM).result()

    def _transcribe(self, samples: np.ndarray, sample_rate: int, lang: str, name: str, beam_size: int) -> str:
        audio = samples.astype(np.float32)
        if sample_rate != ASR_RATE:
            audio = resample(audio, sample_rate, ASR_RATE)
        return hear(self._model(name), audio, lang, beam_size)


class Segment(Protocol):
    text: str


class Transcriber(Protocol):
    """What :func:`hear` asks of a model: faster-whisper's ``WhisperModel.transcribe``."""

    def transcribe(self, audio: np.ndarray, **options: object) -> tuple[Iterable[Segment], object]: ...


def hear(model: Transcriber, audio: np.ndarray, lang: str, beam_size: int) -> str:
    """What a faster-whisper ``model`` heard in 16 kHz ``audio``, with the language forced to
    ``lang``, decoded again with :data:`~speech.asr.language.PROMPTS` where the first reading is
    not in the language (the module docstring); otherwise the first reading counts, so a voice
    the recogniser cannot place keeps its score. A reading stuck in a loop (:func:`loops`) is
    decoded again with a repeated run of :data:`NO_REPEAT_TOKENS` tokens forbidden, which ends
    the loop, and that reading counts where it does not loop."""
    prompt = None
    heard = _decode(model, audio, lang, beam_size, prompt)
    if not in_language(heard, lang):
        again = _decode(model, audio, lang, beam_size, PROMPTS[lang])
        if in_language(again, lang):
            prompt, heard = PROMPTS[lang], again
    if loops(heard):
        again = _decode(model, audio, lang, beam_size, prompt, no_repeat=NO_REPEAT_TOKENS)
        if not loops(again) and in_language(again, lang) >= in_language(heard, lang):
            return again
    return heard


#: Whisper's known failure on a clear voice: the decoder repeats a word to the end of the window.
#: Whisper base wrote a Hindi sentence's last words, "हवा ठंडी थी", as "ہوا تھا تھا تھا تھا" in two
#: voices, and heard the same two seconds alone right ("Hawa Thandithi"). Three of a word in a
#: row is the sign (a text's "no, no, no" is as rare as a decoder's loop of three is common).
LOOP_WORDS: Final = 3
NO_REPEAT_TOKENS: Final = 3  # faster-whisper's no_repeat_ngram_size on the second decoding


def loops(heard: str) -> bool:
    """Whether a reading repeats one word :data:`LOOP_WORDS` times or more in a row."""
    words = [w.strip(".,!?;:।۔،\"'()").casefold() for w in heard.split()]
    run = 1
    for before, word in zip(words, words[1:], strict=False):
        run = run + 1 if word and word == before else 1
        if run >= LOOP_WORDS:
            return True
    return False


def _decode(
    model: Transcriber, audio: np.ndarray, lang: str, beam_size: int, prompt: str | None, *, no_repeat: int = 0
) -> str:
    try:
        segments, _ = model.transcribe(
            audio,
            language=lang,
            task="transcribe",
            beam_size=beam_size,
            vad_filter=False,
            condition_on_previous_text=False,
            without_timestamps=True,
            initial_prompt=prompt,
            no_repeat_ngram_size=no_repeat,
        )
        return " ".join(segment.text.strip() for segment in segments).strip()
    except (RuntimeError, ValueError) as exc:
        raise RecognizerError(f"recognition failed: {exc}") from exc
