"""Audiobook tags in an m4b, read back as Apple Books (mutagen's view of the atoms) and FFmpeg
(PyAV) see them; the chapters the encoder wrote survive the tagging."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
from mutagen.mp4 import MP4, MP4Cover

from speech.audio import Chapter, Metadata
from speech.audio.files import open_file_encoder
from speech.audio.m4b import AudiobookTags, cover_type, tag_m4b
from tests.fixtures.epub import png

RATE = 24000


def _m4b(path: Path) -> Path:
    chapters = (Chapter("The Walk", 0.0), Chapter("The Rain", 1.0))
    encoder = open_file_encoder("m4b", RATE, path, metadata=Metadata(title="A Cast Book", chapters=chapters),
                                total_seconds=2.0)
    encoder.write((0.1 * np.sin(np.arange(2 * RATE) * 0.05)).astype(np.float32))
    encoder.finish()
    return path


def test_an_m4b_carries_title_author_narrators_cover_and_the_audiobook_kind(tmp_path: Path) -> None:
    path = _m4b(tmp_path / "book.m4b")
    cover = png()
    tag_m4b(path, AudiobookTags("A Cast Book", "Ann Author", ["joe", "nora"], cover, cover_type(cover)))
    tags = MP4(str(path)).tags
    assert tags is not None
    assert tags["©nam"] == ["A Cast Book"] and tags["©alb"] == ["A Cast Book"]
    assert tags["©ART"] == ["Ann Author"] and tags["aART"] == ["Ann Author"]
    assert tags["©wrt"] == ["joe, nora"] and bytes(tags["----:com.apple.iTunes:NARRATOR"][0]) == b"joe, nora"
    assert tags["stik"] == [2] and tags["©gen"] == ["Audiobook"]
    assert bytes(tags["covr"][0]) == cover and tags["covr"][0].imageformat == MP4Cover.FORMAT_PNG
    with av.open(str(path)) as container:
        assert [c["metadata"]["title"] for c in container.chapters()] == ["The Walk", "The Rain"]
        assert container.metadata["composer"] == "joe, nora" and container.metadata["title"] == "A Cast Book"
        frames = sum(f.samples for f in container.decode(audio=0))
    assert abs(frames - 2 * RATE) < RATE // 10  # the audio is whole after the moov box moved


def test_no_cover_no_narrator_still_an_audiobook(tmp_path: Path) -> None:
    path = _m4b(tmp_path / "plain.m4b")
    tag_m4b(path, AudiobookTags(title="Plain"))
    tags = MP4(str(path)).tags
    assert tags is not None and "covr" not in tags and "©wrt" not in tags and tags["stik"] == [2]


def test_cover_types_are_told_by_their_bytes() -> None:
    assert cover_type(png()) == "image/png"
    assert cover_type(b"\xff\xd8\xff\xe0rest") == "image/jpeg"
    assert cover_type(b"GIF89a") is None
