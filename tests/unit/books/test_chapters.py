from __future__ import annotations

import pytest

from books.chapters import (
    OPENING_TITLE,
    body_span,
    check_given,
    detect_sections,
    given_sections,
    heading_title,
    join_given,
    markdown_to_text,
    sections_for,
    spoken,
)
from scheduler.job_params import JobParams
from tests.support.corpus import CORPUS

BODY = "It was a dark and stormy night; the rain fell in torrents. " * 6  # > 200 characters


@pytest.mark.parametrize(
    ("paragraph", "title"),
    [
        ("Chapter 1", "Chapter 1"),
        ("CHAPTER I.", "CHAPTER I"),
        ("Chapter the First", "Chapter the First"),
        ("Chapter Twenty-Three", "Chapter Twenty-Three"),
        ("Chapter 12: The Ball", "Chapter 12: The Ball"),
        ("CHAPTER XLII\nIn Which Things Happen", "CHAPTER XLII. In Which Things Happen"),
        ("# The Beginning", "The Beginning"),
        ("### Notes ###", "Notes"),
        ("PROLOGUE", "PROLOGUE"),
        ("Part Two", "Part Two"),
        ("Book III", "Book III"),
    ],
)
def test_headings_are_recognised(paragraph: str, title: str) -> None:
    assert heading_title(paragraph) == title


@pytest.mark.parametrize(
    "paragraph",
    [
        "Chapter and verse were quoted at length.",  # "and verse" is no number
        "Part of the problem was the rain.",
        "The chapter ended.",
        "Chapter 1\nline two\nline three\nline four",  # a heading is at most three lines
        "Chapter 1 " + "x" * 200,
    ],
)
def test_prose_is_not_a_heading(paragraph: str) -> None:
    assert heading_title(paragraph) is None


def test_chapters_cut_the_text_at_their_headings_and_keep_the_heading() -> None:
    text = f"Chapter 1\n\n{BODY}\n\nCHAPTER II.\n\n{BODY}\n\nChapter the Third\n\n{BODY}"
    sections = detect_sections(text)
    assert [s.title for s in sections] == ["Chapter 1", "CHAPTER II", "Chapter the Third"]
    assert text[sections[1].start :].startswith("CHAPTER II.")
    assert "".join(text[s.start : s.end] for s in sections) == text  # nothing lost, nothing repeated


def test_contents_entries_are_not_chapters_and_front_matter_is_skipped_when_asked() -> None:
    contents = "\n\n".join(f"Chapter {i}" for i in range(1, 4))
    text = f"My Book\n\nBy Someone\n\nCONTENTS\n\n{contents}\n\nChapter 1\n\n{BODY}\n\nChapter 2\n\n{BODY}"
    kept = detect_sections(text)
    assert [s.title for s in kept] == [OPENING_TITLE, "Chapter 1", "Chapter 2"]
    assert not kept[0].is_chapter
    skipped = detect_sections(text, skip_front_matter=True)
    assert [s.title for s in skipped] == ["Chapter 1", "Chapter 2"]
    assert "My Book" not in text[skipped[0].start : skipped[-1].end]


def test_a_part_heading_opens_the_chapter_that_follows_it() -> None:
    text = f"Chapter 1\n\n{BODY}\n\nPART TWO\n\nChapter 2\n\n{BODY}"
    sections = detect_sections(text)
    assert [s.title for s in sections] == ["Chapter 1", "PART TWO. Chapter 2"]
    assert text[sections[1].start :].startswith("PART TWO")


def test_markdown_headings() -> None:
    source = f"# Title\n\n## One\n{BODY}\n\n## Two\n\nSome **bold** and [a link](http://x) here. {BODY}"
    text = markdown_to_text(source)
    assert "**" not in text and "http" not in text and "a link" in text
    sections = detect_sections(text, skip_front_matter=True)
    assert [s.title for s in sections] == ["One", "Two"]
    assert spoken(text[sections[0].start : sections[0].end]).startswith("One\n")


def test_gutenberg_header_and_footer() -> None:
    text = (
        "The Project Gutenberg EBook of X\n\nlicence blah\n\n*** START OF THIS PROJECT GUTENBERG EBOOK X ***\n\n"
        f"Chapter 1\n\n{BODY}\n\n*** END OF THIS PROJECT GUTENBERG EBOOK X ***\n\nMore licence."
    )
    start, end = body_span(text)
    assert text[start:end].strip().startswith("Chapter 1") and "More licence" not in text[start:end]
    sections = detect_sections(text, skip_front_matter=True)
    assert [s.title for s in sections] == ["Chapter 1"]
    assert "licence" not in text[sections[0].start : sections[0].end]


def test_pride_and_prejudice_has_61_chapters_after_its_front_matter() -> None:
    text = CORPUS.read_text(encoding="utf-8")
    sections = detect_sections(text, skip_front_matter=True)
    assert [s.title for s in sections] == [f"Chapter {i}" for i in range(1, 62)]
    assert text[sections[0].start : sections[0].end].split("\n\n")[1].strip().startswith("It is a truth universally")
    assert "PROJECT GUTENBERG" not in text[sections[-1].start : sections[-1].end].upper()


def test_given_chapters_are_checked_and_win_over_detection() -> None:
    text = f"Intro words.\n\nChapter 1\n\n{BODY}"
    given = check_given([{"title": "Start", "start": 0}, {"title": "Later", "start": 14}], len(text))
    sections = sections_for(text, JobParams(speaker="joe", model_id="mistv3", lang="en", chapters=given))
    assert [(s.title, s.start) for s in sections] == [("Start", 0), ("Later", 14)]
    assert [s.title for s in given_sections(text, given[1:], skip_front_matter=True)] == ["Later"]
    for bad in (
        [{"title": "a", "start": 5}, {"title": "b", "start": 5}],
        [{"title": "", "start": 0}],
        [{"title": "a", "start": len(text)}],
        [{"title": "a", "start": "3"}],
        [],
        "nope",
    ):
        with pytest.raises(ValueError):
            check_given(bad, len(text))


def test_chapters_given_with_their_texts() -> None:
    text, marks = join_given([{"title": "One", "text": "First text."}, {"title": "Two", "text": "Second."}])
    assert [text[m["start"] :].split("\n")[0] for m in marks] == ["One", "Two"]
    assert "First text." in text and "Second." in text
    with pytest.raises(ValueError):
        join_given([{"title": "One"}])


def test_short_chapters_stay_chapters_but_short_contents_lines_do_not() -> None:
    short = "The sun rose over the hill and the birds sang. " * 2  # under 200 characters
    text = f"# Book\n\n## Morning\n\n{short}\n\n## Evening\n\n{short}"
    assert [s.title for s in detect_sections(text, skip_front_matter=True)] == ["Morning", "Evening"]
    contents = "Chapter 1 — the start of it\n\nChapter 2 — what came next"
    text = f"{contents}\n\nChapter 1\n\n{short}\n\nChapter 2\n\n{short}"
    # contents lines under 200 characters whose titles come back later as headings
    titled = [s.title for s in detect_sections(text)]
    assert titled[-2:] == ["Chapter 1", "Chapter 2"] and titled.count("Chapter 1") == 1
