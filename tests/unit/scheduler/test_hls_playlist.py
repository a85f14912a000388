"""The live playlist's text: EVENT while running, ended when done, chapters marked, append-only."""

from __future__ import annotations

from scheduler.hls_index import StreamIndex
from scheduler.hls_playlist import render

RATE = 24000


def _index(count: int, *, complete: bool = False) -> StreamIndex:
    index = StreamIndex(RATE)
    chapters = [("Opening", 0), ('The "Second" one\nlong', 2 * 143360)]
    for n in range(count):
        index = index.with_segment(n * 143360, (n + 1) * 143360, chapters, last=complete and n == count - 1)
    return index


def test_nothing_made_yet_is_an_event_playlist_without_segments() -> None:
    text = render(None, ended=False)
    assert text.startswith("#EXTM3U\n")
    assert "#EXT-X-PLAYLIST-TYPE:EVENT" in text
    assert "#EXT-X-MAP" not in text and "#EXTINF" not in text and "#EXT-X-ENDLIST" not in text


def test_segments_with_their_init_and_chapter_marks() -> None:
    text = render(_index(4, complete=True), ended=True)
    lines = text.splitlines()
    assert lines.count('#EXT-X-MAP:URI="stream/init.mp4"') == 1
    assert [line for line in lines if line.startswith("stream/")] == [f"stream/{n}.m4s" for n in range(4)]
    assert [line for line in lines if line.startswith("#EXTINF:")] == ["#EXTINF:5.973333,"] * 4
    marks = [line for line in lines if line.startswith("#EXT-X-LECTOR-CHAPTER:")]
    assert marks == [
        '#EXT-X-LECTOR-CHAPTER:INDEX=0,START=0.000,TITLE="Opening"',
        "#EXT-X-LECTOR-CHAPTER:INDEX=1,START=11.947,TITLE=\"The 'Second' one long\"",
    ]
    assert lines.index(marks[1]) == lines.index("stream/1.m4s") + 1  # just before segment 2
    assert lines[-1] == "#EXT-X-ENDLIST"


def test_every_rendering_starts_with_the_one_before() -> None:
    earlier = render(None, ended=False)
    for count in range(1, 6):
        later = render(_index(count), ended=False)
        assert later.startswith(earlier)
        earlier = later
    assert render(_index(5, complete=True), ended=True).startswith(earlier)
