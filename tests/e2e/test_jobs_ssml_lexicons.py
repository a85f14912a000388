"""Book jobs with pronunciation lexicons (pinned to the versions used) and SSML, and every hostile
XML attack as an SSML job, a PLS lexicon and an EPUB upload, through the real stack (API, worker,
PostgreSQL, Redis, Swift S3)."""

from __future__ import annotations

import io
import time
import wave
import zipfile
from collections.abc import Callable
from typing import Any

import httpx
import numpy as np
import pytest

from tests.e2e.test_jobs_api import _auth, _new_key, _wait
from tests.fixtures.hostile_xml import ATTACKS, Builder

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


def test_an_ssml_job_reads_say_as_and_sub(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    document = ('<speak xmlns="http://www.w3.org/2001/10/synthesis"><p>It was the <say-as interpret-as="ordinal">3</say-as> '
                'day.</p><p>Call <sub alias="Doctor">Dr.</sub> Smith.</p></speak>')
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), json={"text": document, "speaker": "joe"}, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job = _wait(stack, api_key, submitted.json()["id"])
    assert job["status"] == "succeeded", job
    said = _said(stack, api_key, job["id"])
    assert "third" in said and "Doctor Smith" in said and "<" not in said


def _stamps(stack: Any, key: str, job_id: str) -> dict[str, Any]:
    response = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}/timestamps.json", headers=_auth(key), timeout=30)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def _audio(stack: Any, key: str, job_id: str) -> tuple[np.ndarray, int]:
    wav = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}/audio", headers=_auth(key), timeout=30, follow_redirects=True)
    assert wav.status_code == 200
    with wave.open(io.BytesIO(wav.content)) as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64) / 32768, w.getframerate()


def _level_db(samples: np.ndarray, rate: int, start: float, end: float) -> float:
    """The RMS level of the voiced part of a stretch (its loudest 60 % of 20 ms frames), so the
    engine's silences at the edges do not weigh in."""
    part = samples[int(start * rate) : int(end * rate)]
    frame = rate // 50
    energies = np.sort([float(np.mean(part[i : i + frame] ** 2)) for i in range(0, len(part) - frame, frame)])
    voiced = energies[int(len(energies) * 0.4) :]
    return 10 * float(np.log10(np.mean(voiced)))


def _rendered(
    stack: Any, key: str, body: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], np.ndarray, int]:
    """A WAV job submitted and waited for: the job, its timestamps, samples and rate (it must succeed)."""
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(key), json=body, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job = _wait(stack, key, submitted.json()["id"])
    assert job["status"] == "succeeded", job
    return (job, _stamps(stack, key, job["id"]), *_audio(stack, key, job["id"]))


def _sentence(stamps: dict[str, Any], start: str) -> dict[str, Any]:
    found = [s for s in stamps["sentences"] if s["text"].startswith(start)]
    assert len(found) == 1, stamps["sentences"]
    return found[0]  # type: ignore[no-any-return]


SAME = "the quiet river ran past the old mill."


def test_an_ssml_job_honours_break_prosody_emphasis_phoneme_lang_voice_and_mark(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    """One book with every element the service takes, read by joe (VITS, 22.05 kHz) with a
    sentence in nora's Kokoro voice (24 kHz): what each element does is heard in the timings,
    the voices in the timestamps and the levels in the audio. The same sentence is read plainly,
    slowly, softly and with emphasis, so each effect is measured against the plain reading. The
    book is quiet (-28 LUFS) so that its true-peak limiter, which holds back the loud sentences
    of a book at the usual -19, leaves the levels as the markup made them."""
    document = (
        '<speak xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="en-US">'
        f"<p><s>Plainly, {SAME}</s><break time=\"2s\"/><s>After the break.</s></p>"
        f'<p><prosody rate="x-slow">Slowly, {SAME}</prosody></p>'
        f'<p><prosody volume="-10dB">Softly, {SAME}</prosody></p>'
        f'<p><emphasis level="strong">Strongly, {SAME}</emphasis></p>'
        '<p>He met <mark name="before-name"/><phoneme alphabet="ipa" ph="ˈsuːpərkælɪfrædʒɪlɪstɪkɛkspiːælɪˈdoʊʃəs">Sue</phoneme>'
        ' at noon.</p>'
        '<p><voice name="nora">Nora reads this line.</voice> <lang xml:lang="fr-FR">Merci beaucoup.</lang></p>'
        '<mark name="the-end"/></speak>'
    )
    body = {"text": document, "speaker": "joe", "modelId": "coda", "format": "wav", "loudness": -28}
    job, stamps, samples, rate = _rendered(stack, api_key, body)

    # break: the silence between the sentences is the two seconds asked (and no word inside it)
    plain, after = _sentence(stamps, "Plainly"), _sentence(stamps, "After the break.")
    assert 2.0 <= after["start"] - plain["end"] <= 2.0 + 0.6, (plain, after)
    # prosody rate and volume, emphasis: the same words, slower, softer, slower and louder
    slow, soft, strong = _sentence(stamps, "Slowly"), _sentence(stamps, "Softly"), _sentence(stamps, "Strongly")
    span = {name: s["end"] - s["start"] for name, s in (("plain", plain), ("slow", slow), ("soft", soft), ("strong", strong))}
    assert span["slow"] > 1.4 * span["plain"], span
    assert span["strong"] > 0.97 * span["plain"], span  # 10 % slower, within VITS's own spread of durations
    level = {name: _level_db(samples, rate, s["start"], s["end"]) for name, s in (("plain", plain), ("soft", soft), ("strong", strong))}
    assert -12.0 < level["soft"] - level["plain"] < -8.0, level  # -10 dB asked
    assert 1.0 < level["strong"] - level["plain"] < 5.0, level  # +3 dB
    # phoneme: the word as written, said as the IPA says (a long word for a short name)
    words = stamps["words"]
    sue = [w for w in words if w["word"].startswith("Sue")]
    assert len(sue) == 1 and sue[0]["end"] - sue[0]["start"] > 1.2, sue
    # mark: named in the word timings where it falls, flagged as a mark
    marks = {w["word"]: w for w in words if w.get("mark")}
    assert set(marks) == {"before-name", "the-end"}
    assert marks["before-name"]["start"] <= sue[0]["start"] + 0.01 and marks["the-end"]["start"] >= sue[0]["end"]
    # voice: the switch is heard in the timestamps, brought to the book's one rate
    assert _sentence(stamps, "Nora reads")["voice"] == "nora" and _sentence(stamps, "He met")["voice"] == "joe"
    assert _sentence(stamps, "Merci")["voice"] == "joe"
    # billing: the spoken text, never the markup
    assert job["characters"] == len(_said(stack, api_key, job["id"])) < len(document) // 2


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ('<speak>Wait <audio src="a.wav"/> now.</speak>', "SSML element <audio> at line 1, column 13 is not supported"),
        ('<speak><prosody pitch="high">Up.</prosody></speak>',
         'SSML attribute "pitch" of <prosody> at line 1, column 8 is not supported'),
        ('<speak><voice name="nobody">Hi.</voice></speak>', "nobody"),
        ('<speak>Hi. <voice name="walter"><phoneme alphabet="ipa" ph="wɪn">Win</phoneme></voice></speak>',
         "speaker walter does not accept phonemes"),
    ],
    ids=["element", "attribute", "unknown-voice", "phonemes-for-a-formant-voice"],
)
def test_what_an_ssml_job_cannot_do_is_a_400_that_names_it(stack, api_key: str, document: str, message: str) -> None:  # type: ignore[no-untyped-def]
    refused = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), timeout=30,
                         json={"text": document, "speaker": "joe"})
    assert refused.status_code == 400 and message in refused.text, refused.text


