"""The account's chunk cache on real PostgreSQL, the Swift S3 server and the real joe voice:
a revised book synthesizes only its changed chunks and bills nothing twice; expiring a job never
takes audio another job uses, and the cache's own retention is reference-safe."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from scheduler import planning, retention, synthesis
from scheduler.intake import JobSpec, submit_job
from scheduler.objects import cache_audio_key, cache_meta_key, cache_prefix, job_prefix
from speech.engines.base import numerics_of
from speech.engines.vits import VitsEngine
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from store.db import chunk_cache as cache_repo
from store.db import create_account, scoped_sessions
from store.db import jobs as job_repo
from store.db import usage as usage_repo
from store.db.models import Usage
from store.db.session import SessionFactory
from store.objects import S3ObjectStore
from store.status import JobStatus

FIRST = "Elizabeth walked to Meryton in the rain. Her boots were muddy."
SECOND = "Mr. Darcy said nothing at dinner. The evening was long and quiet."
THIRD = "Jane wrote a letter from London the next morning."
SECOND_EDITED = "Mr. Darcy said very little at dinner. The evening was long and quiet."


def _book(second: str) -> str:
    return f"{FIRST}\n\n{second}\n\n{THIRD}\n"


@pytest.fixture
def sessions(db_sessionmaker: sessionmaker[Session]) -> SessionFactory:
    return scoped_sessions(db_sessionmaker)


@pytest.fixture
def synthesizer(vits_engine: VitsEngine) -> Synthesizer:
    return Synthesizer(lambda voice: vits_engine)


def _run(sessions: SessionFactory, objects: S3ObjectStore, synthesizer: Synthesizer, account_id: uuid.UUID,
         text: str) -> tuple[uuid.UUID, synthesis.BatchResult]:
    """Submit, plan and synthesize every chunk of a job in one batch."""
    with sessions() as session:
        job, _ = submit_job(session=session, objects=objects, account_id=account_id,
                            spec=JobSpec(text=text, speaker="joe", model_id="mistv3", lang="en"))
        job_id = job.id
    with sessions() as session:
        planning.plan_job(session=session, objects=objects, job_id=job_id, batch_chars=10_000, window=8)
        indices = [c.index for c in job_repo.pending_chunks(session=session, job_id=job_id)]
    result = synthesis.synthesize_batch(
        sessions=sessions, objects=objects, synthesizer=synthesizer, catalog=Catalog.load(), job_id=job_id,
        indices=indices, group_chars=10_000,
    )
    return job_id, result


def _account(sessions: SessionFactory) -> uuid.UUID:
    with sessions() as session:
        return create_account(session=session, name=f"revise-{uuid.uuid4().hex[:8]}").id


def _finish(sessions: SessionFactory, job_id: uuid.UUID) -> None:
    with sessions() as session:
        assert job_repo.set_job_status(session=session, job_id=job_id, status=JobStatus.ASSEMBLING)
        assert job_repo.set_job_status(session=session, job_id=job_id, status=JobStatus.SUCCEEDED)


def _usage_rows(sessions: SessionFactory, job_id: uuid.UUID) -> int:
    with sessions() as session:
        return int(session.scalar(select(func.count()).select_from(Usage).where(Usage.job_id == job_id)) or 0)


def test_a_revision_renders_only_what_changed_and_retention_is_reference_safe(
    sessions: SessionFactory, s3_store: S3ObjectStore, synthesizer: Synthesizer
) -> None:
    objects = s3_store
    owner = _account(sessions)
    first, result = _run(sessions, objects, synthesizer, owner, _book(SECOND))
    with sessions() as session:
        chunks = job_repo.list_chunks(session=session, job_id=first)
        assert len(chunks) == 3 and result.synthesized == 3 and result.reused == 0
        assert result.billed == sum(c.characters for c in chunks)
        keys = {c.content_key for c in chunks}
        assert None not in keys and len(keys) == 3
        assert cache_repo.entry_keys(session=session, account_id=owner) == keys
    for key in keys:
        assert objects.exists(cache_audio_key(owner, str(key))) and objects.exists(cache_meta_key(owner, str(key)))

    # The corrected book: only the edited paragraph is synthesized and billed.
    revised, result = _run(sessions, objects, synthesizer, owner, _book(SECOND_EDITED))
    assert (result.synthesized, result.reused) == (3, 2)
    with sessions() as session:
        chunks = job_repo.list_chunks(session=session, job_id=revised)
        edited = next(c for c in chunks if "very little" in c.text)
        assert result.billed == edited.characters
        assert usage_repo.job_billed_characters(session=session, job_id=revised) == edited.characters
        reused_chars = job_repo.job_reused_characters(session=session, job_id=revised)
        assert reused_chars == sum(c.characters for c in chunks if c is not edited) > 0
        assert [c.reused for c in chunks] == [True, False, True]
        first_chunks = job_repo.list_chunks(session=session, job_id=first)
    assert _usage_rows(sessions, revised) == 1
    for old, new in zip(first_chunks, chunks, strict=True):
        if new.reused:  # the job's own copy of the audio the first job made
            assert new.audio_key and old.audio_key
            assert objects.get_bytes(new.audio_key) == objects.get_bytes(old.audio_key)

    # A redelivered batch changes nothing and bills nothing more.
    again = synthesis.synthesize_batch(
        sessions=sessions, objects=objects, synthesizer=synthesizer, catalog=Catalog.load(), job_id=revised,
        indices=[0, 1, 2], group_chars=10_000,
    )
    assert (again.synthesized, again.billed) == (0, 0) and _usage_rows(sessions, revised) == 1

    # Another account renders the same book afresh: the cache is the account's own.
    _, stranger = _run(sessions, objects, synthesizer, _account(sessions), _book(SECOND))
    assert (stranger.synthesized, stranger.reused) == (3, 0)

    # The first job expires: its prefix goes; the revision's audio, two thirds of it made by the
    # first job, is all there.
    _finish(sessions, first)
    later = datetime.now(UTC) + timedelta(days=31)
    with sessions() as session:
        assert str(first) in retention.expire_jobs(session=session, objects=objects, retention_days=30, now=later)
    assert not list(objects.iter_keys(job_prefix(first)))
    for chunk in chunks:
        assert chunk.audio_key and objects.get_bytes(chunk.audio_key)

    first_only = {c.content_key for c in first_chunks} - {c.content_key for c in chunks}
    assert len(first_only) == 1
    old_key = str(first_only.pop())
    # Within its retention an unreferenced entry stays; past it, only what no live job uses goes.
    # (The sweep covers every account: other tests' entries may go with these, so the counts
    # below are read per account.)
    with sessions() as session:
        held = cache_repo.entry_keys(session=session, account_id=owner)
        retention.expire_cache(session=session, objects=objects, retention_days=30)
        assert cache_repo.entry_keys(session=session, account_id=owner) == held and old_key in held
    with sessions() as session:
        assert retention.expire_cache(session=session, objects=objects, retention_days=30, now=later) >= 1
        assert cache_repo.entry_keys(session=session, account_id=owner) == {c.content_key for c in chunks}
    assert not objects.exists(cache_audio_key(owner, old_key)) and not objects.exists(cache_meta_key(owner, old_key))
    for chunk in chunks:
        assert objects.exists(cache_audio_key(owner, str(chunk.content_key)))

    # A book with the old paragraph again renders it (its entry is gone) and reuses the rest.
    third, result = _run(sessions, objects, synthesizer, owner, _book(SECOND))
    assert (result.synthesized, result.reused) == (3, 2)

    # Once every job that used them has expired, the entries go with their audio.
    for job_id in (revised, third):
        _finish(sessions, job_id)
    with sessions() as session:
        retention.expire_jobs(session=session, objects=objects, retention_days=30, now=later)
        assert len(cache_repo.entry_keys(session=session, account_id=owner)) == 4  # the old paragraph's again
    with sessions() as session:
        assert retention.expire_cache(session=session, objects=objects, retention_days=30, now=later) >= 4
        assert cache_repo.entry_keys(session=session, account_id=owner) == set()
    assert not list(objects.iter_keys(cache_prefix(owner)))


def test_an_entry_whose_audio_vanished_is_rendered_and_billed_again(
    sessions: SessionFactory, s3_store: S3ObjectStore, synthesizer: Synthesizer
) -> None:
    """A sweep that deleted the objects and died before the row leaves an entry without audio:
    the job that finds it renders the chunk (and bills it), and the entry has audio again."""
    owner = _account(sessions)
    first, _ = _run(sessions, s3_store, synthesizer, owner, _book(SECOND))
    with sessions() as session:
        lost = next(c for c in job_repo.list_chunks(session=session, job_id=first) if c.index == 1)
    s3_store.delete(cache_audio_key(owner, str(lost.content_key)))
    again, result = _run(sessions, s3_store, synthesizer, owner, _book(SECOND))
    assert (result.synthesized, result.reused, result.billed) == (3, 2, lost.characters)
    assert s3_store.exists(cache_audio_key(owner, str(lost.content_key)))
    with sessions() as session:
        assert usage_repo.job_billed_characters(session=session, job_id=again) == lost.characters


def test_a_deployment_that_changes_precision_renders_afresh_and_the_old_audio_stays_its_own(
    sessions: SessionFactory, s3_store: S3ObjectStore, synthesizer: Synthesizer, joe_paths: tuple[Path, Path]
) -> None:
    """The same book after the workers moved to another precision (``LECTOR_KOKORO_DTYPE``, or a
    host whose CPU picks another under ``auto``): no chunk of the old precision is handed back,
    every chunk is rendered and billed; back on the first precision, the cache serves it again."""
    model_path, config_path = joe_paths
    bf16 = VitsEngine.load(model_path, config_path, device="cpu", dtype="bfloat16", runtime="torch")
    assert (numerics_of(synthesizer.engine(Catalog.load().resolve("mistv3", "joe", "en"))), bf16.numerics) == (
        "float32", "bfloat16")
    owner = _account(sessions)
    first, _ = _run(sessions, s3_store, synthesizer, owner, _book(SECOND))
    other, result = _run(sessions, s3_store, Synthesizer(lambda voice: bf16), owner, _book(SECOND))
    assert (result.synthesized, result.reused) == (3, 0)
    with sessions() as session:
        assert result.billed == sum(c.characters for c in job_repo.list_chunks(session=session, job_id=other))
        keys = {c.content_key for c in job_repo.list_chunks(session=session, job_id=first)}
        assert not keys & {c.content_key for c in job_repo.list_chunks(session=session, job_id=other)}
    _, back = _run(sessions, s3_store, synthesizer, owner, _book(SECOND))
    assert (back.synthesized, back.reused, back.billed) == (3, 3, 0)
