"""What a word is in word timings: a whitespace token without its edge punctuation. Every engine
times these words (``speech.text.phonemize`` and the engines split with them), and the offset
map (``speech.text.offsets``) finds them again; here so that neither imports the other's weight
(``speech.text`` must not load the phonemiser)."""

from __future__ import annotations

from typing import Final

WORD_TRIM: Final = "\"'“”‘’«»()[]{}<>.,;:!?¡¿…—–-*_/\\|،؟。、！？"
"""Characters trimmed from the ends of a text token to give the word shown in timings."""


def split_words(text: str) -> list[str]:
    """The words of ``text`` as shown in timings: whitespace tokens without edge punctuation."""
    words = []
    for token in text.split():
        word = token.strip(WORD_TRIM)
        if word:
            words.append(word)
    return words
