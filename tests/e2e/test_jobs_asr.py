"""An ASR round trip over a finished book: Whisper tiny.en hears the first and the last minute of
a three-chapter m4b rendered by the real stack, and every sentence of those stretches is found in
the transcript, in order, once (nothing skipped, nothing repeated, nothing garbled)."""

from __future__ import annotations

import difflib
import io
import time
from typing import Any

import av
import httpx
import numpy as np
import pytest

from tests.support.asr import normalise, transcribe, wer
from tests.support.corpus import CORPUS

pytestmark = [pytest.mark.integration, pytest.mark.slow]
WINDOW_S = 60.0  # the issue: the first and the last minute


def _book() -> str:
    """The openings of chapters 1-3 of Pride and Prejudice, about 1,100 characters each: over
    three minutes of speech, so the first and the last minute are apart."""
    text = CORPUS.read_text(encoding="utf-8")
    parts = []
    for n in (1, 2, 3):
        start = text.index(f"\n      Chapter {n}\n") + 1
        piece = " ".join(text[start : start + 1250].split("\n\n", 1)[1].split())
        parts.append(f"Chapter {n}\n\n{piece[: piece.rfind('.') + 1]}")
    return "\n\n".join(parts)


def _decode(data: bytes) -> tuple[np.ndarray, int]:
    with av.open(io.BytesIO(data)) as container:
        rate = container.streams.audio[0].rate
        samples = np.concatenate([f.to_ndarray().reshape(-1) for f in container.decode(audio=0)])
    return samples.astype(np.float32), rate


def _check_window(samples: np.ndarray, rate: int, sentences: list[dict[str, Any]]) -> None:
    start, end = sentences[0]["start"] - 0.2, sentences[-1]["end"] + 0.4
    heard = transcribe(samples[max(int(start * rate), 0) : int(end * rate)], rate)
    expected = " ".join(s["text"] for s in sentences)
    assert wer(expected, heard) <= 0.2, (expected, heard)
    said = normalise(heard).split()
    position = -1
    for sentence in sentences:
        words = normalise(sentence["text"]).split()
        # the best match of this sentence in what was heard, and it must come after the previous one
        best, where = 0.0, -1
        for offset in range(max(len(said) - len(words), 0) + 1):
            ratio = difflib.SequenceMatcher(None, words, said[offset : offset + len(words)]).ratio()
            if ratio > best:
                best, where = ratio, offset
        assert best >= 0.6, (sentence["text"], heard)
        assert where > position, ("out of order or repeated", sentence["text"], heard)
        position = where
    assert abs(len(said) - len(normalise(expected).split())) <= max(3, len(said) // 8), (expected, heard)


def test_whisper_hears_the_start_and_end_of_a_book_in_order(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    book = _book()
    auth = {"Authorization": f"Bearer {api_key}"}
    submitted = httpx.post(
        f"{stack.api_url}/v1/jobs", headers=auth, timeout=30,
        json={"text": book, "speaker": "joe", "format": "m4b", "title": "Pride and Prejudice", "author": "Jane Austen"},
    )
    assert submitted.status_code == 202, submitted.text
    job_id = submitted.json()["id"]
    deadline = time.monotonic() + 300
    while (job := httpx.get(f"{stack.api_url}/v1/jobs/{job_id}", headers=auth).json())["status"] not in (
        "succeeded", "failed", "canceled",
    ):
        assert time.monotonic() < deadline, stack.log_text("worker1")[-3000:]
        time.sleep(0.5)
    assert job["status"] == "succeeded", job

    location = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}/audio", headers=auth).headers["location"]
    data = httpx.get(location, timeout=60).content
    with av.open(io.BytesIO(data)) as container:
        assert [c["metadata"]["title"] for c in container.chapters()] == ["Chapter 1", "Chapter 2", "Chapter 3"]
    samples, rate = _decode(data)
    duration = len(samples) / rate
    assert duration > 3 * WINDOW_S

    sentences = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}/timestamps.json", headers=auth).json()["sentences"]
    assert sentences[0]["text"] == "Chapter 1"
    assert book.endswith(sentences[-1]["text"])
    first = [s for s in sentences if s["end"] <= WINDOW_S]
    last = [s for s in sentences if s["start"] >= duration - WINDOW_S]
    assert len(first) >= 3 and len(last) >= 2
    _check_window(samples, rate, first)
    _check_window(samples, rate, last)
