"""How many stretches of sound a plain-text chunk must have (``scheduler.qa.spoken_sentences``)."""

from __future__ import annotations

from scheduler.qa import spoken_sentences


def test_a_chunk_is_spoken_as_its_sentences_with_something_to_say() -> None:
    assert spoken_sentences("“Oh! it is of no consequence. I shall see her in January. Pardon me.”", "en") == 3  # "Oh! it" is one
    assert spoken_sentences("Mr. Bennet came at 3.30 p.m. to see her.", "en") == 1
    assert spoken_sentences("Chapter 2\n\n* * *\n\nShe smiled.", "en") == 2
