"""A book job with a cast through the real stack (API, worker, PostgreSQL, Redis, Swift S3): the
narration in joe's VITS voice, Elizabeth in nora's Kokoro voice, mixed into one file; the
timestamps and subtitles say who spoke."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.test_jobs_api import _auth, _wait

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
