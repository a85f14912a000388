"""Revisions on the whole stack (API, Celery worker, PostgreSQL, Redis, the Swift S3 server, joe):
a 20-chapter book is rendered, three sentences of chapter 7 are corrected, and the corrected book
is rendered again by the same account.

- At most 5 chunks are synthesized (counted as the usage rows of the second job), the rest is
  reused: ``reusedCharacters`` beside ``billedCharacters``, adding up to the book's characters.
- The corrected book's plan is a fresh plan of the corrected text: a new account renders it from
  nothing and gets the same chunks, pauses and chapters.
- Sample for sample: outside the edited chapter the corrected file equals the first file
  (``loudnessScope: chapter``, so each chapter's gain is its own; WAV at joe's own rate, so no
  resampler carries state across a chapter). Why not against the fresh render's samples: joe (VITS)
  draws Gaussian noise in every synthesis, so no two renders of a sentence are equal, reused or
  not; the fresh render is compared by its plan. Inside the edited chapter the unedited paragraphs
  carry that chapter's new gain (whole tenths of a dB); in book scope the whole file would move
  by the book's gain change, which is the tolerance there.
"""

from __future__ import annotations

import io
import time
import uuid
import wave
from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy import func, select

from store.db import jobs as job_repo
from store.db.models import Usage
from store.db.session import make_engine, make_sessionmaker, session_scope
from tests.fixtures.stack import Stack, make_key
from tests.support.books import revised_book

pytestmark = [pytest.mark.integration, pytest.mark.slow]
TERMINAL = ("succeeded", "failed", "canceled")
RATE = 22050  # joe's own rate


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _render(stack: Stack, key: str, text: str) -> dict[str, Any]:
    body = {"text": text, "speaker": "joe", "modelId": "mistv3", "format": "wav", "samplingRate": RATE,
            "loudnessScope": "chapter"}
    submitted = httpx.post(f"{stack.api_url}/v1/jobs", headers=_auth(key), json=body, timeout=60)
    assert submitted.status_code == 202, submitted.text
    job_id = submitted.json()["id"]
    deadline = time.monotonic() + 900
    while True:
        job: dict[str, Any] = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}", headers=_auth(key), timeout=30).json()
        if job["status"] in TERMINAL:
            assert job["status"] == "succeeded", (job, stack.log_text("worker1")[-3000:])
            return job
        assert time.monotonic() < deadline, (job, stack.log_text("worker1")[-3000:])
        time.sleep(1.0)


def _samples(stack: Stack, key: str, job_id: str) -> np.ndarray:
    redirect = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}/audio", headers=_auth(key), timeout=30)
    assert redirect.status_code == 307, redirect.text
    audio = httpx.get(redirect.headers["location"], timeout=120)
    with wave.open(io.BytesIO(audio.content)) as wav:
        assert wav.getframerate() == RATE and wav.getsampwidth() == 2
        frames = wav.readframes(wav.getnframes())
        channels = wav.getnchannels()
    return np.frombuffer(frames, dtype="<i2").reshape(-1, channels)[:, 0]


def _chapter_starts(stack: Stack, key: str, job_id: str) -> list[float]:
    stamps = httpx.get(f"{stack.api_url}/v1/jobs/{job_id}/timestamps.json", headers=_auth(key), timeout=30)
    assert stamps.status_code == 200, stamps.text
    return [float(c["start"]) for c in stamps.json()["chapters"]]


def _chunks(sessions: Any, job_id: str) -> list[Any]:
    with session_scope(sessions) as session:
        chunks = job_repo.list_chunks(session=session, job_id=uuid.UUID(job_id))
        for chunk in chunks:
            session.expunge(chunk)
        return chunks


def test_a_corrected_chapter_renders_at_most_five_chunks_and_the_rest_is_the_same_audio(
    stack: Stack, pg_url: str
) -> None:
    original, edited, changed = revised_book(chapters=20, edited_chapter=7)
    key = make_key(pg_url, "revise")
    first = _render(stack, key, original)
    assert first["reusedCharacters"] == 0 and first["billedCharacters"] == first["characters"]

    second = _render(stack, key, edited)
    engine = make_engine(pg_url)
    try:
        sessions = make_sessionmaker(engine)
        with session_scope(sessions) as session:
            synthesized = session.scalar(
                select(func.count()).select_from(Usage).where(Usage.job_id == uuid.UUID(second["id"]))
            )
        assert synthesized is not None and 1 <= synthesized <= 5
        assert second["progress"]["chunksTotal"] >= 60
        assert second["reusedCharacters"] > 0
        assert second["billedCharacters"] + second["reusedCharacters"] == second["characters"]
        edited_chunks = [c for c in _chunks(sessions, second["id"]) if not c.reused]
        assert len(edited_chunks) == synthesized
        assert all(any(sentence in c.text for c in edited_chunks) for sentence in changed)

        # A fresh render of the corrected text by an account with nothing cached: the same plan.
        fresh = _render(stack, make_key(pg_url, "fresh"), edited)
        assert fresh["reusedCharacters"] == 0 and fresh["billedCharacters"] == second["characters"]
        assert [c.text for c in _chunks(sessions, fresh["id"])] == [c.text for c in _chunks(sessions, second["id"])]
    finally:
        engine.dispose()

    # Sample for sample outside chapter 7 (index 6): every chapter before it, and every one after.
    before, after = _samples(stack, key, first["id"]), _samples(stack, key, second["id"])
    starts_before, starts_after = _chapter_starts(stack, key, first["id"]), _chapter_starts(stack, key, second["id"])
    assert len(starts_before) == len(starts_after) == 20
    assert starts_before[:7] == starts_after[:7]
    margin = RATE // 10  # 100 ms into the 2 s pause before a chapter: silence in both files
    head = int(round(starts_before[6] * RATE)) - margin
    np.testing.assert_array_equal(after[:head], before[:head])
    # From 100 ms before chapter 8 to the end (timestamps are rounded: a few samples either way
    # fall in the pause's silence).
    tail = min(len(before) - int(round(starts_before[7] * RATE)), len(after) - int(round(starts_after[7] * RATE))) + margin
    np.testing.assert_array_equal(after[-tail:], before[-tail:])
    assert head > RATE * 60 and tail > RATE * 60 * 5  # most of the book, not a sliver of it
