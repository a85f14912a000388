"""Whisper through faster-whisper (CTranslate2, int8 on CPU): what a rendered chunk sounds like.

Why two models: Whisper tiny.en is English-only and small (about 0.1 of the audio's duration on
two cores), and it hears English better than the multilingual tiny; every other language takes
Whisper base, the smallest multilingual model that transcribes all ten API languages well enough
to tell a dropped sentence from a clean one (``tests/support/asr_multilingual.py``'s checks).
The language is forced, never detected: the job says what it is, and detection on a short
chunk guesses wrong.

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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

import numpy as np

from speech.asr import models
from speech.audio.resample import resample
from speech.errors import RecognizerError

ASR_RATE: Final = 16000
NICENESS: Final = 5


def _lower_priority(step: int) -> None:
    if step and hasattr(os, "setpriority") and hasattr(threading, "get_native_id"):
        tid = threading.get_native_id()
        try:
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + step)
        except OSError:
            pass  # a process limit: the check runs at the process's priority


class WhisperRecognizer:
    """``transcribe(samples, rate, lang)``: the words heard, as Whisper writes them."""

    def __init__(self, *, cache_root: Path, cpu_threads: int = 2, beam_size: int = 1, niceness: int = NICENESS) -> None:
        self._cache_root = cache_root
        self._cpu_threads = cpu_threads
        self._beam_size = beam_size
        self._models: dict[str, Any] = {}
        self._niceness = niceness
        self._thread: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    @staticmethod
    def model_name(lang: str) -> str:
        return "tiny.en" if lang == "en" else "base"

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
        with self._lock:
            if self._thread is None:
                self._thread = ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix="asr", initializer=_lower_priority, initargs=(self._niceness,)
                )
            pool = self._thread
        return pool.submit(self._transcribe, samples, sample_rate, lang).result()

    def _transcribe(self, samples: np.ndarray, sample_rate: int, lang: str) -> str:
        audio = samples.astype(np.float32)
        if sample_rate != ASR_RATE:
            audio = resample(audio, sample_rate, ASR_RATE)
        model = self._model(self.model_name(lang))
        try:
            segments, _ = model.transcribe(
                audio,
                language=lang,
                task="transcribe",
                beam_size=self._beam_size,
                vad_filter=False,
                condition_on_previous_text=False,
                without_timestamps=True,
            )
            return " ".join(segment.text.strip() for segment in segments).strip()
        except (RuntimeError, ValueError) as exc:
            raise RecognizerError(f"recognition failed: {exc}") from exc
