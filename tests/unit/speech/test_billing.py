"""The one rule of a billed character (``speech.billing``): layout does not change the count, and
a text cut into chunks the way a job cuts it bills exactly what it bills whole."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from speech.billing import billed_characters
from speech.text import chunk


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello, world.", 13),
        ("Hello,\n\n  world.", 13),  # a run of whitespace is one character
        ("  Hello, world.\n", 13),  # none at the start or end
        ("One\x00 two.\x1b Three.", len("One two. Three.")),  # control characters separate like spaces
        ("Pay $5 on 3/4.", 14),  # the text as written, not its spoken expansion
        ("\n\t ", 0),
        ("", 0),
    ],
)
def test_the_rule(text: str, expected: int) -> None:
    assert billed_characters(text) == expected


def test_a_later_piece_carries_the_break_before_it() -> None:
    assert billed_characters("world.", continues=True) == len(" world.")
    assert billed_characters("Hello,") + billed_characters("world.", continues=True) == billed_characters("Hello, world.")
    assert billed_characters(" \n", continues=True) == 0  # nothing to read: nothing billed


_WORD = st.text(st.characters(categories=["L", "N", "P"]), min_size=1, max_size=12)
_BREAK = st.sampled_from([" ", "  ", "\n", "\n\n", " \n\n  ", "\t"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_WORD, _BREAK), min_size=1, max_size=120), st.sampled_from([40, 80, 200]))
def test_a_job_s_chunks_bill_what_the_whole_text_bills(pieces: list[tuple[str, str]], limit: int) -> None:
    text = "".join(word + sep for word, sep in pieces)
    chunks = chunk(text, "en", limit=limit)
    billed = sum(billed_characters(c.text, continues=i > 0) for i, c in enumerate(chunks))
    assert billed == billed_characters(text)
