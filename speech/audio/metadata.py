"""Descriptive tags and chapter marks for batch files, and how each container spells them.

FFmpeg maps its generic keys (``title``, ``artist``, ``album``...) onto ID3v2 frames (TIT2,
TPE1, TALB), MP4 atoms (©nam, ©ART, ©alb), Vorbis comments and Matroska tags, so one mapping
serves every container; only the audiobook convention (author as artist and album artist,
genre "Audiobook") is ours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from av.container.core import Chapter as AvChapter

_CHAPTER_TIME_BASE = Fraction(1, 1000)


@dataclass(frozen=True, slots=True)
class Chapter:
    """A chapter mark: ``start``/``end`` in seconds from the start of the file."""

    title: str
    start: float
    end: float | None = None  # None: until the next chapter (or the end of the file)


@dataclass(frozen=True, slots=True)
class Metadata:
    """Tags written into a batch file. Empty fields are left out."""

    title: str | None = None
    author: str | None = None  # written as artist and album artist
    album: str | None = None  # defaults to the title
    genre: str | None = None
    comment: str | None = None
    language: str | None = None  # BCP 47 tag
    chapters: Sequence[Chapter] = field(default_factory=tuple)

    @classmethod
    def from_mapping(cls, tags: Mapping[str, str | None]) -> Metadata:
        """From plain tags (``title``, ``author`` or ``artist``, ``album``, ``genre``, ``comment``,
        ``language``), as a job's parameters carry them. Unknown keys are ignored."""
        return cls(
            title=tags.get("title"),
            author=tags.get("author") or tags.get("artist"),
            album=tags.get("album"),
            genre=tags.get("genre"),
            comment=tags.get("comment"),
            language=tags.get("language"),
        )

    def tags(self) -> dict[str, str]:
        """FFmpeg's generic metadata keys for this work."""
        raw = {
            "title": self.title,
            "artist": self.author,
            "album_artist": self.author,
            "album": self.album or self.title,
            "genre": self.genre,
            "comment": self.comment,
            "language": self.language,
        }
        return {k: v for k, v in raw.items() if v}


def chapter_dicts(chapters: Sequence[Chapter], total_seconds: float) -> list[AvChapter]:
    """Chapters in the shape PyAV's ``Container.set_chapters`` takes (millisecond time base).

    Open ends run to the next chapter's start or to the end of the file; chapters must be in order.
    """
    ordered = list(chapters)
    out: list[AvChapter] = []
    for i, ch in enumerate(ordered):
        if i and ch.start < ordered[i - 1].start:
            raise ValueError("chapters must be in order of their start")
        end = ch.end
        if end is None:
            end = ordered[i + 1].start if i + 1 < len(ordered) else total_seconds
        out.append(
            {
                "id": i + 1,
                "start": int(round(ch.start * 1000)),
                "end": int(round(max(end, ch.start) * 1000)),
                "time_base": _CHAPTER_TIME_BASE,
                "metadata": {"title": ch.title},
            }
        )
    return out
