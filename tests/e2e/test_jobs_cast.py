"""A book job with a cast through the real stack (API, worker, PostgreSQL, Redis, Swift S3): the
narration in joe's VITS voice, Elizabeth in nora's Kokoro voice, a character outside the cast (or
named by an inline tag) in the dialogue voice, mixed into one file at one loudness; the
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
# Lydia is in no cast: her quotes are the dialogue voice's. After Elizabeth and Lydia, an untagged
# quote would alternate back to Elizabeth; the inline tag gives it to Lydia (and is not read).
DIALOGUE = BOOK + "\n\n“Not in this mud,” called Lydia.\n\n{Lydia} “Then go alone.”"


def test_a_cast_job_reads_each_quote_in_its_speakers_voice(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    body: dict[str, Any] = {"text": DIALOGUE, "speaker": "joe", "modelId": "coda", "format": "wav",
                            "cast": {**CAST, "dialogue": "ivy"}}
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), json=body, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job = _wait(stack, api_key, submitted.json()["id"])
    assert job["status"] == "succeeded", job
    stamps = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/timestamps.json", headers=_auth(api_key), timeout=30).json()
    voiced = {s["text"]: (s["voice"], s["speaker"]) for s in stamps["sentences"]}
    assert voiced["“Shall we walk to the village?”"] == ("nora", "Elizabeth")
    assert voiced["The rain had stopped."] == ("joe", None)
    assert voiced["said Elizabeth."] == ("joe", None)
    assert voiced["“Not in this mud,”"] == ("ivy", "Lydia")  # named, not cast: the dialogue voice
    assert voiced["“Then go alone.”"] == ("ivy", "Lydia")  # the inline tag over alternation
    assert not any("{" in text for text in voiced)
    # a change of voice inside a sentence is a short breath, well under a paragraph's pause
    # (the exact pauses: tests/unit/scheduler/test_planning.py)
    gap = {a["text"]: b["start"] - a["end"] for a, b in zip(stamps["sentences"], stamps["sentences"][1:], strict=False)}
    assert 0.15 <= gap["“Not in this mud,”"] < gap["The rain had stopped."] - 0.5, gap
    vtt = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/subtitles.vtt", headers=_auth(api_key), timeout=30).text
    assert "<v Elizabeth>“Shall we walk to the village?”</v>" in vtt and "<v Narrator>The rain had stopped.</v>" in vtt
    audio = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/audio", headers=_auth(api_key), timeout=30,
                      follow_redirects=True)
    assert audio.status_code == 200 and audio.content[:4] == b"RIFF"


def test_voices_of_different_levels_are_brought_to_one_loudness(stack, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    """walter (eSpeak NG, formant) speaks some 4 LU louder than joe (VITS) alone; in a cast each
    voice is matched to one loudness before assembly, so the same words read by either are within
    1.5 LU of each other in the book (0.2 apart with the matching, 2.9 without). The book is quiet
    (-28 LUFS) so that its true-peak limiter leaves the levels as the matching made them; an
    account of its own, so no chunk comes from another job's cache."""
    from speech.audio.loudness import integrated_loudness
    from tests.e2e.test_jobs_ssml_lexicons import _rendered, _sentence
    from tests.fixtures.stack import make_key

    api_key = make_key(pg_url, "cast-level")
    line = "the lamp was lit and the room was warm and quiet all evening."
    book = f"Softly, {line}\n\n“Loudly, {line}” said Walter."
    body = {"text": book, "speaker": "joe", "modelId": "mistv3", "format": "wav", "loudness": -28,
            "cast": {"narrator": "joe", "characters": {"Walter": "walter"}}}
    _, stamps, samples, rate = _rendered(stack, api_key, body)
    narration, quote = _sentence(stamps, "Softly"), _sentence(stamps, "“Loudly")
    assert (narration["voice"], quote["voice"]) == ("joe", "walter")
    levels = [integrated_loudness(samples[int(s["start"] * rate) : int(s["end"] * rate)].astype("float32"), rate)
              for s in (narration, quote)]
    assert abs(levels[1] - levels[0]) < 1.5, levels


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
