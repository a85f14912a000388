"""Opening and closing credits for a delivered book, spoken by the book's own voice.

ACX wants the title, the author and the narrator said at the start and the end of every book.
The credits are written from the job's title, author and voice, planned as chapters of their own
(``Opening Credits`` first, ``Closing Credits`` last, each its own file in the delivery) and
billed nothing: the customer pays for the book's text, not for what lector adds to it.
"""

from __future__ import annotations

from typing import Final

from books.chapters import Section
from books.layout import Layout
from books.options import BookOptions

OPENING: Final = "Opening Credits"
CLOSING: Final = "Closing Credits"
_GAP: Final = "\n\n"


def narrators(params: BookOptions) -> str:
    """The voices, as a listener hears them named: the job's speaker, capitalised."""
    return params.speaker.replace("_", " ").title() or "a synthetic voice"


def texts(params: BookOptions) -> tuple[str, str]:
    title = params.title or "Untitled"
    author = params.author or "an unknown author"
    voice = narrators(params)
    opening = f"{title}. Written by {author}. Narrated by {voice}, a synthetic voice."
    closing = f"This has been {title}. Written by {author}. Narrated by {voice}, a synthetic voice. The end."
    return opening, closing


def with_credits(text: str, sections: list[Section], params: BookOptions) -> tuple[str, list[Section]]:
    """The text with the credits around it, and its sections with one chapter for each."""
    opening, closing = texts(params)
    shift = len(opening) + len(_GAP)
    book = params.title or "Book"
    body = [Section(s.title or book, s.start + shift, s.end + shift, True) for s in sections]
    closing_start = shift + len(text) + len(_GAP)
    whole = opening + _GAP + text + _GAP + closing
    return whole, [Section(OPENING, 0, len(opening)), *body, Section(CLOSING, closing_start, len(whole))]


def credit_chunks(layout: Layout, count: int) -> list[int]:
    """The chunks of the two credit chapters (a :class:`books.layout.Layout`'s marks)."""
    marks = sorted((m.chunk, m.title) for m in layout.chapters)
    chunks: list[int] = []
    for i, (first, title) in enumerate(marks):
        stop = marks[i + 1][0] if i + 1 < len(marks) else count
        if title in (OPENING, CLOSING) and (i == 0 or i == len(marks) - 1):
            chunks.extend(range(first, stop))
    return chunks
