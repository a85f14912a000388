"""The job API over real HTTP with the real stack and voice: uploads (.md, .epub), chapters and
metadata in m4b and mp3, subtitles and timings (account-scoped), pagination, cancel (stops and
bills nothing more), retention (410 after expiry) and the request checks."""

from __future__ import annotations

import io
import json
import re
import time
import uuid
import zipfile
from typing import Any

import av
import httpx
import pytest
from mutagen.mp4 import MP4
from sqlalchemy import text

from scheduler import retention
from store.db import accounts, keys
from store.db.session import make_engine, make_sessionmaker, session_scope
from store.objects import S3ObjectStore

pytestmark = [pytest.mark.integration, pytest.mark.slow]
TERMINAL = ("succeeded", "failed", "canceled")


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _new_key(pg_url: str) -> str:
    engine = make_engine(pg_url)
    try:
        with session_scope(make_sessionmaker(engine)) as session:
            account = accounts.create_account(session=session, name=f"jobs-{uuid.uuid4().hex[:8]}")
            return keys.create_key(session=session, account_id=account.id)[1]
    finally:
        engine.dispose()


def _wait(stack, key: str, job_id: str, timeout_s: float = 240) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while True:
        job = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}", headers=_auth(key), timeout=30).json()
        if job["status"] in TERMINAL:
            return job
        assert time.monotonic() < deadline, (job, stack.log_text("worker1")[-3000:])
        time.sleep(0.5)


def _download(stack, key: str, job_id: str) -> bytes:  # type: ignore[no-untyped-def]
    redirect = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}/audio", headers=_auth(key), timeout=30)
    assert redirect.status_code == 307, redirect.text
    audio = httpx.get(redirect.headers["location"], timeout=60)
    assert audio.status_code == 200
    return audio.content


MARKDOWN = """# The Small Book

## Morning

The sun rose over the hill. Birds began to sing in the old oak tree, and the farmer walked out
to see his fields. He was happy with what he saw, and he went back inside for breakfast.

## Evening

The sun went down behind the hill. The farmer sat by the fire with a cup of tea, and he listened
to the wind outside. Soon he was asleep in his chair, and the fire burned low.
"""


def test_markdown_upload_becomes_a_chaptered_m4b_with_subtitles_for_its_account_only(  # type: ignore[no-untyped-def]
    stack, api_key: str, pg_url: str
) -> None:
    fields = {
        "speaker": "joe", "format": "m4b", "samplingRate": "22050", "title": "The Small Book",
        "author": "A. Farmer", "skipFrontMatter": "true",
    }
    files = {"file": ("book.md", MARKDOWN.encode(), "text/markdown")}
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), data=fields, files=files, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job = _wait(stack, api_key, submitted.json()["id"])
    assert job["status"] == "succeeded", job
    assert (job["format"], job["samplingRate"], job["title"]) == ("m4b", 22050, "The Small Book")

    audio = _download(stack, api_key, job["id"])
    with av.open(io.BytesIO(audio)) as container:
        marks = container.chapters()
        tags = dict(container.metadata)
        assert container.streams.audio[0].rate == 22050
    assert [m["metadata"]["title"] for m in marks] == ["Morning", "Evening"]
    assert (tags["title"], tags["artist"]) == ("The Small Book", "A. Farmer")
    atoms = MP4(io.BytesIO(audio)).tags  # no cover uploaded and none in a Markdown book: still an audiobook
    assert atoms is not None and "covr" not in atoms
    assert (atoms["stik"], atoms["©wrt"], atoms["©gen"]) == ([2], ["joe"], ["Audiobook"])

    stamps = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/timestamps.json", headers=_auth(api_key)).json()
    assert [c["title"] for c in stamps["chapters"]] == ["Morning", "Evening"]
    said = " ".join(s["text"] for s in stamps["sentences"])
    assert said.startswith("Morning The sun rose over the hill.") and said.endswith("the fire burned low.")
    assert "#" not in said and "Small Book" not in said  # the book's title line was front matter
    starts = [s["start"] for s in stamps["sentences"]]
    assert starts == sorted(starts) and stamps["sentences"][-1]["end"] <= job["durationSeconds"]

    srt = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/subtitles.srt", headers=_auth(api_key))
    vtt = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/subtitles.vtt", headers=_auth(api_key))
    assert srt.status_code == vtt.status_code == 200
    assert vtt.text.startswith("WEBVTT\n\n") and vtt.headers["content-type"].startswith("text/vtt")
    cues = re.findall(r"\d+\n(\S+) --> (\S+)\n((?:.+\n)+)\n", srt.text)
    assert len(cues) >= len(stamps["sentences"])
    for _, _, body in cues:
        lines = body.strip("\n").split("\n")
        assert len(lines) <= 2 and all(len(line) <= 42 for line in lines)
    assert "The sun rose over the hill." in srt.text

    stranger = _new_key(pg_url)
    for path in ("", "/audio", "/subtitles.srt", "/subtitles.vtt", "/timestamps.json"):
        response = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}{path}", headers=_auth(stranger))
        assert (response.status_code, response.text) == (404, "job not found"), path


