"""eSpeak NG phonemization, the front end every Piper-format voice was trained on.

Piper voices expect eSpeak NG IPA with stress marks and with punctuation kept (a comma or a
full stop is a "phoneme" that shapes the prosody), decomposed into Unicode code points (NFD).
We drive eSpeak NG through ``phonemizer``, pointed at the library and data that
``espeakng_loader`` ships, so no Debian package is needed.

Why a class with a lock and lazy set-up: pointing ``phonemizer`` at the library is a process-wide
setting and building a backend loads eSpeak NG, so it happens in the first call, never at
import; eSpeak NG keeps global state, so one call runs at a time.

Word-level phonemes (for word timings) are each word phonemized on its own. In running speech
eSpeak NG merges short words ("I am" -> ``aɪɐm``) and expands others ("42" -> two words), so
the per-word strings are not slices of the sentence string; the engine aligns them.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections import OrderedDict
from typing import Any

from speech.errors import PhonemizerError
from speech.text.words import split_words

_log = logging.getLogger("lector.phonemizer")


class _OnceForMismatch(logging.Filter):
    """phonemizer compares word counts before and after eSpeak NG and warns on nearly every
    sentence: eSpeak NG joins function words to their neighbours ("of the" -> one word) and
    splits numbers and contractions, by design. The phonemes are right; the count is not a
    fault. Said once per process, at INFO, with why; every other warning passes unchanged."""

    def __init__(self) -> None:
        super().__init__()
        self._said = False

    def filter(self, record: logging.LogRecord) -> bool:
        if "words count mismatch" not in record.getMessage():
            return True
        if self._said:
            return False
        self._said = True
        record.levelno, record.levelname = logging.INFO, "INFO"
        record.msg, record.args = (
            "eSpeak NG joins and splits some words (\"of the\", numbers), so phonemizer's word counts "
            "differ from the text's; expected, and not reported again"
        ), ()
        return True


_log.addFilter(_OnceForMismatch())

_WORD_CACHE_SIZE = 20_000
# eSpeak NG's language switches, "(en)" or "(en-us)", should phonemizer leave one: a language
# code in brackets and nothing else. Never any bracketed text: punctuation is kept, so the
# text's own "(an invitation, moreover, ...)" comes back as IPA in brackets, and an earlier
# pattern that took everything between brackets silently dropped every parenthesis of a book
# from the speech of every voice (found by the QA check on a novel, ``bench/qa_book.py``).
_LANGUAGE_FLAGS = re.compile(r"\([a-z]{2,3}(?:-[a-z0-9]{2,8})*\)")

_setup_lock = threading.Lock()
_library_ready = False


def _point_phonemizer_at_loader() -> None:
    """Tell phonemizer where eSpeak NG lives (once per process: it is a class attribute)."""
    global _library_ready
    with _setup_lock:
        if _library_ready:
            return
        try:
            import espeakng_loader
            from phonemizer.backend.espeak.wrapper import EspeakWrapper

            EspeakWrapper.set_library(espeakng_loader.get_library_path())
            EspeakWrapper.set_data_path(espeakng_loader.get_data_path())
        except (ImportError, OSError, RuntimeError) as exc:
            raise PhonemizerError(f"eSpeak NG is unavailable: {exc}") from exc
        _library_ready = True


class EspeakPhonemizer:
    """Text to eSpeak NG IPA, thread-safe, one backend per eSpeak voice (built on first use)."""

    def __init__(self, *, word_cache_size: int = _WORD_CACHE_SIZE) -> None:
        self._lock = threading.Lock()
        self._backends: dict[str, Any] = {}
        self._word_cache: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._word_cache_size = word_cache_size

    def _backend(self, voice: str) -> Any:
        backend = self._backends.get(voice)
        if backend is None:
            _point_phonemizer_at_loader()
            from phonemizer.backend import EspeakBackend

            try:
                backend = EspeakBackend(
                    voice,
                    preserve_punctuation=True,
                    with_stress=True,
                    language_switch="remove-flags",
                    logger=_log,
                )
            except (RuntimeError, OSError, ValueError) as exc:
                raise PhonemizerError(f"eSpeak NG cannot load voice {voice!r}: {exc}") from exc
            self._backends[voice] = backend
        return backend

    def _run(self, voice: str, lines: list[str]) -> list[str]:
        """Phonemize each line on its own; the caller holds the lock."""
        from phonemizer.separator import Separator

        backend = self._backend(voice)
        separator = Separator(phone="", syllable="", word=" ")
        out = []
        try:
            for line in lines:
                # One line per call: with punctuation kept, phonemizer may hand back a line in
                # pieces (a '.' inside a number), which we glue back together.
                pieces = backend.phonemize([line], separator=separator, strip=True, njobs=1)
                out.append(_clean(" ".join(p for p in pieces if p)))
        except (RuntimeError, OSError, ValueError, IndexError) as exc:
            raise PhonemizerError(f"eSpeak NG failed on voice {voice!r}: {exc}") from exc
        return out

    def phonemize(self, text: str, voice: str) -> str:
        """IPA for ``text`` with punctuation kept and code points decomposed, as Piper feeds it."""
        if not text.strip():
            return ""
        with self._lock:
            return self._run(voice, [text])[0]

    def phonemize_words(self, text: str, voice: str) -> list[tuple[str, str]]:
        """``(word, ipa)`` for each word of ``text``, each word phonemized alone (cached)."""
        words = split_words(text)
        result: dict[str, str] = {}
        with self._lock:
            missing = []
            for word in words:
                cached = self._word_cache.get((voice, word))
                if cached is None:
                    missing.append(word)
                else:
                    self._word_cache.move_to_end((voice, word))
                    result[word] = cached
            missing = list(dict.fromkeys(missing))
            if missing:
                for word, ipa in zip(missing, self._run(voice, missing), strict=True):
                    result[word] = ipa
                    self._word_cache[(voice, word)] = ipa
                while len(self._word_cache) > self._word_cache_size:
                    self._word_cache.popitem(last=False)
        return [(word, result[word]) for word in words]


def _clean(ipa: str) -> str:
    ipa = _LANGUAGE_FLAGS.sub("", ipa)
    ipa = " ".join(ipa.split())
    return unicodedata.normalize("NFD", ipa)


_default: EspeakPhonemizer | None = None
_default_lock = threading.Lock()


def default_phonemizer() -> EspeakPhonemizer:
    """The process-wide phonemizer (eSpeak NG is one global library; sharing it is cheaper)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = EspeakPhonemizer()
        return _default
