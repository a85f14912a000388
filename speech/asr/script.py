"""Which script a transcript is written in: the scorer folds each script its own way, and a
transcript in another script than its language's is the recogniser's doing (``speech.asr.language``)."""

from __future__ import annotations

import unicodedata


def script(text: str) -> str:
    """The script most letters of ``text`` are in: ``latin``, ``arabic``, ``devanagari``,
    ``japanese`` or ``other`` (``""`` for text without letters)."""
    counts: dict[str, int] = {}
    for ch in text:
        if not ch.isalpha():
            continue
        name = unicodedata.name(ch, "")
        if name.startswith("LATIN"):
            key = "latin"
        elif name.startswith("ARABIC"):
            key = "arabic"
        elif name.startswith("DEVANAGARI"):
            key = "devanagari"
        elif name.startswith(("CJK", "HIRAGANA", "KATAKANA")):
            key = "japanese"
        else:
            key = "other"
        counts[key] = counts.get(key, 0) + 1
    return max(counts, key=counts.__getitem__) if counts else ""