def _epub() -> bytes:
    page = '<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>{t}</h1><p>{p}</p></body></html>'
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr(
            "META-INF/container.xml",
            '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="content.opf"/></rootfiles></container>',
        )
        z.writestr(
            "content.opf",
            '<package xmlns="http://www.idpf.org/2007/opf"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            "<dc:title>Two Pages</dc:title><dc:creator>E. Pub</dc:creator></metadata><manifest>"
            '<item id="a" href="a.xhtml" media-type="application/xhtml+xml"/>'
            '<item id="b" href="b.xhtml" media-type="application/xhtml+xml"/></manifest>'
            '<spine><itemref idref="a"/><itemref idref="b"/></spine></package>',
        )
        z.writestr("a.xhtml", page.format(t="First Page", p="A short first page of text."))
        z.writestr("b.xhtml", page.format(t="Second Page", p="And a short second one."))
    return buffer.getvalue()


def test_epub_upload_to_mp3_takes_its_title_author_and_chapters(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    """In chapter loudness scope: its chapters are measured and encoded by ``scheduler.progressive_assembly``."""
    files = {"file": ("two.epub", _epub(), "application/epub+zip")}
    form = {"speaker": "joe", "format": "mp3", "loudnessScope": "chapter"}
    submitted = httpx.post(
        f"{stack.api_url}/v1/jobs", headers=_auth(api_key), data=form, files=files,
        timeout=30,
    )
    assert submitted.status_code == 202, submitted.text
    job = _wait(stack, api_key, submitted.json()["id"])
    assert job["status"] == "succeeded", job
    data = _download(stack, api_key, job["id"])
    assert data[:3] == b"ID3"
    with av.open(io.BytesIO(data)) as container:
        assert (container.metadata["title"], container.metadata["artist"]) == ("Two Pages", "E. Pub")
    stamps = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/timestamps.json", headers=_auth(api_key)).json()
    assert [c["title"] for c in stamps["chapters"]] == ["First Page", "Second Page"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"text": "Hi.", "speaker": "joe", "format": "aiff"}, "format must be one of: mp3, wav, opus, flac, m4b"),
        ({"text": "Hi.", "speaker": "joe", "chapters": [{"title": "A", "start": 99}]},
         "each chapter's start must be a character offset inside the text"),
        ({"text": "Hi.", "speaker": "joe", "skipFrontMatter": "yes"}, "skipFrontMatter must be a boolean"),
        ({"text": "Hi.", "speaker": "joe", "loudness": -5}, "loudness must be a number of LUFS from -30 to -12"),
        ({"text": "Hi.", "speaker": "joe", "loudness": "loud"}, "loudness must be a number of LUFS from -30 to -12"),
        ({"text": "Hi.", "speaker": "joe", "loudnessScope": "track"}, "loudnessScope must be book or chapter"),
        ({"text": "Hi.", "speaker": "joe", "pauses": {"chapter": -1}},
         "pauses must be an object of milliseconds (0-10000) for sentence, paragraph and chapter"),
        ({"text": "Hi.", "speaker": "joe", "samplingRate": 100}, "samplingRate must be between 4000 and 96000"),
        ({"speaker": "joe"}, "text is required"),
        ({"text": "a" * 2_000_001, "speaker": "joe"}, "text is too long"),
    ],
)
def test_bad_job_requests_are_400_with_a_clear_message(stack, api_key: str, body: dict[str, Any], message: str) -> None:  # type: ignore[no-untyped-def]
    response = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), json=body, timeout=60)
    assert (response.status_code, response.text) == (400, message)


