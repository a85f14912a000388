"""An SSML book through the real stack (API, worker, PostgreSQL, Redis, Swift S3): chapters
marked in the document, a cast's quotes attributed outside any ``<voice>``, breaks at the
document's edges heard as silence, and an ACX delivery of an SSML document."""

from __future__ import annotations

import io
import wave
import zipfile
from typing import Any

import httpx
import numpy as np
import pytest

from tests.e2e.test_jobs_api import _auth, _download, _wait
from tests.fixtures.stack import make_key

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BOOK = (
    '<speak><break time="1200ms"/><mark name="chapter:The Walk"/><p>The rain had stopped.</p>'
    "<p>“Shall we walk to the village?” said Elizabeth.</p>"
    '<mark name="chapter:The Village"/><p>They went out together.</p><break time="2s"/></speak>'
)
CAST = {"narrator": "joe", "characters": {"Elizabeth": "nora"}}


def _job(stack: Any, key: str, body: dict[str, Any]) -> dict[str, Any]:
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(key), json=body, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job = _wait(stack, key, submitted.json()["id"])
    assert job["status"] == "succeeded", job
    return job


def _rms_db(x: np.ndarray) -> float:
    return float(20 * np.log10(max(float(np.sqrt(np.mean(x**2))), 1e-9)))


def test_an_ssml_book_has_its_chapters_its_cast_and_its_edge_breaks(stack, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    """An account of its own: the ACX test speaks the same document inside credits, and a chunk
    reused from it (its words laid out in other markup) would rightly carry no offsets."""
    api_key = make_key(pg_url, "ssml-book")
    job = _job(stack, api_key, {"text": BOOK, "speaker": "joe", "modelId": "coda", "format": "wav", "cast": CAST})
    stamps = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/timestamps.json", headers=_auth(api_key), timeout=30).json()
    # chapters from the chapter marks, the second starting where the pause before its text starts
    assert [c["title"] for c in stamps["chapters"]] == ["The Walk", "The Village"]
    together = next(s for s in stamps["sentences"] if s["text"].startswith("They went"))
    assert stamps["chapters"][1]["start"] <= together["start"] - 1.9  # the chapter pause (2 s) is the chapter's
    # the quote in Elizabeth's voice, attributed from "said Elizabeth" (no <voice> in the document)
    voiced = {s["text"]: (s["voice"], s["speaker"]) for s in stamps["sentences"]}
    assert voiced["“Shall we walk to the village?”"] == ("nora", "Elizabeth")
    assert voiced["said Elizabeth."] == ("joe", None) and voiced["The rain had stopped."] == ("joe", None)
    # the edge breaks: silence before the first word and after the last, as long as asked
    wav = wave.open(io.BytesIO(_download(stack, api_key, job["id"])))
    rate = wav.getframerate()
    samples = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").astype(np.float64) / 32768
    spoken = [w for w in stamps["words"] if not w.get("mark")]
    assert 1.2 <= spoken[0]["start"] < 1.2 + 0.3, spoken[0]
    assert len(samples) / rate - spoken[-1]["end"] >= 2.0, (len(samples) / rate, spoken[-1])
    assert _rms_db(samples[: int(1.1 * rate)]) < -60 and _rms_db(samples[-int(1.9 * rate):]) < -60
    assert _rms_db(samples[int(spoken[0]["start"] * rate) : int(spoken[0]["end"] * rate)]) > -40
    # words point into the document; the chapter marks are in the words, written nowhere
    assert {w["word"] for w in stamps["words"] if w.get("mark")} == {"chapter:The Walk", "chapter:The Village"}
    for w in spoken:
        assert BOOK[w["textOffset"] : w["textOffset"] + w["textLength"]] == w["word"], w


def test_an_ssml_job_refuses_chapters_by_offset_and_says_how_to_mark_them(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    refused = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), timeout=30, json={
        "text": BOOK, "speaker": "joe", "chapters": [{"title": "One", "start": 0}]})
    assert refused.status_code == 400, refused.text
    assert '<mark name="chapter:Title"/>' in refused.text and "chapters" in refused.text


def test_an_ssml_book_is_delivered_to_acx_with_credits_and_a_file_per_chapter(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    body = {"text": BOOK, "speaker": "joe", "modelId": "coda", "delivery": "acx", "title": "The Walk Book",
            "author": "Ann Writer"}
    job = _job(stack, api_key, body)
    archive = zipfile.ZipFile(io.BytesIO(_download(stack, api_key, job["id"])))
    mp3s = sorted(n for n in archive.namelist() if n.endswith(".mp3"))
    assert mp3s[0].endswith("Opening Credits.mp3") and any(n.endswith("Closing Credits.mp3") for n in mp3s)
    assert any("The Walk.mp3" in n for n in mp3s) and any("The Village.mp3" in n for n in mp3s)
    assert "compliance.json" in archive.namelist()
    spoken = "The rain had stopped.\n\n“Shall we walk to the village?” said Elizabeth.\n\nThey went out together."
    assert job["billedCharacters"] + job["reusedCharacters"] == job["characters"] <= len(spoken)  # credits are free
