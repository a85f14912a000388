"""What a book is asked for, as the book domain reads it: the shapes of given chapters and of a
cast, and ``BookOptions``, the few options its functions read.

Why a Protocol and not ``scheduler.job_params.JobParams``: ``books`` sits below ``scheduler``
and may not import it. ``JobParams`` (a frozen dataclass) has these fields with these types, so
it is a ``BookOptions`` as it stands and every caller passes it unchanged; a bench or a test may
pass anything else that has them. The TypedDicts live here because ``JobParams`` stores them and
the book's rules (``books.chapters``, ``books.casting``, ``books.sources``) make them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, TypedDict


class GivenChapter(TypedDict):
    """A chapter the request (or the uploaded EPUB) named: its title and where it starts, as a
    character offset into the book's text (checked at intake: in order, inside the text)."""

    title: str
    start: int


class CastMember(TypedDict):
    voice: str
    aliases: list[str]  # other names the text calls the character by ("his wife")


class StoredCast(TypedDict):
    """A job's cast as ``books.casting.check_cast`` stored it."""

    narrator: str
    characters: dict[str, CastMember]
    dialogue: str  # quotes nobody in the cast is named for


class BookOptions(Protocol):
    """The options of a job that chaptering, casting, credits and pauses read (read-only)."""

    @property
    def speaker(self) -> str: ...

    @property
    def title(self) -> str | None: ...

    @property
    def author(self) -> str | None: ...

    @property
    def skip_front_matter(self) -> bool: ...  # Project Gutenberg header/footer, title page, contents

    @property
    def chapters(self) -> Sequence[GivenChapter] | None: ...  # else detected

    @property
    def pauses(self) -> Mapping[str, int] | None: ...  # {"sentence", "paragraph", "chapter"}: milliseconds

    @property
    def cast(self) -> StoredCast | None: ...
