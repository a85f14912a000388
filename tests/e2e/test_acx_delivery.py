"""ACX delivery through the real job pipeline: plan (with credits), synthesis by the real voice
(joe), assembly into a zip of chapter MP3s, a retail sample and a compliance report.

The rules are measured here with the test's own meter (numpy on the MP3s decoded by PyAV, frame
sizes read from the packets), never with lector's, and compared with the report lector wrote."""

from __future__ import annotations

import io
import json
import math
import uuid
import zipfile
from collections.abc import Iterator
from typing import Any

import av
import numpy as np
import pytest

from scheduler import assembly, intake, planning, synthesis
from scheduler.objects import compliance_key
from speech.billing import billed_characters
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from store.db import accounts, usage
from store.db import jobs as job_repo
from store.db.session import make_engine, make_sessionmaker, scoped_sessions
from store.objects.local import LocalObjectStore
from tests.support.books import excerpt

pytestmark = [pytest.mark.integration]
TITLE, AUTHOR = "Pride and Prejudice", "Jane Austen"


def _decode(data: bytes) -> tuple[np.ndarray, int, list[int], int]:
    """Samples, rate, every packet's size and the stream's bit rate of an MP3."""
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.audio[0]
        rate, bit_rate = stream.codec_context.sample_rate, stream.bit_rate
        sizes, frames = [], []
        for packet in container.demux(stream):
            if packet.size:
                sizes.append(packet.size)
            frames.extend(f.to_ndarray().reshape(-1) for f in packet.decode())
    return np.concatenate(frames).astype(np.float64), rate, sizes, bit_rate


def _db(x: float) -> float:
    return 20 * math.log10(x) if x > 0 else float("-inf")


def _own_meter(x: np.ndarray, rate: int) -> dict[str, float]:
    """ACX's rules as the test reads them: whole-file RMS, sample peak, the quietest half second's
    RMS, and the time before the first and after the last 10 ms window over -45 dBFS (speech)."""
    hop = rate // 100
    windows = np.sqrt(np.mean(x[: len(x) // hop * hop].reshape(-1, hop) ** 2, axis=1))
    half = 50  # 500 ms in 10 ms windows
    energy = np.convolve(windows**2, np.ones(half) / half, mode="valid")[::10]
    speech = np.flatnonzero(windows > 10 ** (-45 / 20))
    return {
        "RMS": _db(float(np.sqrt(np.mean(x**2)))),
        "peak": _db(float(np.max(np.abs(x)))),
        "noise floor": _db(float(np.sqrt(np.min(energy)))),
        "room tone at the head": speech[0] * hop / rate,
        "room tone at the tail": len(x) / rate - (speech[-1] + 1) * hop / rate,
        "duration": len(x) / rate / 60,
    }


@pytest.fixture(scope="module")
def delivered(pg_url: str, tmp_path_factory: pytest.TempPathFactory, vits_engine: Any) -> Iterator[dict[str, Any]]:
    engine = make_engine(pg_url)
    sessions = scoped_sessions(make_sessionmaker(engine))
    objects = LocalObjectStore(tmp_path_factory.mktemp("objects"))
    text = f"Chapter 1\n\n{excerpt(900)}\n\nChapter 2\n\n{excerpt(600, start_at='Mr. Bennet was so odd a mixture')}"
    spec = intake.JobSpec(text=text, speaker="joe", model_id="mistv3", lang="en", title=TITLE, author=AUTHOR,
                          format="mp3", delivery="acx")
    with sessions() as session:
        account = accounts.create_account(session=session, name=f"acx-{uuid.uuid4().hex[:8]}").id
        job, _ = intake.submit_job(session=session, objects=objects, account_id=account, spec=spec)
        job_id = job.id
    with sessions() as session:
        todo = planning.plan_job(session=session, objects=objects, job_id=job_id, batch_chars=4000, window=1 << 20)
    for batch in todo:
        synthesis.synthesize_batch(
            sessions=sessions, objects=objects, synthesizer=Synthesizer(lambda voice: vits_engine),
            catalog=Catalog.load(), job_id=job_id, indices=batch.indices, group_chars=1500,
        )
    assert assembly.assemble_job(sessions=sessions, objects=objects, job_id=job_id)
    with sessions() as session:
        row = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        chunks = [c.text for c in job_repo.list_chunks(session=session, job_id=job_id)]
        billed = usage.job_billed_characters(session=session, job_id=job_id)
        result = (row.status, row.result_key, row.result_content_type)
    archive = zipfile.ZipFile(io.BytesIO(objects.get_bytes(result[1])))
    yield {
        "result": result, "zip": archive, "chunks": chunks, "billed": billed, "text": text,
        "report": json.loads(objects.get_bytes(compliance_key(job_id))),
    }
    engine.dispose()


def test_the_result_is_a_zip_of_chapter_files_credits_and_a_sample(delivered: dict[str, Any]) -> None:
    status, key, content_type = delivered["result"]
    assert status == "succeeded" and key.endswith(".zip") and content_type == "application/zip"
    names = delivered["zip"].namelist()
    mp3s = sorted(n for n in names if n.endswith(".mp3"))
    assert mp3s[0].endswith("Opening Credits.mp3") and mp3s[-2].endswith("Closing Credits.mp3")
    assert any("Chapter 1" in n for n in mp3s) and any("Chapter 2" in n for n in mp3s)
    assert "Retail Sample.mp3" in mp3s and "compliance.json" in names
    # credits are spoken from the title, author and voice, and billed nothing
    assert f"{TITLE}. Written by {AUTHOR}. Narrated by Joe" in delivered["chunks"][0]
    assert "This has been" in delivered["chunks"][-1] and AUTHOR in delivered["chunks"][-1]
    assert delivered["billed"] == billed_characters(delivered["text"])


def test_every_file_meets_acx_by_the_tests_own_meter(delivered: dict[str, Any]) -> None:
    archive: zipfile.ZipFile = delivered["zip"]
    report = {f["file"]: f for f in delivered["report"]["files"]}
    assert delivered["report"]["pass"] and set(report) == {n for n in archive.namelist() if n.endswith(".mp3")}
    for name in report:
        x, rate, sizes, bit_rate = _decode(archive.read(name))
        own = _own_meter(x, rate)
        print(f"\nACX {name} (test's meter): " + ", ".join(f"{k} {v:.2f}" for k, v in own.items()))
        print(f"ACX {name} (lector's report): " + ", ".join(
            f"{r['rule']} {r['measured']} {r['limit']} {'pass' if r['pass'] else 'FAIL'}" for r in report[name]["rules"]
        ))
        assert rate == 44100 and bit_rate == 192000
        assert set(sizes) <= {626, 627}  # 192 kb/s CBR at 44.1 kHz: 1152 * 192000 / 8 / 44100 bytes a frame
        assert -23.0 <= own["RMS"] <= -18.0, name
        assert own["peak"] <= -3.0, name
        assert -90.0 < own["noise floor"] <= -60.0, name  # a noise bed, not digital silence
        assert 0.5 <= own["room tone at the head"] <= 1.0, name
        assert 1.0 <= own["room tone at the tail"] <= 5.0, name
        low, high = (1.0, 5.0) if report[name]["retailSample"] else (0.0, 120.0)
        assert low <= own["duration"] <= high, name
        # lector's report says what the test's meter measures
        for rule in report[name]["rules"]:
            if rule["rule"] in own:
                assert rule["pass"] and rule["measured"] == pytest.approx(own[rule["rule"]], abs=0.15), (name, rule)
