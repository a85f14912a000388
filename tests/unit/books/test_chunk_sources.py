"""Each chunk of a job is found again in the job's text, so its words point at the text sent."""

from __future__ import annotations

import re

from books import credits
from books.casting import Cast, check_cast
from books.chapters import sections_for
from books.chunk_sources import chunk_runs
from books.layout import Layout
from scheduler.job_params import JobParams
from scheduler.planning import split
from speech.text.offsets import Runs, SourceSpan, Traced, placed, spoken_words


def _in_book(chunks: list[str], runs: list[Runs | None]) -> list[tuple[str, SourceSpan]]:
    """Each word of each placed chunk, with its span in the book."""
    return [
        (w.word, placed(w.source, r))
        for chunk, r in zip(chunks, runs, strict=True) if r is not None
        for w in spoken_words(Traced.of(chunk))
    ]


def _words_found(text: str, chunks: list[str], runs: list[Runs | None]) -> list[tuple[str, str]]:
    return [(word, text[start:end]) for word, (start, end) in _in_book(chunks, runs)]


def _plain_words(chunks: list[str]) -> list[str]:
    return [w.word for c in chunks for w in spoken_words(Traced.of(c))]


BOOK = (
    "# Chapter One\n\nIt was a bright cold day in April, and the clocks were striking thirteen.   Winston\n"
    "Smith slipped quickly through the glass doors.\n\n"
    "# Chapter Two\n\nThe hallway smelt of boiled cabbage. " + "Words go on and on. " * 80 + "\n\nThe end."
)


def test_chapters_and_headings_every_word_points_at_itself() -> None:
    params = JobParams(speaker="joe", model_id="coda", lang="en")
    texts, _ = split(BOOK, "en", sections=sections_for(BOOK, params))
    runs = chunk_runs(BOOK, texts)
    assert all(r is not None for r in runs) and len(texts) > 3  # the long chapter took several chunks
    found = _words_found(BOOK, texts, runs)
    assert [w for w, _ in found] == _plain_words(texts)
    assert all(word == written for word, written in found)
    assert [written for w, written in found if w == "Winston"] == ["Winston"]
    # the n-th "on" of the book is the n-th "on" found: no chunk was placed over another's text
    ons = [m.start() for m in re.finditer(r"\bon\b", BOOK)]
    assert [span[0] for word, span in _in_book(texts, runs) if word == "on"] == ons


def test_a_cast_collapses_whitespace_and_its_chunks_are_still_found() -> None:
    cast = Cast.from_params(JobParams(speaker="joe", model_id="coda", lang="en",
                                      cast=check_cast({"characters": {"Elizabeth": "nora"}}, "joe")))
    text = "It   rained.\n\n“Shall we\nwalk?” said Elizabeth. “It is fine.”\n\n“Yes,” said Elizabeth, “it is.”"
    texts, _ = split(text, "en", cast=cast)
    runs = chunk_runs(text, texts)
    assert all(r is not None for r in runs)
    found = _words_found(text, texts, runs)
    assert all(word == written for word, written in found)
    assert [w for w, _ in found] == _plain_words(texts)


def test_credits_get_no_offsets_and_the_body_counts_in_the_text_sent() -> None:
    params = JobParams(speaker="joe", model_id="coda", lang="en", delivery="acx", title="Night", author="A. Writer")
    body = "It was night. The stars came out."
    whole, sections = credits.with_credits(body, sections_for(body, params), params)
    texts, layout = split(whole, "en", sections=sections)
    skip = frozenset(credits.credit_chunks(layout, len(texts)))
    runs = chunk_runs(body, texts, skip=skip)
    assert skip and all(runs[i] is None for i in skip)
    found = _words_found(body, texts, runs)
    assert [w for w, _ in found] == [w.word for w in spoken_words(Traced.of(body))]
    assert all(word == written for word, written in found)


def test_a_chunk_not_in_the_text_gets_none_and_moves_nothing() -> None:
    text = "Alpha beta. Gamma delta."
    runs = chunk_runs(text, ["Alpha beta.", "Not here at all.", "Gamma delta."])
    assert runs[1] is None
    assert runs[2] == [(0, text.index("Gamma"))]


def test_the_layout_keeps_the_runs_and_reads_plans_without_them() -> None:
    layout = Layout([0, 250], sources=[[(0, 0), (5, 7)], None])
    assert Layout.from_json(layout.to_json()).sources == [[(0, 0), (5, 7)], None]
    assert Layout.from_json(b'{"pauses_ms": [0]}').sources == []
