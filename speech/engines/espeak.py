"""``EspeakEngine``: eSpeak NG's formant synthesizer, the fallback voice for every API language.

It is real, intelligible speech in all ten languages (en es fr pt de ja ar hi it nl), though
robotic next to a neural voice; it exists so a language with no neural voice installed still
answers. We call the library that ``espeakng_loader`` ships through ctypes (no subprocess, no
system package), synchronously, collecting the 16-bit samples its callback hands over.

eSpeak NG keeps global state, so the engine loads a private copy of the library (as
``phonemizer`` does for its own) and serialises calls with a lock.

Word timings are approximate: each word starts at eSpeak NG's own word event (or, where the
events cannot be matched to the text, at a position spread evenly by characters) and ends
where the next word starts, so pauses count toward the word before them.
Japanese needs kana input (eSpeak NG reads no kanji) and unvowelled Arabic loses its vowels.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import numpy as np

from speech.errors import EngineError, LanguageNotSupported
from speech.text.phonemize import EspeakPhonemizer, default_phonemizer
from speech.text.words import WORD_TRIM
from speech.types import AudioChunk, SynthesisOptions, WordTiming

VOICE_BY_LANGUAGE: Final = {
    "en": "en-us",
    "es": "es",
    "fr": "fr-fr",
    "pt": "pt",
    "de": "de",
    "ja": "ja",
    "ar": "ar",
    "hi": "hi",
    "it": "it",
    "nl": "nl",
}
DEFAULT_RATE_WPM: Final = 175

_AUDIO_OUTPUT_SYNCHRONOUS = 2
_CHARS_UTF8 = 1
_POS_CHARACTER = 1
_RATE = 1
_EVENT_LIST_TERMINATED = 0
_EVENT_WORD = 1
_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)


class _EventId(ctypes.Union):
    _fields_ = [("number", ctypes.c_int), ("name", ctypes.c_char_p), ("string", ctypes.c_char * 8)]


class _Event(ctypes.Structure):
    """``espeak_EVENT`` from ``speak_lib.h``."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),
        ("sample", ctypes.c_int),
        ("user_data", ctypes.c_void_p),
        ("id", _EventId),
    ]


class _Voice(ctypes.Structure):
    """``espeak_VOICE``: selects a voice by language when no voice carries the name."""

    _fields_ = [
        ("name", ctypes.c_char_p),
        ("languages", ctypes.c_char_p),
        ("identifier", ctypes.c_char_p),
        ("gender", ctypes.c_ubyte),
        ("age", ctypes.c_ubyte),
        ("variant", ctypes.c_ubyte),
        ("xx1", ctypes.c_ubyte),
        ("score", ctypes.c_int),
        ("spare", ctypes.c_void_p),
    ]


