"""Word timings point at the text the customer sent (issue 26), on every transport: ``/ws3``
(counted over everything the socket's text messages carried), SSE, a job's timestamps JSON and
its WebVTT subtitles. Each check reads ``submitted[textOffset:textOffset + textLength]``."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from typing import Any

import httpx
import pytest
import websockets

from tests.e2e.test_jobs_api import _auth, _wait

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# What normalisation reads each rewritten word from; every other word is written as it is said.
READ_FROM = {
    "Doctor": "Dr.",
    "five": "$5.20", "dollars": "$5.20", "and": "$5.20", "twenty": "$5.20", "cents": "$5.20",
    "forty": "40-60°C", "to": "40-60°C", "sixty": "40-60°C", "degrees": "40-60°C", "Celsius": "40-60°C",
    "one": "1,234", "thousand": "1,234", "two": "1,234", "hundred": "1,234", "thirty-four": "1,234",
    "World": "WWW", "Wide": "WWW", "Web": "WWW",
}


def _check(submitted: str, stamps: dict[str, list[Any]]) -> list[str]:
    """Each timed word against what its offsets say in ``submitted``; the words, for the caller."""
    words = stamps["words"]
    assert len(stamps["textOffset"]) == len(stamps["textLength"]) == len(words) > 0
    for word, offset, length in zip(words, stamps["textOffset"], stamps["textLength"], strict=True):
        assert offset is not None and length > 0, (word, stamps)
        written = submitted[offset : offset + length]
        assert written == READ_FROM.get(word, word), (word, written, submitted)
    return list(words)


async def _until(ws: Any, kind: str, timeout: float = 90) -> list[dict[str, Any]]:
    events = []
    while not events or events[-1]["type"] != kind:
        events.append(json.loads(await asyncio.wait_for(ws.recv(), timeout)))
    return events


async def test_ws3_offsets_count_over_everything_the_socket_was_sent(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    url = stack.api_url.replace("http://", "ws://") + "/ws3?speaker=joe&audioFormat=pcm&segment=bySentence"
    messages = ["Hello there.  It was ", "40-60°C today, ", "Dr. Lee paid $5.20 again. "]
    ssml = ('<speak>Pay <say-as interpret-as="cardinal">1,234</say-as> now, see the '
            '<sub alias="World Wide Web">WWW</sub>.<mark name="end"/></speak>')
    sent = ""
    stamps: list[dict[str, list[Any]]] = []
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {api_key}"}) as ws:
        for text in messages:
            await ws.send(json.dumps({"text": text}))
            sent += text
        await ws.send(json.dumps({"operation": "flush"}))
        events = await _until(ws, "done")
        await ws.send(json.dumps({"text": ssml}))
        sent += ssml
        await ws.send(json.dumps({"operation": "flush"}))
        events += await _until(ws, "done")
    stamps = [e["word_timestamps"] for e in events if e["type"] == "timestamps"]
    assert len(stamps) >= 3  # the runs were cut at sentence ends: offsets do not restart with them
    said = []
    for run in stamps:
        placed = {k: [v for v, w in zip(run[k], run["words"], strict=True) if w != "end"] for k in run}
        said += _check(sent, placed)
        if "end" in run["words"]:  # the SSML mark: timed, written nowhere
            i = run["words"].index("end")
            assert run["textOffset"][i] is None and run["textLength"][i] is None
    assert said[:4] == ["Hello", "there", "It", "was"] and "forty" in said and "Doctor" in said and "Web" in said
    first_ssml = sent.index("<speak>")
    assert all(o >= first_ssml for run in stamps[-1:] for o in run["textOffset"] if o is not None)


def test_sse_timestamps_point_into_the_request_text(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    text = "Dr.  Lee paid $5.20 at 40-60°C.\nThen left."
    response = httpx.post(f"{stack.api_url}/v1/service-tts", timeout=120,
                          json={"text": text, "speaker": "joe", "modelId": "mistv2"},
                          headers={"Authorization": f"Bearer {api_key}", "Accept": "text/event-stream"})
    assert response.status_code == 200, response.text
    blocks = [b for b in response.text.split("\n\n") if b.startswith("event: timestamps")]
    stamps = json.loads(blocks[0].split("data: ", 1)[1])["word_timestamps"]
    assert _check(text, stamps)[:4] == ["Doctor", "Lee", "paid", "five"]
    audio = [b for b in response.text.split("\n\n") if b.startswith("event: chunk")]
    assert audio and base64.b64decode(json.loads(audio[0].split("data: ", 1)[1])["data"])


BOOK = (
    "# The First Day\n\nDr. Lee paid $5.20 for tea.   It was\n40-60°C outside, so nobody walked far.\n\n"
    "# The Second Day\n\n" + "The rain came down over the harbour, over the boats, over the quiet grey water, " * 6
    + "until night fell.\n\nThe end."
)


def test_a_jobs_timestamps_and_subtitles_point_into_the_text_sent(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), timeout=30,
                           json={"text": BOOK, "speaker": "joe", "format": "wav"})
    assert submitted.status_code == 202, submitted.text
    job = _wait(stack, api_key, submitted.json()["id"])
    assert job["status"] == "succeeded", job
    stamps = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/timestamps.json", headers=_auth(api_key), timeout=30).json()
    text = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/text", headers=_auth(api_key), timeout=30)
    assert text.headers["content-type"].startswith("text/plain") and text.text == BOOK  # what the offsets count in
    words = stamps["words"]
    columns = {k: [w[k] for w in words] for k in ("word", "textOffset", "textLength")}
    said = _check(BOOK, {"words": columns["word"], "textOffset": columns["textOffset"],
                         "textLength": columns["textLength"]})
    assert said[:3] == ["The", "First", "Day"]  # the heading, found past its "#"
    offsets = columns["textOffset"]
    assert offsets == sorted(offsets)
    for sentence in stamps["sentences"]:
        written = BOOK[sentence["textOffset"] : sentence["textOffset"] + sentence["textLength"]]
        assert " ".join(written.split()) == sentence["text"]

    vtt = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/subtitles.vtt", headers=_auth(api_key), timeout=30).text
    cues = re.findall(r"textOffset=(\d+) textLength=(\d+)\n\S+ --> \S+\n((?:.+\n)+)\n", vtt)
    assert len(cues) > len(stamps["sentences"])  # the long sentence took several cues, each placed
    for offset, length, body in cues:
        written = BOOK[int(offset) : int(offset) + int(length)]
        assert " ".join(written.split()) == " ".join(body.split())


SSML_BOOK = ('<speak><p>Pay <say-as interpret-as="cardinal">1,234</say-as> for the '
             '<sub alias="World Wide Web">WWW</sub> &amp; <emphasis>more <prosody rate="slow">today</prosody></emphasis>.</p>'
             '<break time="1s"/><p>Dr. Lee agreed.<mark name="end"/></p></speak>')
SSML_READ_FROM = {**READ_FROM, "and": "&amp;"}


def _check_ssml(document: str, words: list[dict[str, Any]]) -> list[str]:
    said = []
    for w in words:
        if w.get("mark"):
            assert "textOffset" not in w, w
            continue
        written = document[w["textOffset"] : w["textOffset"] + w["textLength"]]
        assert written == SSML_READ_FROM.get(w["word"], w["word"]), (w, written)
        said.append(w["word"])
    return said


def test_an_ssml_jobs_words_point_into_its_document(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    """An SSML job keeps its document (``/text`` serves it as sent) and its words, sentences and
    cues point into it: at a text node's characters, a ``say-as`` or ``sub`` content, an entity."""
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), timeout=30,
                           json={"text": SSML_BOOK, "speaker": "joe", "format": "wav"})
    assert submitted.status_code == 202, submitted.text
    job = _wait(stack, api_key, submitted.json()["id"])
    assert job["status"] == "succeeded", job
    read = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/text", headers=_auth(api_key), timeout=30).text
    assert read == SSML_BOOK
    stamps = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/timestamps.json", headers=_auth(api_key), timeout=30).json()
    said = _check_ssml(SSML_BOOK, stamps["words"])
    assert said[:3] == ["Pay", "one", "thousand"] and said[-3:] == ["Doctor", "Lee", "agreed"] and "Web" in said
    offsets = [w["textOffset"] for w in stamps["words"] if "textOffset" in w]
    assert offsets == sorted(offsets)
    for sentence in stamps["sentences"]:  # the stretch its words cover, markup between them included
        written = SSML_BOOK[sentence["textOffset"] : sentence["textOffset"] + sentence["textLength"]]
        assert written.startswith(("Pay", "Dr.")) and written.endswith(("today", "agreed")), (sentence, written)
    vtt = httpx.get(f"{stack.api_url}/v1/jobs/{job['id']}/subtitles.vtt", headers=_auth(api_key), timeout=30).text
    cues = re.findall(r"textOffset=(\d+) textLength=(\d+)\n", vtt)
    assert len(cues) == len(stamps["sentences"]) >= 2
    assert SSML_BOOK[int(cues[-1][0]) :].startswith("Dr. Lee agreed")


def test_sse_timestamps_of_an_ssml_request_point_into_the_document(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    response = httpx.post(f"{stack.api_url}/v1/service-tts", timeout=120,
                          json={"text": SSML_BOOK, "speaker": "joe", "modelId": "mistv2", "textType": "ssml"},
                          headers={"Authorization": f"Bearer {api_key}", "Accept": "text/event-stream"})
    assert response.status_code == 200, response.text
    blocks = [b for b in response.text.split("\n\n") if b.startswith("event: timestamps")]
    said = []
    for block in blocks:
        stamps = json.loads(block.split("data: ", 1)[1])["word_timestamps"]
        for word, offset, length in zip(stamps["words"], stamps["textOffset"], stamps["textLength"], strict=True):
            if word == "end":  # the mark: timed, written nowhere
                assert offset is None and length is None
                continue
            assert SSML_BOOK[offset : offset + length] == SSML_READ_FROM.get(word, word), (word, offset, length)
            said.append(word)
    assert said[:3] == ["Pay", "one", "thousand"] and said[-3:] == ["Doctor", "Lee", "agreed"]