def test_an_ssml_upload_is_read_as_ssml(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    document = b'<speak><p>Chapter <say-as interpret-as="cardinal">12</say-as> begins.</p><break time="3s"/><p>Then.</p></speak>'
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), data={"speaker": "joe"},
                           files={"file": ("book.ssml", document, "application/ssml+xml")}, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job = _wait(stack, api_key, submitted.json()["id"])
    assert job["status"] == "succeeded", job
    assert "twelve" in _said(stack, api_key, job["id"])
    stamps = _stamps(stack, api_key, job["id"])
    assert _sentence(stamps, "Then.")["start"] - _sentence(stamps, "Chapter")["end"] >= 3.0  # the break's 3 s


def _hostile_epub(container: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", container)
    return buffer.getvalue()


#: A hostile document's 400 comes this fast through the whole service, even on a loaded machine:
#: the parser's caps stop it (the largest attack, 200,000 elements, is refused in about 0.5 s).
REFUSED_WITHIN_S = 10.0


def _timed(send: Callable[[], httpx.Response]) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = send()
    return response, time.monotonic() - started


@pytest.mark.parametrize(("name", "build"), ATTACKS, ids=[name for name, _ in ATTACKS])
def test_a_hostile_epub_upload_is_a_400(stack, api_key: str, name: str, build: Builder) -> None:  # type: ignore[no-untyped-def]
    data = _hostile_epub(build("container", 'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"'))
    response, seconds = _timed(lambda: httpx.post(
        f"{stack.api_url}/v1/jobs", headers=_auth(api_key), data={"speaker": "joe"},
        files={"file": ("evil.epub", data, "application/epub+zip")}, timeout=60))
    assert response.status_code == 400
    assert response.text.startswith("the EPUB's container.xml refused at line"), response.text
    assert "passwd" not in response.text and seconds < REFUSED_WITHIN_S


@pytest.mark.parametrize(("name", "build"), ATTACKS, ids=[name for name, _ in ATTACKS])
def test_a_hostile_ssml_job_is_a_400(stack, api_key: str, name: str, build: Builder) -> None:  # type: ignore[no-untyped-def]
    """A job takes a book-sized text (the streams' 10,000 characters of SSML would stop the large
    attacks before the parser), so each attack reaches the hardened parser here."""
    document = build("speak", 'version="1.1" xmlns="http://www.w3.org/2001/10/synthesis"')
    response, seconds = _timed(lambda: httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(api_key), timeout=60,
                                                  json={"text": document, "speaker": "joe", "textType": "ssml"}))
    assert response.status_code == 400
    assert response.text.startswith("SSML refused at line"), response.text
    assert "passwd" not in response.text and seconds < REFUSED_WITHIN_S


@pytest.mark.parametrize(("name", "build"), ATTACKS, ids=[name for name, _ in ATTACKS])
def test_a_hostile_lexicon_is_a_400(stack, api_key: str, name: str, build: Builder) -> None:  # type: ignore[no-untyped-def]
    """A PLS document over the size cap (deep nesting, many elements) is refused before it is
    parsed; the others by the parser, naming where."""
    document = build("lexicon", 'version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" '
                                'xml:lang="en-US"')
    response, seconds = _timed(lambda: httpx.put(f"{stack.api_url}/v1/lexicons/hostile", headers=_auth(api_key),
                                                 content=document, timeout=60))
    assert response.status_code == 400
    assert response.text.startswith(("the lexicon refused at line", "a lexicon is at most")), response.text
    assert "passwd" not in response.text and seconds < REFUSED_WITHIN_S
