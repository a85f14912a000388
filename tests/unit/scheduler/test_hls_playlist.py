"""The live playlist's text: EVENT while running, ended when done, chapters marked, append-only."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from books.hls_index import StreamIndex
from scheduler.errors import SegmentNotFound
from scheduler.hls_playlist import playlist, render, segment_key
from scheduler.objects import hls_index_key, hls_init_key, hls_segment_key
from store.db.models import Job
from store.objects.local import LocalObjectStore
from store.status import JobStatus

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


@pytest.mark.parametrize(
    ("status", "complete", "chunks", "ended"),
    [
        (JobStatus.RUNNING, False, 4, False),
        (JobStatus.ASSEMBLING, True, 4, False),  # listed to the end, but the job is not done yet
        (JobStatus.SUCCEEDED, False, 4, False),  # the maker's last pass is still to come
        (JobStatus.SUCCEEDED, True, 4, True),
        (JobStatus.SUCCEEDED, False, 0, True),  # nothing to say: nothing will be listed
        (JobStatus.CANCELED, False, 4, True),  # what was made, and no more
        (JobStatus.FAILED, False, 4, True),
    ],
)
def test_a_playlist_ends_when_its_book_is_listed_or_its_job_stopped(
    tmp_path: Path, status: JobStatus, complete: bool, chunks: int, ended: bool
) -> None:
    objects = LocalObjectStore(tmp_path)
    job = Job(id=uuid.uuid4(), status=status, chunks_total=chunks)
    objects.put_bytes(hls_index_key(job.id), _index(2, complete=complete).to_json())
    text = playlist(objects, job)
    assert text.endswith("#EXT-X-ENDLIST\n") is ended
    assert "stream/1.m4s" in text


def test_only_listed_segments_have_addresses(tmp_path: Path) -> None:
    objects = LocalObjectStore(tmp_path)
    job_id = uuid.uuid4()
    with pytest.raises(SegmentNotFound):
        segment_key(objects, job_id, "init.mp4")  # nothing listed yet
    objects.put_bytes(hls_index_key(job_id), _index(2).to_json())
    assert segment_key(objects, job_id, "init.mp4") == hls_init_key(job_id)
    assert segment_key(objects, job_id, "1.m4s") == hls_segment_key(job_id, 1)
    for name in ("2.m4s", "01.m4s", "-1.m4s", "1.mp4", "source.txt", "1.m4s.json"):
        with pytest.raises(SegmentNotFound):
            segment_key(objects, job_id, name)


def test_ffmpeg_s_hls_player_plays_a_playlist_and_its_segments(tmp_path: Path) -> None:
    """An independent HLS client (FFmpeg's demuxer, through PyAV) reads the playlist, the init
    segment and every media segment, to the last sample."""
    import av
    import numpy as np

    from books.hls_index import KnownAudio, next_segments
    from speech.audio.aac_frames import POST_ROLL, PRE_ROLL, encode_stretch
    from speech.audio.fmp4 import init_segment, media_segment

    audio = (0.3 * np.sin(2 * np.pi * 220 * np.arange(RATE * 20) / RATE)).astype(np.float32)
    known = KnownAudio(RATE, len(audio), len(audio), [("A", 0), ("B", RATE * 9)])
    (tmp_path / "stream").mkdir()
    index = StreamIndex(RATE)
    for number, (start, stop) in enumerate(next_segments(0, known)):
        lo, hi = max(0, start - PRE_ROLL), min(len(audio), stop + POST_ROLL)
        stretch = encode_stretch(audio[lo:hi], lo, start, stop, RATE)
        if number == 0:
            (tmp_path / "stream" / "init.mp4").write_bytes(init_segment(RATE, stretch.config))
        (tmp_path / "stream" / f"{number}.m4s").write_bytes(media_segment(number + 1, start, stretch.samples))
        index = index.with_segment(start, stop, known.chapters, last=stop == len(audio))
    (tmp_path / "stream.m3u8").write_text(render(index, ended=True))
    options = {"allowed_extensions": "ALL", "allowed_segment_extensions": "ALL", "extension_picky": "0"}
    with av.open(str(tmp_path / "stream.m3u8"), options=options) as container:
        decoded = np.concatenate([frame.to_ndarray().reshape(-1) for frame in container.decode(audio=0)])
    assert len(index.segments) == 4 and len(audio) <= len(decoded) < len(audio) + 1024
    steady = slice(RATE, len(audio) - RATE)
    assert float(np.sqrt(np.mean((decoded[steady] - audio[steady]) ** 2))) < 0.02  # the tone, in place
