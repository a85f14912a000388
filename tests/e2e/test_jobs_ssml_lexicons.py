"""Book jobs with pronunciation lexicons (pinned to the versions used) and SSML, and hostile
EPUB uploads, through the real stack (API, worker, PostgreSQL, Redis, Swift S3)."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import httpx
import pytest

from tests.e2e.test_jobs_api import _auth, _new_key, _wait
from tests.fixtures.hostile_xml import billion_laughs, deep_nesting, external_entity

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PLS = ('<?xml version="1.0" encoding="UTF-8"?>\n<lexicon version="1.0" '
       'xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">\n{}\n</lexicon>')


def _said(stack: Any, key: str, job_id: str) -> str:
    stamps = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}/timestamps.json", headers=_auth(key), timeout=30).json()
    return " ".join(s["text"] for s in stamps["sentences"])


def _put(stack: Any, key: str, name: str, lexemes: str, **params: str) -> dict[str, Any]:
    response = httpx.put(f"{stack.api_url}/v1/lexicons/{name}", headers=_auth(key), content=PLS.format(lexemes),
                         params=params, timeout=30)
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def test_a_job_uses_its_lexicons_and_records_their_versions(stack, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    """Timestamps show the text as written, so the lexicons are heard in the durations: each
    alias below adds well over a second of speech."""
    key = _new_key(pg_url)
    _put(stack, key, "places", "<lexeme><grapheme>NYC</grapheme><alias>New York City, the big apple on the Hudson river"
                               "</alias></lexeme><lexeme><grapheme>Nguyen</grapheme><phoneme>wɪn</phoneme></lexeme>")
    _put(stack, key, "house", "<lexeme><grapheme>BBC</grapheme><alias>the British Broadcasting Corporation in London town"
                              "</alias></lexeme>", default="true")
    body = {"text": "Mr Nguyen flew to NYC. He worked for the BBC.", "speaker": "joe", "format": "wav"}
    submitted = {
        name: httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(key), json={**body, **extra}, timeout=30)
        for name, extra in (("named", {"lexicons": ["places"]}), ("default", {}), ("none", {"lexicons": []}))
    }
    assert all(r.status_code == 202 for r in submitted.values()), {n: r.text for n, r in submitted.items()}
    assert submitted["named"].json()["lexicons"] == [{"name": "places", "version": 1}]
    assert submitted["default"].json()["lexicons"] == [{"name": "house", "version": 1}]
    assert submitted["none"].json()["lexicons"] == []
    _put(stack, key, "places", "<lexeme><grapheme>NYC</grapheme><alias>Gotham</alias></lexeme>")  # version 2, after submission
    jobs = {name: _wait(stack, key, r.json()["id"]) for name, r in submitted.items()}
    assert all(j["status"] == "succeeded" for j in jobs.values()), jobs
    plain = jobs["none"]["durationSeconds"]
    assert jobs["named"]["durationSeconds"] > plain + 1.5  # version 1's long alias, as recorded
    assert jobs["default"]["durationSeconds"] > plain + 1.5
    # billed by the text as written, whatever a lexicon made of it
    assert jobs["named"]["characters"] == jobs["none"]["characters"] == len(body["text"])


def test_an_ssml_job_reads_say_as_and_sub_and_refuses_what_it_cannot_carry(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    document = ('<speak xmlns="http://www.w3.org/2001/10/synthesis"><p>It was the <say-as interpret-as="ordinal">3</say-as> '
                'day.</p><p>Call <sub alias="Doctor">Dr.</sub> Smith.</p></speak>')
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), json={"text": document, "speaker": "joe"}, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job = _wait(stack, api_key, submitted.json()["id"])
    assert job["status"] == "succeeded", job
    said = _said(stack, api_key, job["id"])
    assert "third" in said and "Doctor Smith" in said and "<" not in said
    refused = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), timeout=30,
                         json={"text": '<speak>Wait<break time="1s"/>now.</speak>', "speaker": "joe"})
    assert (refused.status_code, refused.text) == (
        400, "SSML <break> at line 1, column 12 is not supported in jobs yet (jobs take p, s, say-as, speak, sub; "
             "/v1/service-tts takes all)")


def test_an_ssml_upload_is_read_as_ssml(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    document = b'<speak><p>Chapter <say-as interpret-as="cardinal">12</say-as> begins.</p></speak>'
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), data={"speaker": "joe"},
                           files={"file": ("book.ssml", document, "application/ssml+xml")}, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job = _wait(stack, api_key, submitted.json()["id"])
    assert job["status"] == "succeeded", job
    assert "twelve" in _said(stack, api_key, job["id"])


def _hostile_epub(container: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", container)
    return buffer.getvalue()


@pytest.mark.parametrize("build", [billion_laughs, external_entity, deep_nesting], ids=["laughs", "entity", "nesting"])
def test_a_hostile_epub_upload_is_a_400(stack, api_key: str, build) -> None:  # type: ignore[no-untyped-def]
    data = _hostile_epub(build("container", 'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"'))
    response = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), data={"speaker": "joe"},
                          files={"file": ("evil.epub", data, "application/epub+zip")}, timeout=60)
    assert response.status_code == 400
    assert response.text.startswith("the EPUB's container.xml refused at line")
