"""The job pipeline in one process on real PostgreSQL and a local object store, with a tone engine
standing in for the voice (what is tested here is scheduling, billing and storage, not speech):
fair batch dispatch, cancel stopping synthesis and billing, retention, and a chaptered book."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import av
import pytest
from mutagen.mp4 import MP4
from sqlalchemy import text

from books.chunks import meta_key_of
from scheduler import assembly, fair_share, intake, planning, retention, synthesis
from scheduler.objects import job_prefix, timestamps_key, vtt_key
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from store.db import accounts
from store.db import jobs as job_repo
from store.db.session import make_engine, make_sessionmaker, scoped_sessions
from store.objects.local import LocalObjectStore
from store.status import JobStatus
from tests.fixtures.epub import png
from tests.support.fake_engine import ToneEngine
from tests.support.job_state import force_status

pytestmark = [pytest.mark.integration]
BODY = "The rain fell on the roof of the old house. Nobody inside heard it at all. " * 5


@pytest.fixture
def env(pg_url: str, tmp_path: Path) -> Iterator[dict[str, Any]]:
    engine = make_engine(pg_url)
    factory = make_sessionmaker(engine)

    sessions = scoped_sessions(factory)

    with sessions() as session:
        account_id = accounts.create_account(session=session, name=f"pipe-{uuid.uuid4().hex[:8]}").id
    yield {"sessions": sessions, "objects": LocalObjectStore(tmp_path / "objects"), "account": account_id, "engine": engine}
    engine.dispose()


def _submit(env: dict[str, Any], book: str, **options: Any) -> uuid.UUID:
    spec = intake.JobSpec(text=book, speaker="joe", model_id="mistv3", lang="en", **options)
    with env["sessions"]() as session:
        job, _ = intake.submit_job(session=session, objects=env["objects"], account_id=env["account"], spec=spec)
        return job.id


def _job(env: dict[str, Any], job_id: uuid.UUID) -> Any:
    with env["sessions"]() as session:
        job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        session.expunge(job)
        return job


def test_a_job_hands_out_its_batches_a_window_at_a_time_each_once(env: dict[str, Any]) -> None:
    job_id = _submit(env, BODY * 10)
    with env["sessions"]() as session:
        first = planning.plan_job(session=session, objects=env["objects"], job_id=job_id, batch_chars=300, window=2)
    assert len(first) == 2 and {h.job_id for h in first} == {job_id}
    handed = [h.indices for h in first]
    ending = list(handed)
    while ending:  # each batch's end hands on the next one: the window stays full
        with env["sessions"]() as session:
            more = fair_share.batch_ended(session=session, job_id=job_id, indices=ending.pop(0), window=2)
        assert len(more) <= 1
        handed.extend(h.indices for h in more)
        ending.extend(h.indices for h in more)
    with env["sessions"]() as session:
        chunks = job_repo.list_chunks(session=session, job_id=job_id)
    flat = [i for batch in handed for i in batch]
    assert sorted(flat) == [c.index for c in chunks]  # every chunk in exactly one batch
    assert len(handed) > 3

    # A resumed plan (the reaper) hands out again what was handed out and is still pending.
    with env["sessions"]() as session:
        again = planning.plan_job(session=session, objects=env["objects"], job_id=job_id, batch_chars=300, window=2)
    assert sorted(i for h in again for i in h.indices) == sorted(flat)


def test_cancel_stops_synthesis_within_a_group_and_bills_nothing_after(env: dict[str, Any]) -> None:
    job_id = _submit(env, BODY * 12)
    with env["sessions"]() as session:
        todo = planning.plan_job(session=session, objects=env["objects"], job_id=job_id, batch_chars=4000, window=1 << 20)
    everything = sorted(i for b in todo for i in b.indices)
    tone = ToneEngine(per_item_s=0.05)
    result: list[Any] = []
    worker = threading.Thread(
        target=lambda: result.append(
            synthesis.synthesize_batch(
                sessions=env["sessions"], objects=env["objects"], synthesizer=Synthesizer(lambda voice: tone),
                catalog=Catalog.load(), job_id=job_id, indices=everything, group_chars=1500,
                on_stored=lambda: None,  # each engine call's chunks committed as stored (the live playlist's way)
            )
        )
    )
    worker.start()
    while _job(env, job_id).chunks_done == 0:
        time.sleep(0.01)
    with env["sessions"]() as session:
        assert job_repo.set_job_status(session=session, job_id=job_id, status="canceled", expected=("running",))
    canceled_at = time.monotonic()
    worker.join(30)
    stopped_in = time.monotonic() - canceled_at
    assert result and result[0].canceled
    assert stopped_in < 5.0
    job = _job(env, job_id)
    assert 0 < job.chunks_done < job.chunks_total
    with env["engine"].connect() as conn:
        billed = conn.execute(text("SELECT count(*) FROM usage WHERE job_id = :j"), {"j": job_id}).scalar_one()
    assert billed == job.chunks_done  # chunks finished after the cancel were neither counted nor billed
    with env["sessions"]() as session:
        assert not job_repo.mark_chunk_done(
            session=session, job_id=job_id, index=job.chunks_total - 1, audio_key="k", duration_s=1.0
        )


def test_cancel_mid_batch_marks_and_bills_nothing_when_the_batch_commits_once(env: dict[str, Any]) -> None:
    """Without the live playlist a batch's chunks are marked and billed in its last transaction:
    a cancel during its engine calls leaves every chunk pending and nothing billed."""
    job_id = _submit(env, BODY * 12)
    with env["sessions"]() as session:
        todo = planning.plan_job(session=session, objects=env["objects"], job_id=job_id, batch_chars=4000, window=1 << 20)
    everything = sorted(i for b in todo for i in b.indices)
    tone = ToneEngine(per_item_s=0.05)
    result: list[Any] = []
    worker = threading.Thread(
        target=lambda: result.append(
            synthesis.synthesize_batch(
                sessions=env["sessions"], objects=env["objects"], synthesizer=Synthesizer(lambda voice: tone),
                catalog=Catalog.load(), job_id=job_id, indices=everything, group_chars=1500,
            )
        )
    )
    worker.start()
    while not tone.calls:  # the first engine call has begun
        time.sleep(0.01)
    with env["sessions"]() as session:
        assert job_repo.set_job_status(session=session, job_id=job_id, status=JobStatus.CANCELED, expected=(JobStatus.RUNNING,))
    worker.join(30)
    assert result and result[0].canceled and result[0].synthesized == 0
    assert len(tone.calls) == 1  # it stopped after the engine call it was in
    assert _job(env, job_id).chunks_done == 0
    with env["engine"].connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM usage WHERE job_id = :j"), {"j": job_id}).scalar_one() == 0


def test_retention_deletes_a_finished_jobs_objects_and_keeps_the_row(env: dict[str, Any]) -> None:
    objects = env["objects"]
    old, fresh = _submit(env, "Old text."), _submit(env, "New text.")
    for job_id in (old, fresh):
        objects.put_bytes(f"jobs/{job_id}/audio.mp3", b"mp3")
        with env["sessions"]() as session:
            force_status(session, job_id, JobStatus.SUCCEEDED, result_key=f"jobs/{job_id}/audio.mp3")
    with env["sessions"]() as session:
        session.execute(
            text("UPDATE jobs SET finished_at = now() - interval '40 days' WHERE id = :j"), {"j": old}
        )
    expired = retention.expire_all(sessions=env["sessions"], objects=objects, retention_days=30)
    assert expired >= 1
    assert list(objects.iter_keys(job_prefix(old))) == []
    assert list(objects.iter_keys(job_prefix(fresh))) != []
    row = _job(env, old)
    assert row.status == "succeeded" and row.result_key is None and retention.is_expired(row)
    assert row.characters == len("Old text.")
    assert not retention.is_expired(_job(env, fresh))
    later = datetime.now(UTC) + timedelta(days=1)
    with env["sessions"]() as session:  # a second sweep finds nothing more to do for it
        assert str(old) not in retention.expire_jobs(session=session, objects=objects, retention_days=30, now=later)


def test_a_chaptered_book_through_plan_synthesis_and_assembly(env: dict[str, Any]) -> None:
    book = (
        "The Project Gutenberg EBook of Rain\n\n*** START OF THIS PROJECT GUTENBERG EBOOK RAIN ***\n\n"
        "CONTENTS\n\nChapter 1\n\nChapter 2\n\n"
        f"Chapter 1\n\n{BODY}\n\nChapter 2\n\n{BODY}\n\n*** END OF THIS PROJECT GUTENBERG EBOOK RAIN ***\n\nLicence."
    )
    job_id = _submit(env, book, format="m4b", title="Rain", author="A. Writer", skip_front_matter=True)
    tone = ToneEngine()
    with env["sessions"]() as session:
        todo = planning.plan_job(session=session, objects=env["objects"], job_id=job_id, batch_chars=4000, window=1 << 20)
    for batch in todo:
        synthesis.synthesize_batch(
            sessions=env["sessions"], objects=env["objects"], synthesizer=Synthesizer(lambda voice: tone),
            catalog=Catalog.load(), job_id=job_id, indices=batch.indices, group_chars=1500,
        )
    assert assembly.assemble_job(sessions=env["sessions"], objects=env["objects"], job_id=job_id)
    job = _job(env, job_id)
    assert job.status == "succeeded"
    spoken = " ".join(s for call, _ in tone.calls for s in call)
    assert "CONTENTS" not in spoken and "Licence" not in spoken and "Gutenberg" not in spoken
    stamps = json.loads(env["objects"].get_bytes(timestamps_key(job_id)))
    assert [c["title"] for c in stamps["chapters"]] == ["Chapter 1", "Chapter 2"]
    path = env["objects"]._path(job.result_key)  # noqa: SLF001 - the local store's file
    with av.open(str(path)) as container:
        assert [c["metadata"]["title"] for c in container.chapters()] == ["Chapter 1", "Chapter 2"]
        assert container.metadata["title"] == "Rain"
    assert abs(stamps["chapters"][-1]["end"] - job.audio_seconds) < 0.05


def test_a_cast_book_mixes_voices_of_different_rates_into_a_tagged_m4b(env: dict[str, Any]) -> None:
    """Two voices at different rates (joe at 16 kHz, nora at 24 kHz here): each engine call holds
    one voice's chunks, every chunk lands at the narrator's rate, and the m4b names both voices
    and carries the uploaded cover."""
    book = "It was late.\n\n“Shall we walk?” said Elizabeth.\n\n“We shall,” Elizabeth said. “Come.”\n\nThey walked."
    cover = png()
    cast = {"narrator": "joe", "characters": {"Elizabeth": {"voice": "nora", "aliases": []}}, "dialogue": "joe"}
    spec = intake.JobSpec(text=book, speaker="joe", model_id="coda", lang="en", format="m4b", title="Walk",
                          author="A. Writer", cover_image=cover, cast=cast)
    with env["sessions"]() as session:
        job_id = intake.submit_job(session=session, objects=env["objects"], account_id=env["account"], spec=spec)[0].id
    engines = {"joe": ToneEngine(), "nora": ToneEngine()}
    engines["nora"].sample_rate = 24000
    synthesizer = Synthesizer(lambda voice: engines[voice.speaker])
    with env["sessions"]() as session:
        todo = planning.plan_job(session=session, objects=env["objects"], job_id=job_id, batch_chars=4000, window=1 << 20)
    for batch in todo:
        synthesis.synthesize_batch(
            sessions=env["sessions"], objects=env["objects"], synthesizer=synthesizer,
            catalog=Catalog.load(), job_id=job_id, indices=batch.indices, group_chars=1500,
        )
    assert assembly.assemble_job(sessions=env["sessions"], objects=env["objects"], job_id=job_id)
    assert _job(env, job_id).status == "succeeded"
    quotes = {s for call, _ in engines["nora"].calls for s in call}
    assert quotes == {"“Shall we walk?”", "“We shall,”", "“Come.”"}
    assert not quotes & {s for call, _ in engines["joe"].calls for s in call}
    with env["sessions"]() as session:
        keys = job_repo.chunk_audio_keys(session=session, job_id=job_id)
    assert len(keys) == _job(env, job_id).chunks_total
    metas = [json.loads(env["objects"].get_bytes(meta_key_of(str(key)))) for key in keys]
    assert {m["sample_rate"] for m in metas} == {16000}
    stamps = json.loads(env["objects"].get_bytes(timestamps_key(job_id)))
    assert {(s["text"], s["voice"], s["speaker"]) for s in stamps["sentences"]} >= {
        ("“Shall we walk?”", "nora", "Elizabeth"), ("said Elizabeth.", "joe", None), ("It was late.", "joe", None)}
    assert "<v Elizabeth>“Come.”</v>" in env["objects"].get_bytes(vtt_key(job_id)).decode()
    tags = MP4(str(env["objects"]._path(_job(env, job_id).result_key))).tags  # noqa: SLF001 - the local store's file
    assert tags is not None and tags["©wrt"] == ["joe, nora"] and bytes(tags["covr"][0]) == cover
    assert tags["©nam"] == ["Walk"] and tags["©ART"] == ["A. Writer"] and tags["stik"] == [2]
