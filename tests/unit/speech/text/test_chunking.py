import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from speech.text.chunking import REQUEST_LIMIT, chunk

CLAUSE_MARKS = ",;:—–、，；："
# Sentence ends that need no space after them (CJK, danda, Arabic question mark), plus closers.
UNSPACED_END = re.compile(r"[。！？।॥؟][\"'”’»」』）)\]}›]*$")


def check_invariants(text: str, chunks, limit: int) -> None:
    """What every caller relies on: the chunks partition the text in order, each chunk's text is
    its span stripped, non-empty and within the limit, and no word is cut unless it alone is
    longer than the limit."""
    if not text.strip():
        assert chunks == []
        return
    assert "".join(text[c.start : c.end] for c in chunks) == text
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    for i, c in enumerate(chunks):
        assert c.index == i
        assert c.text == text[c.start : c.end].strip()
        assert 0 < len(c.text) <= limit
    for a in chunks[:-1]:
        a_end = a.start + len(text[a.start : a.end].rstrip())
        if a_end == a.end and text[a_end - 1] not in CLAUSE_MARKS and not UNSPACED_END.search(text[:a_end]):
            # No whitespace between the chunks: the cut went through a "word", allowed only
            # when the word is longer than the limit.
            left = re.search(r"\S*$", text[:a_end]).group(0)
            right = re.match(r"\S*", text[a_end:]).group(0)
            assert len(left) + len(right) > limit, (left, right)


WORDS = st.sampled_from(
    [
        "word",
        "a",
        "Mr.",
        "3.14",
        "end.",
        "Why?",
        "yes!",
        "so,",
        "then;",
        "x" * 30,
        "—",
        "“Hi.”",
        "e.g.",
        "日本。",
        "।",
    ]
)
SEPARATORS = st.sampled_from([" ", " ", " ", "  ", "\n", "\n\n", "\r\n\r\n", "\t", ""])


@st.composite
def prose(draw):
    parts = draw(st.lists(st.tuples(WORDS, SEPARATORS), max_size=60))
    return draw(SEPARATORS) + "".join(w + s for w, s in parts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=prose(), limit=st.integers(min_value=1, max_value=120))
def test_chunks_partition_the_text_within_the_limit(text, limit):
    check_invariants(text, chunk(text, "en", limit=limit), limit)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300), limit=st.integers(min_value=1, max_value=80))
def test_any_unicode_text_is_partitioned(text, limit):
    check_invariants(text, chunk(text, "en", limit=limit), limit)


def test_whole_sentences_are_packed_up_to_the_limit():
    text = "One two. Three four. Five six. Seven eight."
    chunks = chunk(text, "en", limit=20)
    assert [c.text for c in chunks] == ["One two. Three four.", "Five six.", "Seven eight."]


def test_short_text_is_one_chunk():
    chunks = chunk("Hello there. How are you?", "en")
    assert len(chunks) == 1 and chunks[0].text == "Hello there. How are you?"
    assert REQUEST_LIMIT == 1000


def test_paragraph_breaks_start_a_new_chunk_and_are_flagged():
    text = "One. Two.\n\nThree. Four.\n\nFive."
    chunks = chunk(text, "en", limit=1000)
    assert [(c.text, c.paragraph_break_before) for c in chunks] == [
        ("One. Two.", False),
        ("Three. Four.", True),
        ("Five.", True),
    ]


def test_long_sentence_splits_at_a_clause():
    text = "This sentence is rather long, and it keeps going past the limit without stopping."
    chunks = chunk(text, "en", limit=50)
    assert chunks[0].text == "This sentence is rather long,"
    assert all(len(c.text) <= 50 for c in chunks)


def test_long_sentence_without_clauses_splits_at_a_word():
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    chunks = chunk(text, "en", limit=20)
    assert [c.text for c in chunks] == ["alpha beta gamma", "delta epsilon zeta", "eta theta iota kappa"]


def test_a_word_longer_than_the_limit_is_cut_hard():
    text = "tiny " + "x" * 25 + " end"
    chunks = chunk(text, "en", limit=10)
    assert [c.text for c in chunks] == ["tiny", "x" * 10, "x" * 10, "x" * 5 + " end"]


def test_japanese_long_sentence_splits_at_ideographic_comma():
    text = "あ" * 30 + "、" + "い" * 30 + "。"
    chunks = chunk(text, "ja", limit=40)
    assert chunks[0].text == "あ" * 30 + "、"


def test_whitespace_between_chunks_belongs_to_the_earlier_one():
    text = "  One.   Two.  "
    chunks = chunk(text, "en", limit=5)
    assert [(c.start, c.end, c.text) for c in chunks] == [(0, 9, "One."), (9, 15, "Two.")]


@pytest.mark.parametrize("text", ["", " ", "\n\n"])
def test_blank_text_gives_no_chunks(text):
    assert chunk(text) == []


def test_limit_must_be_positive():
    with pytest.raises(ValueError):
        chunk("x", limit=0)


def test_a_book_chunks_within_the_request_limit():
    sentence = "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife. "
    text = "\n\n".join([sentence * 12] * 30)  # 30 paragraphs of ~1,400 characters
    chunks = chunk(text, "en")
    check_invariants(text, chunks, REQUEST_LIMIT)
    assert sum(c.paragraph_break_before for c in chunks) == 29
    assert len(chunks) == 60  # each paragraph needs two requests
    assert all(c.text.endswith("wife.") for c in chunks)  # whole sentences only