class _Library:
    """One private, initialised copy of libespeak-ng (created on first use)."""

    _instance: _Library | None = None
    _instance_lock = threading.Lock()

    def __init__(self) -> None:
        import espeakng_loader

        source = Path(espeakng_loader.get_library_path())
        self._tempdir = tempfile.TemporaryDirectory(prefix="lector-espeak-")
        copy = Path(self._tempdir.name) / source.name
        shutil.copy(source, copy)
        self.lib = ctypes.CDLL(str(copy))
        self.lib.espeak_Initialize.restype = ctypes.c_int
        self.lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        self.lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        self.lib.espeak_SetVoiceByProperties.argtypes = [ctypes.POINTER(_Voice)]
        self.lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        self.lib.espeak_Synth.argtypes = [
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.c_uint,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.POINTER(ctypes.c_uint),
            ctypes.c_void_p,
        ]
        data = espeakng_loader.get_data_path().encode()
        self.sample_rate = int(self.lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, data, 0))
        if self.sample_rate <= 0:
            raise EngineError("eSpeak NG failed to initialise")
        self.lock = threading.Lock()
        self._samples: list[np.ndarray] = []
        self._words: list[tuple[int, int, int]] = []  # (text_position, length, audio ms)
        self._callback = _CALLBACK(self._on_audio)  # kept alive as long as the library
        self.lib.espeak_SetSynthCallback(self._callback)

    @classmethod
    def get(cls) -> _Library:
        with cls._instance_lock:
            if cls._instance is None:
                try:
                    cls._instance = cls()
                except (ImportError, OSError, AttributeError) as exc:
                    raise EngineError(f"eSpeak NG is unavailable: {exc}") from exc
            return cls._instance

    def _on_audio(self, wav: ctypes._Pointer[ctypes.c_short], count: int, events: int | None) -> int:
        if count > 0 and wav:
            self._samples.append(np.ctypeslib.as_array(wav, shape=(count,)).copy())
        if events:
            event = ctypes.cast(events, ctypes.POINTER(_Event))
            i = 0
            while event[i].type != _EVENT_LIST_TERMINATED:
                if event[i].type == _EVENT_WORD:
                    self._words.append((event[i].text_position, event[i].length, event[i].audio_position))
                i += 1
        return 0

    def synthesize(self, text: str, voice: str, rate: int) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
        """int16 samples and word events for ``text``; the caller holds ``lock``."""
        if self.lib.espeak_SetVoiceByName(voice.encode()) != 0:
            spec = _Voice(languages=voice.encode())
            if self.lib.espeak_SetVoiceByProperties(ctypes.byref(spec)) != 0:
                raise EngineError(f"eSpeak NG has no voice {voice!r}")
        self.lib.espeak_SetParameter(_RATE, rate, 0)
        self._samples, self._words = [], []
        data = text.encode("utf-8")
        status = self.lib.espeak_Synth(data, len(data) + 1, 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
        if status != 0:
            raise EngineError(f"eSpeak NG synthesis failed (status {status})")
        samples = np.concatenate(self._samples) if self._samples else np.zeros(0, dtype=np.int16)
        return samples, self._words


class EspeakEngine:
    """eSpeak NG speech for one eSpeak voice (``en-us``, ``fr-fr`` ...). Build with ``for_language``."""

    def __init__(self, voice: str, *, phonemizer: EspeakPhonemizer | None = None) -> None:
        self.voice = voice
        self._phonemizer = phonemizer or default_phonemizer()
        self._library: _Library | None = None

    @classmethod
    def for_language(cls, lang: str, **kwargs: object) -> EspeakEngine:
        voice = VOICE_BY_LANGUAGE.get(lang.split("-")[0].lower())
        if voice is None:
            raise LanguageNotSupported(lang, "espeak")
        return cls(voice, **kwargs)  # type: ignore[arg-type]

    def _lib(self) -> _Library:
        if self._library is None:
            self._library = _Library.get()
        return self._library

    @property
    def sample_rate(self) -> int:
        return self._lib().sample_rate

    def phonemize(self, text: str) -> str:
        return self._phonemizer.phonemize(text, self.voice)

    def synthesize(
        self, sentences: Sequence[str], options: SynthesisOptions | None = None
    ) -> list[AudioChunk]:
        library = self._lib()
        length_scale = (options.length_scale if options else None) or 1.0
        rate = int(np.clip(round(DEFAULT_RATE_WPM / length_scale), 80, 450))
        chunks = []
        for text in sentences:
            if not text.strip():
                chunks.append(AudioChunk(np.zeros(0, dtype=np.float32), library.sample_rate, text=text))
                continue
            with library.lock:
                pcm, events = library.synthesize(text, self.voice, rate)
            samples = pcm.astype(np.float32) / 32768.0
            duration = len(samples) / library.sample_rate
            words = _word_timings(text, events, duration)
            chunks.append(AudioChunk(samples, library.sample_rate, text=text, words=words))
        return chunks


_WORD = re.compile(r"\S+")


def _word_timings(text: str, events: list[tuple[int, int, int]], duration: float) -> list[WordTiming]:
    """Starts from eSpeak NG's word events where they fall on our words, else spread by characters."""
    tokens = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]
    tokens = [(s, e, w.strip(WORD_TRIM)) for s, e, w in tokens]
    tokens = [t for t in tokens if t[2]]
    if not tokens or duration <= 0:
        return []
    # eSpeak NG counts text positions in characters from 1.
    event_starts = sorted((pos - 1, ms / 1000.0) for pos, _, ms in events)
    starts: list[float | None] = []
    for begin, end, _ in tokens:
        inside = [t for pos, t in event_starts if begin <= pos < end]
        starts.append(min(inside) if inside else None)
    total_chars = max(len(text), 1)
    previous = 0.0
    resolved = []
    for (begin, _, _), start in zip(tokens, starts, strict=True):
        value = start if start is not None else duration * begin / total_chars
        value = min(max(value, previous), duration)  # keep order even where events disagree
        resolved.append(value)
        previous = value
    ends = resolved[1:] + [duration]
    return [
        WordTiming(word=word, start=start, end=end)
        for (_, _, word), start, end in zip(tokens, resolved, ends, strict=True)
    ]
