"""A book's chapters: Project Gutenberg wrappers, front matter, headings, or chapters given.

Everything here works on character offsets into the source text rather than on copies of it,
so chapters a customer gives as offsets stay valid whatever is skipped around them.

Heading detection is deliberately narrow, because a false chapter is worse than a missed one
(a two-second pause and a marker in the middle of a paragraph): a heading is a paragraph of at
most three short lines whose first line is "Chapter 1", "CHAPTER I.", "Chapter the First",
"Chapter Twelve: The Ball", "Prologue", "Epilogue", "Part Two" or "Book III", or any Markdown
``#`` line. A heading followed by almost no text before the next one is a table-of-contents
entry (or a "Part" title, which then opens the chapter after it), not a chapter; so is a short
one whose title comes back later as a heading, or one in a run of short ones: that is how the
contents list at the front of a Gutenberg book is told from the chapters themselves. Everything before the first real chapter is front matter (title page,
contents, "Produced by..."); it is dropped when the request asks for it and otherwise becomes an
opening section of its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from books.errors import InvalidChapters
from books.options import BookOptions, GivenChapter

MIN_BODY_CHARS: Final = 1  # a heading with no text under it is a contents line or a "Part" title
MIN_CHAPTER_CHARS: Final = 200  # a shorter chapter must not look like a contents entry (below)
CONTENTS_RUN: Final = 5  # this many short-bodied headings in a row are a table of contents
MAX_HEADING_CHARS: Final = 120
OPENING_TITLE: Final = "Opening"

_START: Final = re.compile(
    r"^[ \t]*\*{3}[ \t]*START OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK[^\n]*$", re.IGNORECASE | re.MULTILINE
)
_END: Final = re.compile(
    r"^[ \t]*(?:\*{3}[ \t]*END OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK|End of (?:the )?Project Gutenberg)[^\n]*$",
    re.IGNORECASE | re.MULTILINE,
)
_PARAGRAPH_BREAK: Final = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_MARKDOWN_HEADING: Final = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)

_NUMBER_WORDS: Final = frozenset(
    """one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
    seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred first second
    third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth fifteenth
    sixteenth seventeenth eighteenth nineteenth twentieth thirtieth fortieth fiftieth sixtieth seventieth
    eightieth ninetieth hundredth last final""".split()
)
_LABEL: Final = re.compile(r"^(?:chapter|chap\.|part|book|volume|vol\.)[ \t]+(?P<rest>.+)$", re.IGNORECASE)
_TOKEN: Final = re.compile(r"[^\W_]+")
_STANDALONE: Final = re.compile(r"^(?:prologue|epilogue|preface|introduction|foreword|afterword)\b[ \t.:—–-]*.*$", re.IGNORECASE)
_ROMAN: Final = re.compile(r"^[ivxlcdm]+$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Section:
    """A stretch of the source to read: ``text[start:end]``, under ``title`` (a chapter marker)."""

    title: str
    start: int
    end: int
    is_chapter: bool = True  # False for the opening before the first chapter


@dataclass(frozen=True, slots=True)
class _Heading:
    title: str
    start: int  # where the heading's paragraph starts (the heading is read aloud with its chapter)
    end: int  # where the heading's paragraph ends


def body_span(text: str) -> tuple[int, int]:
    """The part of a Project Gutenberg file between its START and END lines (the whole text
    when there are none). The licence header and footer are never part of the book."""
    start, end = 0, len(text)
    head = _START.search(text)
    if head:
        start = head.end()
    tail = _END.search(text, start)
    if tail:
        end = tail.start()
    return start, end


def _is_number(tokens: Sequence[str]) -> bool:
    tokens = [t.lower() for t in tokens]
    if tokens and tokens[0] == "the":  # "Chapter the First", "Chapter the Twenty-Third"
        tokens = tokens[1:]
    if not tokens:
        return False
    if len(tokens) == 1 and (tokens[0].isdigit() or _ROMAN.match(tokens[0])):
        return True
    return tokens[0] in _NUMBER_WORDS and all(t in _NUMBER_WORDS or t == "and" for t in tokens)


def _numbered(rest: str) -> bool:
    """Does the text after "Chapter" start with a number ("12", "XII", "Twenty-Three", "the First")?"""
    tokens = _TOKEN.findall(rest)[:5]
    return any(_is_number(tokens[:k]) for k in range(1, len(tokens) + 1))


def heading_title(paragraph: str) -> str | None:
    """The chapter title if this paragraph is a heading, else None."""
    lines = [line.strip() for line in paragraph.strip().splitlines() if line.strip()]
    if not lines or len(lines) > 3 or sum(len(line) for line in lines) > MAX_HEADING_CHARS:
        return None
    first = lines[0]
    markdown = _MARKDOWN_HEADING.match(first)
    if markdown:
        return markdown.group(2).strip()
    label = _LABEL.match(first)
    if not (label and _numbered(label.group("rest"))) and not (_STANDALONE.match(first) and len(first) <= 60):
        return None
    return ". ".join(line.rstrip(".") for line in lines)


def _paragraphs(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans = []
    pos = start
    for m in _PARAGRAPH_BREAK.finditer(text, start, end):
        if m.start() > pos:
            spans.append((pos, m.start()))
        pos = m.end()
    if pos < end:
        spans.append((pos, end))
    out = []
    for a, b in spans:
        while a < b and text[a].isspace():
            a += 1
        if a < b:
            out.append((a, b))
    return out


def _markdown_headings(text: str, start: int, end: int) -> list[_Heading]:
    """``#`` lines need no blank line around them in Markdown: each starts a heading of its own."""
    return [
        _Heading(m.group(2).strip(), m.start(), m.end())
        for m in _MARKDOWN_HEADING.finditer(text, start, end)
    ]


