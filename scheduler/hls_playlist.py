"""A job's live HLS playlist and its segments, as the jobs API serves them.

The playlist is rendered from the segment maker's index (``books.hls_index``) on every
request, so it is exactly what is listed: an EVENT playlist while the job runs, ended
(``#EXT-X-ENDLIST``) once the book's last segment is listed, or once the job failed or was
canceled (with what was made). Each rendering starts with the previous one: the header never
changes, and the init segment's ``#EXT-X-MAP`` comes just before the first segment.

Chapters are marked with a tag of lector's own before a chapter's first segment (HLS clients
ignore tags they do not know; ``#EXT-X-DATERANGE`` would need a programme date and time):

    #EXT-X-LECTOR-CHAPTER:INDEX=1,START=62.125,TITLE="Chapter Two"

``START`` is in seconds of the book's timeline; ``TITLE`` is the chapter's title with double
quotes made single and control characters made spaces (an HLS quoted string can hold neither).
"""

from __future__ import annotations

import re
import uuid
from typing import Final

from books.hls_index import TARGET_DURATION_S, StreamIndex
from scheduler.errors import SegmentNotFound
from scheduler.hls import read_index
from scheduler.objects import hls_init_key, hls_segment_key
from store.db.models import Job
from store.objects.base import ObjectStore
from store.status import JobStatus

CONTENT_TYPE: Final = "application/vnd.apple.mpegurl"
CHAPTER_TAG: Final = "#EXT-X-LECTOR-CHAPTER"
INIT_NAME: Final = "init.mp4"
_SEGMENT_NAME: Final = re.compile(r"(0|[1-9][0-9]{0,8})\.m4s")
_UNQUOTABLE: Final = re.compile(r"[\x00-\x1f\x7f]")


def segment_uri(number: int) -> str:
    """A segment's address relative to the playlist's (``/v1/jobs/{id}/stream.m3u8``)."""
    return f"stream/{number}.m4s"


def _title(text: str) -> str:
    return _UNQUOTABLE.sub(" ", text.replace('"', "'"))


def render(index: StreamIndex | None, *, ended: bool) -> str:
    """The playlist text for ``index`` (None: nothing made yet)."""
    lines = [
        "#EXTM3U",
        "#EXT-X-VERSION:7",
        f"#EXT-X-TARGETDURATION:{TARGET_DURATION_S}",
        "#EXT-X-MEDIA-SEQUENCE:0",
        "#EXT-X-PLAYLIST-TYPE:EVENT",
        "#EXT-X-INDEPENDENT-SEGMENTS",
    ]
    if index is not None and index.segments:
        lines.append(f'#EXT-X-MAP:URI="stream/{INIT_NAME}"')
        by_segment: dict[int, list[str]] = {}
        for number, chapter in enumerate(index.chapters):
            by_segment.setdefault(chapter.segment, []).append(
                f'{CHAPTER_TAG}:INDEX={number},START={chapter.start / index.rate:.3f},TITLE="{_title(chapter.title)}"'
            )
        for number, (start, stop) in enumerate(index.segments):
            lines += by_segment.get(number, [])
            lines += [f"#EXTINF:{(stop - start) / index.rate:.6f},", segment_uri(number)]
    if ended:
        lines.append("#EXT-X-ENDLIST")
    return "\n".join(lines) + "\n"


def playlist(objects: ObjectStore, job: Job) -> str:
    """The job's playlist now."""
    index = read_index(objects, job.id)
    complete = index is not None and index.complete
    ended = job.is_terminal and (job.status != JobStatus.SUCCEEDED or complete or job.chunks_total == 0)
    return render(index, ended=ended)


def segment_key(objects: ObjectStore, job_id: uuid.UUID, name: str) -> str:
    """The object of a listed segment (``init.mp4`` or ``{n}.m4s``); SegmentNotFound for any
    other name, or a segment not listed yet."""
    index = read_index(objects, job_id)
    listed = len(index.segments) if index is not None else 0
    if name == INIT_NAME and listed:
        return hls_init_key(job_id)
    match = _SEGMENT_NAME.fullmatch(name)
    if match is None or int(match.group(1)) >= listed:
        raise SegmentNotFound(f"no segment {name[:40]} in job {job_id}'s playlist")
    return hls_segment_key(job_id, int(match.group(1)))
