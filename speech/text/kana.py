"""Japanese kanji to hiragana, so eSpeak NG reads words instead of saying "Chinese letter".

eSpeak's Japanese voice speaks kana only; pykakasi ships its dictionary and converts offline.
Readings are dictionary readings without context (``今日は`` may come out ``こんにちは``), which
is the remaining weakness. The converter costs about a second to build, so it is built once, on
the first Japanese text, and shared (it holds no per-call state; a lock guards its use anyway).
"""

from __future__ import annotations

import re
import threading
from functools import cache
from typing import Any, Final

_KANJI: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3005]")
_lock = threading.Lock()


@cache
def _converter() -> Any:
    import pykakasi

    return pykakasi.kakasi()  # type: ignore[no-untyped-call]  # pykakasi ships no annotations


def has_kanji(text: str) -> bool:
    return _KANJI.search(text) is not None


def to_kana(text: str) -> str:
    """Every kanji run read as hiragana; kana, Latin and punctuation left as they are."""
    if not has_kanji(text):
        return text
    with _lock:
        parts = _converter().convert(text)
    return "".join(part["hira"] if has_kanji(part["orig"]) else part["orig"] for part in parts)
