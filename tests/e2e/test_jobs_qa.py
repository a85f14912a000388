"""``"qa": true`` through the whole service: the API, a Celery worker on the synth and cpu queues,
PostgreSQL, Redis and Swift. A clean short book is checked chunk by chunk by Whisper, nothing is
flagged, the report is in the job's JSON, and the check bills nothing beyond the text."""

from __future__ import annotations

import time

import httpx
import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BOOK = (
    "Chapter 1\n\n"
    "The baker opened his shop at five in the morning, long before the street was awake. "
    "A single lamp burned in the window of the lighthouse keeper's cottage.\n\n"
    "Chapter 2\n\n"
    "The museum closes early on Sundays, so we should arrive before lunch. "
    "When the storm passed, the whole valley smelled of wet grass and pine needles."
)


def test_a_clean_book_is_checked_and_nothing_is_flagged(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    auth = {"Authorization": f"Bearer {api_key}"}
    refused = httpx.post(
        f"{stack.api_url}/v1/jobs", headers=auth, timeout=30, json={"text": BOOK, "speaker": "joe", "qa": "yes"}
    )
    assert refused.status_code == 400 and "qa must be a boolean" in refused.text
    submitted = httpx.post(
        f"{stack.api_url}/v1/jobs", headers=auth, timeout=30,
        json={"text": BOOK, "speaker": "joe", "format": "mp3", "qa": True},
    )
    assert submitted.status_code == 202, submitted.text
    job_id = submitted.json()["id"]
    deadline = time.monotonic() + 300
    while (job := httpx.get(f"{stack.api_url}/v1/jobs/{job_id}", headers=auth).json())["status"] not in (
        "succeeded", "failed", "canceled",
    ):
        assert time.monotonic() < deadline, stack.log_text("worker1")[-3000:]
        if job["status"] == "running":  # the report is done only once every chunk is checked, which can
            qa = job["qa"]                # come before the job leaves running for assembly
            assert qa["status"] == "pending" or (qa["status"] == "done" and qa["checked"] == job["progress"]["chunksTotal"]), job
        time.sleep(0.5)
    assert job["status"] == "succeeded", (job, stack.log_text("worker1")[-3000:])
    report = job["qa"]
    assert report["status"] == "done"
    assert report["checked"] == job["progress"]["chunksTotal"] > 0
    assert report["flagged"] == 0 and report["passages"] == [], report
    assert report["model"] == "whisper-tiny.en" and report["asrCpuSeconds"] > 0
    assert report["audioSeconds"] == pytest.approx(job["durationSeconds"], abs=6.0)
    # The check, and any second rendering, bill nothing (a chunk another test of this account
    # rendered already is reused, not billed: the two add up).
    assert job["billedCharacters"] + job["reusedCharacters"] == job["characters"]
    # A job that did not ask for the check has no report.
    plain = httpx.post(f"{stack.api_url}/v1/jobs", headers=auth, timeout=30, json={"text": "Hello there.", "speaker": "joe"})
    assert "qa" not in httpx.get(f"{stack.api_url}/v1/jobs/{plain.json()['id']}", headers=auth).json()