def test_bad_uploads_are_400(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    url = f"{stack.api_url}/v1/jobs"
    pdf = httpx.post(url, headers=_auth(api_key), data={"speaker": "joe"}, files={"file": ("b.pdf", b"%PDF", "application/pdf")})
    assert (pdf.status_code, pdf.text) == (400, "file must be a .txt, .md, .ssml or .epub file")
    both = httpx.post(url, headers=_auth(api_key), data={"speaker": "joe", "text": "x"}, files={"file": ("b.txt", b"Hi.", "text/plain")})
    assert (both.status_code, both.text) == (400, "send either text or file, not both")
    big = "Word. " * 340_000
    too_long = httpx.post(url, headers=_auth(api_key), data={"speaker": "joe"}, files={"file": ("b.txt", big.encode(), "text/plain")}, timeout=60)
    assert (too_long.status_code, too_long.text) == (400, "text is too long")


def test_jobs_list_is_the_accounts_own_newest_first_paginated(stack, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    key = _new_key(pg_url)
    ids = []
    for word in ("One.", "Two.", "Three."):
        response = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(key), json={"text": word, "speaker": "joe"})
        ids.append(response.json()["id"])
    first = httpx.get(f"{stack.api_url}/v1/jobs", headers=_auth(key), params={"limit": 2}).json()
    assert [j["id"] for j in first["jobs"]] == ids[::-1][:2] and first["hasMore"] is True
    rest = httpx.get(f"{stack.api_url}/v1/jobs", headers=_auth(key), params={"limit": 2, "offset": 2}).json()
    assert [j["id"] for j in rest["jobs"]] == ids[:1] and rest["hasMore"] is False
    assert httpx.get(f"{stack.api_url}/v1/jobs", headers=_auth(_new_key(pg_url))).json()["jobs"] == []
    for job_id in ids:
        _wait(stack, key, job_id)


def _usage(pg_url: str, job_id: str) -> int:
    engine = make_engine(pg_url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM usage WHERE job_id = :j"), {"j": job_id}).scalar_one())
    finally:
        engine.dispose()


def test_cancel_stops_the_work_within_seconds_and_nothing_more_is_billed(stack, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    key = _new_key(pg_url)
    sentence = "The long road wound through the quiet valley towards the distant town. "
    # ~25,000 characters: seven synthesize tasks, the first of which the wait below times.
    book = "\n\n".join(sentence * 3 for _ in range(120))
    submitted = time.monotonic()
    job_id = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(key), json={"text": book, "speaker": "joe"}).json()["id"]
    deadline = time.monotonic() + 180
    while (job := httpx.get(f"{stack.api_url}/v1/jobs/{job_id}", headers=_auth(key)).json())["progress"]["chunksDone"] == 0:
        assert time.monotonic() < deadline and job["status"] not in TERMINAL, job
        time.sleep(0.2)
    first_task_s = time.monotonic() - submitted  # planning and the first task's engine calls, here and now
    canceled = httpx.delete(f"{stack.api_url}/v1/jobs/{job_id}", headers=_auth(key))
    assert canceled.status_code == 200 and canceled.json()["status"] == "canceled"
    billed_at_cancel = _usage(pg_url, job_id)
    done_at_cancel = canceled.json()["progress"]["chunksDone"]
    assert billed_at_cancel == done_at_cancel < canceled.json()["progress"]["chunksTotal"]

    # The worker is free again within seconds: a small job behind the canceled one finishes soon.
    # Soon in this machine's own time: freed, the worker ends the engine call it is in (a third
    # of a task) and renders the small job; had it gone on with the book, the small job would
    # wait for six more tasks, each as long as the first. A bound in wall seconds would measure
    # the CPU instead (a slow one, busy with the suite's other workers, took 35 s).
    began = time.monotonic()
    small = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(key), json={"text": "Done now.", "speaker": "joe"}).json()
    assert _wait(stack, key, small["id"], timeout_s=180)["status"] == "succeeded"
    waited = time.monotonic() - began
    assert waited < 2 * first_task_s + 5, (waited, first_task_s)
    after = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}", headers=_auth(key)).json()
    assert after["status"] == "canceled"
    assert after["progress"]["chunksDone"] == done_at_cancel
    assert _usage(pg_url, job_id) == billed_at_cancel
    assert httpx.get(f"{stack.api_url}/v1/jobs/{job_id}/audio", headers=_auth(key)).status_code == 409


