"""A book job with a cast through the real stack (API, worker, PostgreSQL, Redis, Swift S3): the
narration in joe's VITS voice, Elizabeth in nora's Kokoro voice, mixed into one file; the
timestamps and subtitles say who spoke; an EPUB 2 or 3 upload becomes an m4b with its chapters,
cover and narrators, read back with mutagen and PyAV."""

from __future__ import annotations

import json
from typing import Any

import av
import httpx
import pytest
from mutagen.mp4 import MP4

from tests.e2e.test_jobs_api import _auth, _wait
from tests.fixtures.epub import CHAPTERS, build_epub, png

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BOOK = "The rain had stopped.\n\n“Shall we walk to the village?” said Elizabeth.\n\nThey went out together."
CAST = {"narrator": "joe", "characters": {"Elizabeth": "nora"}}


def test_a_cast_job_reads_each_quote_in_its_speakers_voice(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    body: dict[str, Any] = {"text": BOOK, "speaker": "joe", "modelId": "coda", "format": "wav", "cast": CAST}
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), json=body, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job = _wait(stack, api_key, submitted.json()["id"])
    assert job["status"] == "succeeded", job
    stamps = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/timestamps.json", headers=_auth(api_key), timeout=30).json()
    voiced = {s["text"]: (s["voice"], s["speaker"]) for s in stamps["sentences"]}
    assert voiced["“Shall we walk to the village?”"] == ("nora", "Elizabeth")
    assert voiced["The rain had stopped."] == ("joe", None)
    assert voiced["said Elizabeth."] == ("joe", None)
    vtt = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/subtitles.vtt", headers=_auth(api_key), timeout=30).text
    assert "<v Elizabeth>“Shall we walk to the village?”</v>" in vtt and "<v Narrator>The rain had stopped.</v>" in vtt
    audio = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/audio", headers=_auth(api_key), timeout=30,
                      follow_redirects=True)
    assert audio.status_code == 200 and audio.content[:4] == b"RIFF"


@pytest.mark.parametrize(
    ("cast", "message"),
    [
        ({"characters": {"Elizabeth": "nobody"}}, "nobody"),
        ({"characters": {"Elizabeth": {"voice": "nora", "aliases": "Lizzy"}}}, "cast.characters['Elizabeth']"),
        ({"narrator": "joe", "extras": {}}, "cast has an unknown field: extras"),
    ],
    ids=["unknown-voice", "aliases-not-a-list", "unknown-field"],
)
def test_a_malformed_cast_is_a_400(stack, api_key: str, cast: dict[str, Any], message: str) -> None:  # type: ignore[no-untyped-def]
    body = {"text": BOOK, "speaker": "joe", "modelId": "coda", "cast": cast}
    response = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), json=body, timeout=30)
    assert response.status_code == 400 and message in response.text, response.text


@pytest.mark.parametrize("version", [2, 3])
def test_an_epub_becomes_an_m4b_with_its_chapters_cover_and_cast(stack, api_key: str, version: int, tmp_path) -> None:  # type: ignore[no-untyped-def]
    cover = png(rgb=(10, 120, 200))
    data = {"speaker": "joe", "modelId": "coda", "format": "m4b", "cast": json.dumps(CAST)}
    files = {"file": ("book.epub", build_epub(version, cover=cover), "application/epub+zip")}
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), data=data, files=files, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job = _wait(stack, api_key, submitted.json()["id"])
    assert job["status"] == "succeeded", job
    path = tmp_path / "book.m4b"
    path.write_bytes(httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/audio", headers=_auth(api_key), timeout=30,
                               follow_redirects=True).content)
    tags = MP4(str(path)).tags
    assert tags is not None
    assert (tags["©nam"], tags["©ART"], tags["©wrt"]) == (["A Cast Book"], ["Ann Author"], ["joe, nora"])
    assert bytes(tags["covr"][0]) == cover and tags["stik"] == [2]
    with av.open(str(path)) as container:
        assert [c["metadata"]["title"] for c in container.chapters()] == [name for name, _ in CHAPTERS]


def test_an_uploaded_cover_wins_and_a_non_image_is_a_400(stack, api_key: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    mine = png(rgb=(0, 0, 0))
    data = {"speaker": "joe", "format": "m4b", "title": "Mine"}
    files = {"file": ("book.epub", build_epub(3, cover=png()), "application/epub+zip"),
             "cover": ("cover.png", mine, "image/png")}
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), data=data, files=files, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job = _wait(stack, api_key, submitted.json()["id"])
    path = tmp_path / "mine.m4b"
    path.write_bytes(httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/audio", headers=_auth(api_key), timeout=30,
                               follow_redirects=True).content)
    tags = MP4(str(path)).tags
    assert tags is not None and bytes(tags["covr"][0]) == mine and tags["©nam"] == ["Mine"] and tags["©wrt"] == ["joe"]
    refused = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), timeout=30, data={"speaker": "joe", "text": "Hi."},
                         files={"cover": ("cover.png", b"<svg/>", "image/png")})
    assert (refused.status_code, refused.text) == (400, "cover must be a JPEG or PNG image")
    in_json = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), timeout=30,
                         json={"speaker": "joe", "text": "Hi.", "cover": "aGVsbG8="})
    assert (in_json.status_code, in_json.text) == (400, "cover must be an image file in a multipart form (field cover)")
