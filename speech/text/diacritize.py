"""Arabic diacritization (tashkeel): put the short vowels back before phonemization.

Arabic is written without most of its vowels: ``ذهبت إلى السوق`` leaves the reader to know that
it is *dhahabtu ilā s-sūqi*. eSpeak NG guesses few of them and reads the rest as bare consonant
clusters (``يمكنك أن تخبرني`` -> ``jmkˈunnaka ʔn tχbrnˈiː``); with the harakat written in it reads
them as written (``jumkˈinuka ʔˈan tuχbˈiraniː``).

What that buys, measured (Kokoro-82M int8 through onnxruntime, voice ``jm_kumo``, eight everyday
sentences, Whisper base scoring the character error rate against the unvowelled text): about
nothing that Whisper base can show, 0.48 -> 0.45 with this model, 0.37 -> 0.38 once the glottal
stop is fixed (other diacritizers: within 0.05 of those). The score compares letters, not vowels,
so it cannot see a wrong vowel; the gain is in the vowels themselves, which are now those of the
language rather than none. Whether to speak Arabic through this is the engine's choice.

The model is ``text2tashkeel``'s default (``rawi-ensemble``: one 4.9 MB int8 ONNX graph that ships
inside the wheel, run by onnxruntime on the CPU, about 15 ms a sentence; no download, no torch).

What is diacritized: runs of Arabic-script words only. The model NFD-normalises its input and
drops symbols, so anything else in a mixed sentence (a Latin name with accents, an emoji, digits)
is passed through untouched. A word the author already marked (any haraka, shadda or sukun) keeps
the author's marks: they know better than the model.

Why lazy and guarded: importing the package loads onnxruntime, and the session is built on first
use, so importing this module costs nothing. The session is shared and one call runs at a time
(a lock; a sentence takes milliseconds). If the package is not installed, or the model fails,
``diacritize_arabic`` returns its input unchanged (with a warning): unvowelled text still speaks,
only less clearly.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from typing import Any, Final

_LOG = logging.getLogger(__name__)

HARAKAT: Final = frozenset(chr(c) for c in range(0x064B, 0x0653))
"""Tanween (U+064B..U+064D), fatha, damma, kasra, shadda, sukun (U+064E..U+0652)."""

_ARABIC = "\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff"
# A run: Arabic-script words (letters, marks, Arabic punctuation and digits) separated by spaces.
_RUN: Final = re.compile(f"[{_ARABIC}]+(?:[ \\t]+[{_ARABIC}]+)*")
_MAX_RUN: Final = 400  # characters per model call; longer runs are cut at a space

_lock = threading.Lock()
_model: Any = None
_unavailable = False


def has_harakat(text: str) -> bool:
    return any(ch in HARAKAT for ch in text)


def _load() -> Any:
    """The shared diacritizer, or ``None`` when it cannot be had (called under ``_lock``)."""
    global _model, _unavailable
    if _model is None and not _unavailable:
        try:
            from text2tashkeel import Diacritizer

            _model = Diacritizer()
        except Exception as exc:  # ImportError, or onnxruntime missing underneath
            _unavailable = True
            _LOG.warning("Arabic diacritization is off (text2tashkeel unavailable: %s)", exc)
    return _model


def _pieces(run: str) -> list[str]:
    """``run`` cut at spaces into pieces of at most ``_MAX_RUN`` characters (a longer word
    stands alone)."""
    pieces: list[str] = []
    current = ""
    for word in re.split(r"(?<=[ \t])", run):
        if current and len(current) + len(word) > _MAX_RUN:
            pieces.append(current)
            current = ""
        current += word
    if current:
        pieces.append(current)
    return pieces


def _keep_marked_words(original: str, diacritized: str) -> str:
    """The model's words, except where the author already wrote marks."""
    source = original.split(" ")
    result = diacritized.split(" ")
    if len(source) != len(result):
        return diacritized
    return " ".join(s if has_harakat(s) else d for s, d in zip(source, result, strict=True))


def _diacritize_run(model: Any, run: str) -> str:
    out = []
    for piece in _pieces(run):
        core = piece.rstrip(" \t")
        if not core:
            out.append(piece)
            continue
        marked = unicodedata.normalize("NFC", model.diacritize(core))
        out.append(_keep_marked_words(core, marked) + piece[len(core) :])
    return "".join(out)


def diacritize_arabic(text: str) -> str:
    """``text`` with the short vowels (harakat) of its Arabic words written in; everything that is
    not Arabic script is left as it is. Returns ``text`` unchanged when diacritization is
    unavailable."""
    if not text or _RUN.search(text) is None:
        return text
    with _lock:
        model = _load()
        if model is None:
            return text
        try:
            return _RUN.sub(lambda m: _diacritize_run(model, m.group(0)), text)
        except Exception:
            _LOG.warning("Arabic diacritization failed; the text is spoken unvowelled", exc_info=True)
            return text