def test_expired_audio_is_410_and_the_job_row_stays(stack, stack_env: dict[str, str], pg_url: str) -> None:  # type: ignore[no-untyped-def]
    key = _new_key(pg_url)
    job_id = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(key), json={"text": "Soon gone.", "speaker": "joe"}).json()["id"]
    assert _wait(stack, key, job_id)["status"] == "succeeded"
    objects = S3ObjectStore(
        bucket=stack_env["LECTOR_S3_BUCKET"], endpoint_url=stack_env["LECTOR_S3_ENDPOINT_URL"],
        region=stack_env["LECTOR_S3_REGION"], access_key_id=stack_env["LECTOR_S3_ACCESS_KEY_ID"],
        secret_access_key=stack_env["LECTOR_S3_SECRET_ACCESS_KEY"],
    )
    assert list(objects.iter_keys(f"jobs/{job_id}/"))
    engine = make_engine(pg_url)
    sessions = make_sessionmaker(engine)
    try:
        with session_scope(sessions) as session:
            session.execute(text("UPDATE jobs SET finished_at = now() - interval '31 days' WHERE id = :j"), {"j": job_id})

        def scoped():  # type: ignore[no-untyped-def]
            return session_scope(sessions)

        assert retention.expire_all(sessions=scoped, objects=objects, retention_days=30) >= 1
    finally:
        engine.dispose()
    assert list(objects.iter_keys(f"jobs/{job_id}/")) == []
    for path in ("/audio", "/subtitles.srt", "/timestamps.json"):
        response = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}{path}", headers=_auth(key))
        assert (response.status_code, response.text) == (410, "job audio has expired"), path
    job = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}", headers=_auth(key)).json()
    assert job["status"] == "succeeded" and job["expired"] is True and job["characters"] == len("Soon gone.")
    assert json.loads(json.dumps(job))["durationSeconds"] > 0


def test_idempotency_key_replay_is_202_and_another_body_is_409(stack, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    key = _new_key(pg_url)
    headers = {**_auth(key), "Idempotency-Key": uuid.uuid4().hex}
    body = {"text": "One short sentence to render.", "speaker": "joe", "format": "wav"}
    first = httpx.post(f"{stack.api_url}/v1/jobs", headers=headers, json=body, timeout=30)
    replay = httpx.post(f"{stack.api_url}/v1/jobs", headers=headers, json=body, timeout=30)
    assert (first.status_code, replay.status_code) == (202, 202)
    assert replay.json()["id"] == first.json()["id"]
    assert replay.headers.get("idempotent-replayed") == "true" and "idempotent-replayed" not in first.headers
    other = httpx.post(f"{stack.api_url}/v1/jobs", headers=headers, json={**body, "text": "A different text."}, timeout=30)
    assert (other.status_code, other.text) == (409, "Idempotency-Key was already used with a different request body")
    listed = httpx.get(f"{stack.api_url}/v1/jobs", headers=_auth(key), timeout=30).json()
    jobs = listed["jobs"] if isinstance(listed, dict) else listed
    assert len(jobs) == 1
