"""Listening while a book renders, on a lector of its own (API, a synth worker, a cpu worker, real
Redis, PostgreSQL, Swift and the joe voice): the job's HLS playlist is read while the job runs
and after; it only grows, lists segments before the job ends, ends with ``#EXT-X-ENDLIST``,
marks each chapter where the book's timestamps put it, and its segments decode (PyAV) to the
book's duration. Foreign, unknown and unlisted addresses are the contract's 404s."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from pathlib import Path

import av
import httpx
import pytest

from tests.fixtures.stack import Stack, launch, make_key
from tests.support.books import excerpt

pytestmark = [pytest.mark.integration, pytest.mark.slow]
TERMINAL = ("succeeded", "failed", "canceled")
CHAPTERS = [
    {"title": "The Neighbourhood", "text": excerpt(900)},
    {"title": 'Mr. "Bingley"', "text": excerpt(700, "Mr. Bennet was among the earliest")},
    {"title": "The Assembly", "text": excerpt(500, "Not all that Mrs. Bennet")},
]


@pytest.fixture(scope="module")
def live_stack(stack_env: dict[str, str], own_redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One chunk a batch and one batch queued at a time, so the book is done a chunk at a time;
    a cpu worker of its own, so segments are made while the synth worker goes on."""
    env = {**stack_env, "LECTOR_REDIS_URL": own_redis_url, "LECTOR_JOB_BATCH_CHARS": "600", "LECTOR_ACCOUNT_BATCH_WINDOW": "1"}
    stack = launch(env, tmp_path_factory.mktemp("live-logs"))
    try:
        stack.kill("worker1")
        stack.start_worker("synth1", queues="synth")
        stack.start_worker("cpu1", queues="cpu")
        yield stack
    finally:
        stack.stop_all()


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _segments(playlist: str) -> list[tuple[float, str]]:
    lines = playlist.splitlines()
    return [(float(line[8:].rstrip(",")), lines[i + 1]) for i, line in enumerate(lines) if line.startswith("#EXTINF:")]


def _decode(data: bytes) -> tuple[int, int, int]:
    """Sample rate, the packets' summed durations, and the samples decoded."""
    with av.open(io.BytesIO(data)) as container:
        rate = container.streams.audio[0].sample_rate
        durations = sum(int(p.duration or 0) for p in container.demux(audio=0) if p.size)
    with av.open(io.BytesIO(data)) as container:
        decoded = sum(frame.samples for frame in container.decode(audio=0))
    return rate, durations, decoded


def test_a_running_job_is_heard_from_a_playlist_that_only_grows(live_stack: Stack, pg_url: str, tmp_path: Path) -> None:
    key = make_key(pg_url, "live")
    api = live_stack.api_url
    submitted = httpx.post(
        f"{api}/v1/jobs", headers=_auth(key), timeout=30,
        json={"chapters": CHAPTERS, "speaker": "joe", "format": "wav", "title": "Live"},
    )
    assert submitted.status_code == 202, submitted.text
    job_id = submitted.json()["id"]
    playlist_url = f"{api}/v1/jobs/{job_id}/stream.m3u8"

    seen: list[str] = []
    listed_while_running = 0
    deadline = time.monotonic() + 300
    while True:
        status = httpx.get(f"{api}/v1/jobs/{job_id}", headers=_auth(key), timeout=30).json()["status"]
        answer = httpx.get(playlist_url, headers=_auth(key), timeout=30)
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith("application/vnd.apple.mpegurl")
        text = answer.text
        if not seen or text != seen[-1]:
            seen.append(text)
        if status in ("queued", "planning", "running"):
            assert "#EXT-X-ENDLIST" not in text
            listed_while_running = max(listed_while_running, len(_segments(text)))
        if "#EXT-X-ENDLIST" in text:
            break
        assert status not in ("failed", "canceled"), live_stack.log_text("synth1")[-3000:]
        assert time.monotonic() < deadline, (status, text, live_stack.log_text("cpu1")[-3000:])
        time.sleep(0.25)
    job = httpx.get(f"{api}/v1/jobs/{job_id}", headers=_auth(key), timeout=30).json()
    assert job["status"] == "succeeded"

    for earlier, later in zip(seen, seen[1:], strict=False):
        assert later.startswith(earlier.removesuffix("#EXT-X-ENDLIST\n"))  # the playlist only grows
    assert "#EXT-X-PLAYLIST-TYPE:EVENT" in seen[0]
    assert listed_while_running > 0, "no segment was listed before the job ended"
    final = seen[-1]
    segments = _segments(final)
    assert len(segments) >= listed_while_running

    # Chapter marks where the finished book's timestamps put each chapter.
    marks = re.findall(r'#EXT-X-LECTOR-CHAPTER:INDEX=(\d+),START=([0-9.]+),TITLE="([^"]*)"', final)
    stamps = httpx.get(f"{api}/v1/jobs/{job_id}/timestamps.json", headers=_auth(key), timeout=30).json()["chapters"]
    assert [title for _, _, title in marks] == [c["title"].replace('"', "'") for c in CHAPTERS]
    assert [float(start) for _, start, _ in marks] == pytest.approx([c["start"] for c in stamps], abs=0.002)

    # Every segment decodes, with the init, on its own and all joined; the durations are the book's.
    init = httpx.get(f"{api}/v1/jobs/{job_id}/stream/init.mp4", headers=_auth(key), timeout=30)
    assert init.status_code == 200 and init.headers["content-type"] == "audio/mp4"
    parts = []
    for duration, uri in segments:
        part = httpx.get(f"{api}/v1/jobs/{job_id}/{uri}", headers=_auth(key), timeout=30)
        assert part.status_code == 200, (uri, part.text)
        rate, durations, decoded = _decode(init.content + part.content)
        assert durations == pytest.approx(duration * rate, abs=1)
        assert decoded >= durations
        parts.append(part.content)
    rate, durations, decoded = _decode(init.content + b"".join(parts))
    assert sum(d for d, _ in segments) == pytest.approx(durations / rate, abs=1e-3)
    assert durations / rate == pytest.approx(job["durationSeconds"], abs=0.01)

    # The contract's 404s: another account's job, no such job, a segment not listed, no such name.
    stranger = make_key(pg_url, "stranger")
    for url, headers, message in [
        (playlist_url, _auth(stranger), "job not found"),
        (f"{api}/v1/jobs/{job_id}/stream/0.m4s", _auth(stranger), "job not found"),
        (f"{api}/v1/jobs/00000000-0000-4000-8000-000000000000/stream.m3u8", _auth(key), "job not found"),
        (f"{api}/v1/jobs/{job_id}/stream/{len(segments)}.m4s", _auth(key), "segment not found"),
        (f"{api}/v1/jobs/{job_id}/stream/source.txt", _auth(key), "segment not found"),
        (f"{api}/v1/jobs/{job_id}/stream/-1.m4s", _auth(key), "segment not found"),
        (f"{api}/v1/jobs/{job_id}/stream/..%2Fsource.txt", _auth(key), "not found"),  # no route has a slash there
    ]:
        answer = httpx.get(url, headers=headers, timeout=30)
        assert (answer.status_code, answer.text) == (404, message), url
    assert httpx.get(playlist_url, timeout=30).status_code == 401