def find_headings(text: str, start: int = 0, end: int | None = None) -> list[_Heading]:
    """Every heading between ``start`` and ``end``, in order (contents entries included)."""
    end = len(text) if end is None else end
    found: dict[int, _Heading] = {h.start: h for h in _markdown_headings(text, start, end)}
    for a, b in _paragraphs(text, start, end):
        if any(a <= s < b for s in found):
            continue
        title = heading_title(text[a:b])
        if title:
            found[a] = _Heading(title, a, b)
    return [found[k] for k in sorted(found)]


def _body_chars(text: str, a: int, b: int) -> int:
    return sum(1 for c in text[a:b] if not c.isspace())


def _key(title: str) -> str:
    return "".join(c for c in title.lower() if c.isalnum())


def _is_contents_entry(headings: Sequence[_Heading], bodies: Sequence[int], i: int) -> bool:
    """A heading with (almost) nothing under it, or a short one that is a contents line: its
    title comes back later as a heading, or it stands in a run of short headings."""
    if bodies[i] < MIN_BODY_CHARS:
        return True
    if bodies[i] >= MIN_CHAPTER_CHARS:
        return False
    key = _key(headings[i].title)
    if any(_key(h.title) == key for h in headings[i + 1 :]):
        return True
    run_start = run_end = i
    while run_start > 0 and bodies[run_start - 1] < MIN_CHAPTER_CHARS:
        run_start -= 1
    while run_end + 1 < len(bodies) and bodies[run_end + 1] < MIN_CHAPTER_CHARS:
        run_end += 1
    return run_end - run_start + 1 >= CONTENTS_RUN


def detect_sections(text: str, *, skip_front_matter: bool = False) -> list[Section]:
    """The book cut at its chapter headings (see the module docstring for the rules)."""
    start, end = body_span(text) if skip_front_matter else (0, len(text))
    headings = find_headings(text, start, end)
    bodies = [
        _body_chars(text, h.end, headings[i + 1].start if i + 1 < len(headings) else end) for i, h in enumerate(headings)
    ]
    chapters: list[_Heading] = []
    for i, heading in enumerate(headings):
        if _is_contents_entry(headings, bodies, i):
            continue
        before = headings[i - 1] if i else None
        if chapters and before is not None and bodies[i - 1] < MIN_BODY_CHARS and not text[before.end : heading.start].strip():
            # "PART TWO" straight before "Chapter 9": read with, and marked as, the chapter it opens
            heading = _Heading(f"{before.title}. {heading.title}", before.start, heading.end)
        chapters.append(heading)
    if not chapters:
        return [Section(OPENING_TITLE, start, end, is_chapter=False)] if text[start:end].strip() else []
    return _cut(text, [(h.title, h.start) for h in chapters], start, end, skip_front_matter)


def _cut(text: str, marks: Sequence[tuple[str, int]], start: int, end: int, skip_front_matter: bool) -> list[Section]:
    sections: list[Section] = []
    if not skip_front_matter and text[start : marks[0][1]].strip():
        sections.append(Section(OPENING_TITLE, start, marks[0][1], is_chapter=False))
    for i, (title, at) in enumerate(marks):
        stop = marks[i + 1][1] if i + 1 < len(marks) else end
        if text[at:stop].strip():
            sections.append(Section(title, at, stop))
    return sections


