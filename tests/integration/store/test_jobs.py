"""store/db/jobs.py: idempotent submission, account scoping, chunks counted once."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session

from store.db import (
    Account,
    add_chunks,
    create_account,
    create_job,
    get_job,
    list_chunks,
    list_jobs,
    list_webhook_attempts,
    make_engine,
    make_sessionmaker,
    mark_chunk_done,
    pending_chunks,
    record_webhook_attempt,
    session_scope,
    set_job_status,
)
from store.errors import IdempotencyConflict, JobNotFound
from store.status import IllegalTransition, JobStatus
from tests.fixtures.postgres import race_behind

PARAMS = {"speaker": "lola", "modelId": "mist", "lang": "en", "format": "mp3"}


def _account(session: Session) -> Account:
    return create_account(session=session, name=f"jobs-{uuid.uuid4().hex[:8]}")


def _job(session: Session, account: Account, **kwargs: object) -> uuid.UUID:
    job, created = create_job(
        session=session,
        account_id=account.id,
        request_hash="hash-1",
        params=PARAMS,
        characters=42,
        **kwargs,  # type: ignore[arg-type]
    )
    assert created
    return job.id


def test_create_job_defaults(db_session: Session) -> None:
    account = _account(db_session)
    job_id = uuid.uuid4()
    job, created = create_job(
        session=db_session,
        account_id=account.id,
        request_hash="h",
        params=PARAMS,
        characters=42,
        text_key=f"jobs/{job_id}/text.txt",
        webhook_url="https://example.com/hook",
        job_id=job_id,
    )
    assert created and job.id == job_id
    assert (job.status, job.chunks_total, job.chunks_done, job.characters) == ("queued", 0, 0, 42)
    assert job.params == PARAMS and job.text_key == f"jobs/{job_id}/text.txt"
    assert job.created_at.tzinfo is not None and job.started_at is None and job.finished_at is None


def test_same_idempotency_key_and_body_returns_the_same_job(db_session: Session) -> None:
    account = _account(db_session)
    first, created_first = create_job(
        session=db_session,
        account_id=account.id,
        request_hash="h1",
        params=PARAMS,
        characters=1,
        idempotency_key="k",
    )
    again, created_again = create_job(
        session=db_session,
        account_id=account.id,
        request_hash="h1",
        params=PARAMS,
        characters=1,
        idempotency_key="k",
    )
    assert created_first and not created_again
    assert again.id == first.id
    assert len(list_jobs(session=db_session, account_id=account.id)) == 1


def test_same_idempotency_key_different_body_conflicts(db_session: Session) -> None:
    account = _account(db_session)
    create_job(
        session=db_session,
        account_id=account.id,
        request_hash="h1",
        params=PARAMS,
        characters=1,
        idempotency_key="k",
    )
    with pytest.raises(IdempotencyConflict):
        create_job(
            session=db_session,
            account_id=account.id,
            request_hash="h2",
            params=PARAMS,
            characters=1,
            idempotency_key="k",
        )


def test_idempotency_keys_are_per_account_and_optional(db_session: Session) -> None:
    one, two = _account(db_session), _account(db_session)
    a, _ = create_job(
        session=db_session, account_id=one.id, request_hash="h", params={}, characters=1, idempotency_key="k"
    )
    b, created = create_job(
        session=db_session, account_id=two.id, request_hash="h", params={}, characters=1, idempotency_key="k"
    )
    assert created and a.id != b.id
    # Without a key every submission is a new job.
    c, _ = create_job(session=db_session, account_id=one.id, request_hash="h", params={}, characters=1)
    d, _ = create_job(session=db_session, account_id=one.id, request_hash="h", params={}, characters=1)
    assert len({a.id, c.id, d.id}) == 3


def test_concurrent_submissions_with_one_key_make_one_job(pg_url: str) -> None:
    engine = make_engine(pg_url)
    factory = make_sessionmaker(engine)
    try:
        with session_scope(factory) as session:
            account_id = _account(session).id

        def submission(session: Session) -> tuple[uuid.UUID, bool]:
            job, created = create_job(
                session=session, account_id=account_id, request_hash="h", params={}, characters=1,
                idempotency_key="race",
            )
            return job.id, created

        (first_id, created), second = race_behind(engine, factory, submission, submission)
        assert created and second == (first_id, False)
    finally:
        engine.dispose()


def test_get_job_is_scoped_to_the_account(db_session: Session) -> None:
    owner, stranger = _account(db_session), _account(db_session)
    job_id = _job(db_session, owner)
    assert get_job(session=db_session, job_id=job_id, account_id=owner.id).id == job_id
    with pytest.raises(JobNotFound):
        get_job(session=db_session, job_id=job_id, account_id=stranger.id)
    assert get_job(session=db_session, job_id=job_id, account_id=None).id == job_id  # internal callers
    with pytest.raises(JobNotFound):
        get_job(session=db_session, job_id=uuid.uuid4(), account_id=owner.id)


def test_list_jobs_newest_first_paginated(db_session: Session) -> None:
    account, other = _account(db_session), _account(db_session)
    _job(db_session, other)
    ids = []
    base = datetime(2030, 1, 1, tzinfo=UTC)
    for minute in range(5):
        job_id = _job(db_session, account)
        get_job(session=db_session, job_id=job_id, account_id=None).created_at = base + timedelta(
            minutes=minute
        )
        ids.append(job_id)
    db_session.flush()
    newest_first = list(reversed(ids))
    assert [j.id for j in list_jobs(session=db_session, account_id=account.id)] == newest_first
    assert [j.id for j in list_jobs(session=db_session, account_id=account.id, limit=2)] == newest_first[:2]
    assert [
        j.id for j in list_jobs(session=db_session, account_id=account.id, limit=2, offset=2)
    ] == newest_first[2:4]
    set_job_status(session=db_session, job_id=ids[0], status="failed", error="x")
    assert [j.id for j in list_jobs(session=db_session, account_id=account.id, status="failed")] == [ids[0]]


def test_set_job_status_timestamps_and_compare_and_set(db_session: Session) -> None:
    account = _account(db_session)
    job_id = _job(db_session, account)
    assert set_job_status(session=db_session, job_id=job_id, status="planning", expected=["queued"])
    assert not set_job_status(
        session=db_session, job_id=job_id, status="planning", expected=["queued"]
    )  # a repeat
    job = get_job(session=db_session, job_id=job_id, account_id=account.id)
    assert job.status == "planning" and job.started_at is not None and job.finished_at is None
    started = job.started_at
    assert set_job_status(session=db_session, job_id=job_id, status="running")
    assert job.started_at == started  # kept from the first start
    assert not set_job_status(session=db_session, job_id=job_id, status="succeeded")  # only from assembling
    assert job.status == JobStatus.RUNNING and job.finished_at is None
    assert set_job_status(session=db_session, job_id=job_id, status=JobStatus.ASSEMBLING)
    assert set_job_status(
        session=db_session,
        job_id=job_id,
        status="succeeded",
        result_key="jobs/x/out.mp3",
        result_content_type="audio/mpeg",
        audio_seconds=12.5,
    )
    assert job.status == "succeeded" and job.is_terminal
    assert (job.result_key, job.result_content_type, job.audio_seconds) == (
        "jobs/x/out.mp3",
        "audio/mpeg",
        12.5,
    )
    assert job.finished_at is not None
    # A late cancel must not overwrite a finished job.
    assert not set_job_status(
        session=db_session, job_id=job_id, status="canceled", expected=["queued", "running"]
    )
    with pytest.raises(JobNotFound):
        set_job_status(session=db_session, job_id=uuid.uuid4(), status="running")
    with pytest.raises(ValueError):
        set_job_status(session=db_session, job_id=job_id, status="exploded")


def test_the_transitions_table_refuses_illegal_moves(db_session: Session) -> None:
    """Every move the table forbids leaves the row as it was; asking for one by name is an error."""
    account = _account(db_session)
    job_id = _job(db_session, account)
    job = get_job(session=db_session, job_id=job_id, account_id=account.id)
    for illegal in (JobStatus.ASSEMBLING, JobStatus.SUCCEEDED, JobStatus.QUEUED):
        assert not set_job_status(session=db_session, job_id=job_id, status=illegal)
        assert job.status == JobStatus.QUEUED and job.started_at is None
    with pytest.raises(IllegalTransition, match="from succeeded to canceled"):
        set_job_status(session=db_session, job_id=job_id, status=JobStatus.CANCELED, expected=[JobStatus.SUCCEEDED])
    assert set_job_status(session=db_session, job_id=job_id, status=JobStatus.CANCELED)
    for after_the_end in JobStatus:  # an ended job never moves again
        assert not set_job_status(session=db_session, job_id=job_id, status=after_the_end)
    assert job.status == JobStatus.CANCELED


def test_chunks_are_added_once_and_counted_once(db_session: Session) -> None:
    account = _account(db_session)
    job_id = _job(db_session, account)
    texts = ["Hello there.", "General Kenobi!", "You are a bold one."]
    billed = [12, 16, 20]  # what the scheduler says each bills (the store keeps it as given)
    assert add_chunks(session=db_session, job_id=job_id, texts=texts, characters=billed) == 3
    assert add_chunks(session=db_session, job_id=job_id, texts=texts, characters=billed) == 3  # a repeated planning step
    assert [c.text for c in pending_chunks(session=db_session, job_id=job_id)] == texts
    assert [c.characters for c in list_chunks(session=db_session, job_id=job_id)] == billed

    assert mark_chunk_done(session=db_session, job_id=job_id, index=1, audio_key="a/1.f32", duration_s=1.25)
    assert not mark_chunk_done(session=db_session, job_id=job_id, index=1, audio_key="other", duration_s=9.0)
    job = get_job(session=db_session, job_id=job_id, account_id=account.id)
    assert (job.chunks_total, job.chunks_done) == (3, 1)
    assert [c.index for c in pending_chunks(session=db_session, job_id=job_id)] == [0, 2]
    done = list_chunks(session=db_session, job_id=job_id)[1]
    assert (done.status, done.audio_key, done.duration_s) == (
        "done",
        "a/1.f32",
        1.25,
    )  # the repeat changed nothing
    with pytest.raises(JobNotFound):
        mark_chunk_done(session=db_session, job_id=job_id, index=99, audio_key="x", duration_s=1.0)
    with pytest.raises(JobNotFound):
        add_chunks(session=db_session, job_id=uuid.uuid4(), texts=[], characters=[])


def test_a_group_of_chunks_is_marked_done_together_each_once(db_session: Session) -> None:
    from store.db.jobs import mark_chunks_done

    account = _account(db_session)
    job_id = _job(db_session, account)
    add_chunks(session=db_session, job_id=job_id, texts=["a.", "b.", "c.", "d."], characters=[2, 3, 3, 3])
    assert mark_chunk_done(session=db_session, job_id=job_id, index=2, audio_key="k2", duration_s=2.0)
    marked = mark_chunks_done(
        session=db_session, job_id=job_id, done=[(3, "k3", 3.0), (2, "again", 9.0), (0, "k0", 0.5)]
    )
    assert marked == [3, 0]  # given order; chunk 2 was done already and stays as it was
    chunks = list_chunks(session=db_session, job_id=job_id)
    assert [(c.status, c.audio_key, c.duration_s) for c in chunks] == [
        ("done", "k0", 0.5), ("pending", None, None), ("done", "k2", 2.0), ("done", "k3", 3.0),
    ]
    assert get_job(session=db_session, job_id=job_id, account_id=None).chunks_done == 3
    assert mark_chunks_done(session=db_session, job_id=job_id, done=[(3, "k3", 3.0)]) == []
    with pytest.raises(JobNotFound, match="no chunk 7"):
        mark_chunks_done(session=db_session, job_id=job_id, done=[(1, "k1", 1.0), (7, "k7", 1.0)])
    set_job_status(session=db_session, job_id=job_id, status="canceled")
    assert mark_chunks_done(session=db_session, job_id=job_id, done=[(1, "k1", 1.0)]) == []  # an ended job
    assert get_job(session=db_session, job_id=job_id, account_id=None).chunks_done == 3


def test_two_workers_marking_one_chunk_count_it_once(pg_url: str) -> None:
    engine = make_engine(pg_url)
    factory = make_sessionmaker(engine)
    try:
        with session_scope(factory) as session:
            job_id = _job(session, _account(session))
            add_chunks(session=session, job_id=job_id, texts=["a.", "b."], characters=[2, 3])
        def mark(session: Session) -> bool:
            return mark_chunk_done(session=session, job_id=job_id, index=0, audio_key="k", duration_s=1.0)

        first, second = race_behind(engine, factory, mark, mark)
        assert (first, second) == (True, False)
        with session_scope(factory) as session:
            assert get_job(session=session, job_id=job_id, account_id=None).chunks_done == 1
    finally:
        engine.dispose()


def test_webhook_attempts_are_logged(db_session: Session) -> None:
    account = _account(db_session)
    job_id = _job(db_session, account)
    record_webhook_attempt(
        session=db_session,
        job_id=job_id,
        attempt=1,
        url="https://example.com/h",
        event="job.succeeded",
        delivered=False,
        error="timeout",
    )
    record_webhook_attempt(
        session=db_session,
        job_id=job_id,
        attempt=2,
        url="https://example.com/h",
        event="job.succeeded",
        delivered=True,
        status_code=204,
    )
    attempts = list_webhook_attempts(session=db_session, job_id=job_id)
    assert [(a.attempt, a.delivered, a.status_code, a.error) for a in attempts] == [
        (1, False, None, "timeout"),
        (2, True, 204, None),
    ]
