"""An m4b's audiobook tags, written the way listeners' apps read them.

FFmpeg's MP4 muxer writes the chapters and the common tags (title, artist) but not what marks a
file as an audiobook: Apple Books and iTunes read the media kind (``stik`` 2, "Audiobook"), the
narrator as composer (``©wrt``) and the cover from ``covr``; Android players (Smart AudioBook
Player, Voice, BookPlayer's kin) read ``©nam``/``©alb``/``©ART``/``aART``, ``©gen`` and ``covr``.
mutagen rewrites the ``moov`` box in place and moves the chunk offsets with it, so the chapters
and the audio are untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from mutagen.mp4 import MP4, MP4Cover, MP4FreeForm

from speech.errors import AudioError

AUDIOBOOK_MEDIA_KIND: Final = 2  # iTunes "stik": Audiobook
COVER_FORMATS: Final = {"image/jpeg": MP4Cover.FORMAT_JPEG, "image/png": MP4Cover.FORMAT_PNG}


@dataclass(frozen=True, slots=True)
class AudiobookTags:
    title: str | None = None
    author: str | None = None
    narrators: Sequence[str] = field(default_factory=tuple)  # the voices that read it, narrator first
    cover: bytes | None = None
    cover_type: str | None = None  # image/jpeg or image/png


def cover_type(data: bytes) -> str | None:
    """The image type by its magic bytes (a name or a declared type may lie): JPEG, PNG or None."""
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    return None


def tag_m4b(path: Path, tags: AudiobookTags) -> None:
    """Write ``tags`` into the m4b at ``path`` (in place)."""
    try:
        audio = MP4(str(path))  # type: ignore[no-untyped-call]
    except Exception as exc:  # noqa: BLE001 - mutagen raises its own and OSError alike
        raise AudioError(f"cannot tag the m4b: {exc}") from None
    if audio.tags is None:
        audio.add_tags()  # type: ignore[no-untyped-call]
    assert audio.tags is not None
    if tags.title:
        audio.tags["©nam"] = [tags.title]
        audio.tags["©alb"] = [tags.title]
    if tags.author:
        audio.tags["©ART"] = [tags.author]
        audio.tags["aART"] = [tags.author]
    if tags.narrators:
        narrators = ", ".join(tags.narrators)
        audio.tags["©wrt"] = [narrators]  # Apple Books shows the composer as "Narrated by"
        audio.tags["----:com.apple.iTunes:NARRATOR"] = [MP4FreeForm(narrators.encode())]
    audio.tags["©gen"] = ["Audiobook"]
    audio.tags["stik"] = [AUDIOBOOK_MEDIA_KIND]
    if tags.cover and tags.cover_type in COVER_FORMATS:
        audio.tags["covr"] = [MP4Cover(tags.cover, imageformat=COVER_FORMATS[tags.cover_type])]
    audio.save()