def given_sections(text: str, chapters: Sequence[GivenChapter], *, skip_front_matter: bool = False) -> list[Section]:
    """Sections from chapters the request gave as ``{"title", "start"}`` character offsets (checked
    at intake: in order and inside the text)."""
    marks = [(c["title"], c["start"]) for c in chapters]
    if not marks:
        return detect_sections(text, skip_front_matter=skip_front_matter)
    return _cut(text, marks, 0, len(text), skip_front_matter)


def sections_for(text: str, params: BookOptions) -> list[Section]:
    """What planning reads: given chapters win over detection."""
    skip = params.skip_front_matter
    if params.chapters:
        return given_sections(text, params.chapters, skip_front_matter=skip)
    return detect_sections(text, skip_front_matter=skip)


def check_given(chapters: object, text_length: int) -> list[GivenChapter]:
    """Validate request chapters (``[{"title": str, "start": int}, ...]``); raise
    ``InvalidChapters`` with the message the client sees."""
    if not isinstance(chapters, list) or not chapters:
        raise InvalidChapters("chapters must be a non-empty list of {title, start}")
    if len(chapters) > 10_000:
        raise InvalidChapters("chapters must have at most 10000 entries")
    out: list[GivenChapter] = []
    previous = -1
    for item in chapters:
        if not isinstance(item, dict):
            raise InvalidChapters("chapters must be a non-empty list of {title, start}")
        title, start = item.get("title"), item.get("start", 0 if not out else None)
        if not isinstance(title, str) or not title.strip() or len(title) > 500:
            raise InvalidChapters("each chapter needs a title (a non-empty string of at most 500 characters)")
        if isinstance(start, bool) or not isinstance(start, int) or not (0 <= start < text_length):
            raise InvalidChapters("each chapter's start must be a character offset inside the text")
        if start <= previous:
            raise InvalidChapters("chapters must be in order of their start")
        previous = start
        out.append({"title": title.strip(), "start": start})
    return out


def join_given(chapters: object) -> tuple[str, list[GivenChapter]]:
    """Chapters given as ``[{"title", "text"}]`` (no ``text`` field in the request): the book is
    their titles and texts in order, each title read as its chapter's first paragraph."""
    if not isinstance(chapters, list) or not chapters:
        raise InvalidChapters("chapters must be a non-empty list of {title, text}")
    parts: list[str] = []
    marks: list[GivenChapter] = []
    position = 0
    for item in chapters:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise InvalidChapters("chapters must be a non-empty list of {title, text}")
        title = item.get("title")
        if not isinstance(title, str) or not title.strip():
            raise InvalidChapters("each chapter needs a title (a non-empty string of at most 500 characters)")
        piece = f"{title.strip()}\n\n{item['text'].strip()}\n\n"
        marks.append({"title": title.strip(), "start": position})
        parts.append(piece)
        position += len(piece)
    return "".join(parts), marks


_MD_LINK: Final = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_EMPHASIS: Final = re.compile(r"(\*{1,3}|_{1,3}|`+|~~)(?=\S)(.+?)(?<=\S)\1")
_MD_LIST: Final = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+", re.MULTILINE)
_MD_QUOTE: Final = re.compile(r"^[ \t]*>[ \t]?", re.MULTILINE)
_MD_RULE: Final = re.compile(r"^[ \t]*(?:[-*_][ \t]*){3,}$", re.MULTILINE)
_MD_FENCE: Final = re.compile(r"^```.*?^```[ \t]*$", re.MULTILINE | re.DOTALL)
_HTML_TAG: Final = re.compile(r"</?[A-Za-z][^>]*>")


def markdown_to_text(source: str) -> str:
    """Markdown as it should be read aloud: heading lines kept (their ``#`` marks are dropped
    later, when the heading is found), markup removed, code blocks left out."""
    text = _MD_FENCE.sub("", source)
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_RULE.sub("", text)
    text = _MD_QUOTE.sub("", text)
    text = _MD_LIST.sub("", text)
    text = _HTML_TAG.sub("", text)
    for _ in range(2):  # nested emphasis: ***bold italic*** or **a _b_**
        text = _MD_EMPHASIS.sub(r"\2", text)
    return text


def spoken(text: str) -> str:
    """A section's text as the engine should read it: Markdown ``#`` marks off heading lines."""
    return _MARKDOWN_HEADING.sub(lambda m: m.group(2).strip(), text)
