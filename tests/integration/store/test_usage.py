"""store/db/usage.py: streaming rows are billed per request, job chunks exactly once."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from store.db import (
    Account,
    Usage,
    create_account,
    create_job,
    make_engine,
    make_sessionmaker,
    record_usage,
    session_scope,
    usage_totals,
)
from tests.fixtures.postgres import race_behind, race_together


def _account(session: Session) -> Account:
    return create_account(session=session, name=f"usage-{uuid.uuid4().hex[:8]}")


def _rows(session: Session, account_id: uuid.UUID) -> int:
    return session.scalar(select(func.count()).select_from(Usage).where(Usage.account_id == account_id)) or 0


def test_streaming_requests_are_each_billed(db_session: Session) -> None:
    account = _account(db_session)
    for _ in range(2):  # a retried request is billed again (the vendor API contract)
        assert record_usage(
            session=db_session,
            account_id=account.id,
            transport="http",
            model="mist",
            speaker="lola",
            characters=12,
        )
    assert _rows(db_session, account.id) == 2


def test_a_groups_chunks_are_billed_in_one_statement_each_once(db_session: Session) -> None:
    from store.db.usage import record_job_usage

    account = _account(db_session)
    job, _ = create_job(session=db_session, account_id=account.id, request_hash="h", params={}, characters=30)
    kwargs = dict(account_id=account.id, job_id=job.id, model="mistv3", speaker="joe", lang="en")
    record_job_usage(session=db_session, chunks=[(0, 10, 1.5), (1, 12, 2.0)], **kwargs)  # type: ignore[arg-type]
    record_job_usage(session=db_session, chunks=[(1, 12, 2.0), (2, 8, 1.0)], **kwargs)  # type: ignore[arg-type]
    rows = db_session.execute(
        select(Usage.chunk_index, Usage.characters, Usage.audio_seconds, Usage.transport)
        .where(Usage.job_id == job.id)
        .order_by(Usage.chunk_index)
    ).all()
    assert [tuple(r) for r in rows] == [(0, 10, 1.5, "job"), (1, 12, 2.0, "job"), (2, 8, 1.0, "job")]
    with pytest.raises(ValueError, match="negative"):
        record_job_usage(session=db_session, chunks=[(3, -1, 1.0)], **kwargs)  # type: ignore[arg-type]


def test_a_job_chunk_is_billed_once(db_session: Session) -> None:
    account = _account(db_session)
    job, _ = create_job(session=db_session, account_id=account.id, request_hash="h", params={}, characters=20)
    kwargs = dict(account_id=account.id, transport="job", model="mist", speaker="lola", job_id=job.id)
    assert record_usage(session=db_session, chunk_index=0, characters=10, **kwargs)  # type: ignore[arg-type]
    assert not record_usage(session=db_session, chunk_index=0, characters=10, **kwargs)  # type: ignore[arg-type]
    assert record_usage(session=db_session, chunk_index=1, characters=10, **kwargs)  # type: ignore[arg-type]
    assert _rows(db_session, account.id) == 2


@pytest.mark.parametrize(
    ("transport", "with_job"),
    [("job", False), ("http", True), ("carrier-pigeon", False)],
)
def test_inconsistent_rows_are_refused(db_session: Session, transport: str, with_job: bool) -> None:
    account = _account(db_session)
    job, _ = create_job(session=db_session, account_id=account.id, request_hash="h", params={}, characters=1)
    with pytest.raises(ValueError):
        record_usage(
            session=db_session,
            account_id=account.id,
            transport=transport,
            model="mist",
            speaker="lola",
            characters=1,
            job_id=job.id if with_job else None,
            chunk_index=0 if with_job else None,
        )


def test_two_workers_racing_on_one_chunk_bill_it_once(pg_url: str) -> None:
    """Worker A bills a chunk and has not committed; worker B bills the same chunk on another
    connection and must wait, then insert nothing. Exactly one row, exactly one True."""
    engine = make_engine(pg_url)
    factory = make_sessionmaker(engine)
    try:
        with session_scope(factory) as session:
            account = _account(session)
            job, _ = create_job(
                session=session, account_id=account.id, request_hash="h", params={}, characters=9
            )
        kwargs = dict(
            account_id=account.id,
            transport="job",
            model="mist",
            speaker="lola",
            characters=9,
            job_id=job.id,
            chunk_index=3,
        )
        def bill(session: Session) -> bool:
            return record_usage(session=session, **kwargs)  # type: ignore[arg-type]

        # B is blocked behind A's uncommitted row, then finds it.
        assert race_behind(engine, factory, bill, bill) == (True, False)
        with session_scope(factory) as session:
            assert _rows(session, account.id) == 1
    finally:
        engine.dispose()


def test_many_threads_racing_bill_once(pg_url: str) -> None:
    """Free-running variant: four connections released together by a barrier."""
    engine = make_engine(pg_url, pool=False)
    factory = make_sessionmaker(engine)
    try:
        with session_scope(factory) as session:
            account = _account(session)
            job, _ = create_job(
                session=session, account_id=account.id, request_hash="h", params={}, characters=9
            )

        def bill(session: Session) -> bool:
            return record_usage(
                session=session, account_id=account.id, transport="job", model="mist", speaker="lola",
                characters=9, job_id=job.id, chunk_index=0,
            )

        results = race_together(factory, 4, bill)
        assert sorted(results, key=str) == [False, False, False, True], results
        with session_scope(factory) as session:
            assert _rows(session, account.id) == 1
    finally:
        engine.dispose()


def test_usage_totals_by_account_and_model(db_session: Session) -> None:
    account, other = _account(db_session), _account(db_session)
    for model, characters in (("mist", 10), ("mist", 5), ("coda", 7)):
        record_usage(
            session=db_session,
            account_id=account.id,
            transport="ws",
            model=model,
            speaker="x",
            characters=characters,
            audio_seconds=1.5,
        )
    record_usage(
        session=db_session, account_id=other.id, transport="http", model="mist", speaker="x", characters=99
    )
    now = datetime.now(UTC)
    totals = usage_totals(
        session=db_session,
        start=now - timedelta(hours=1),
        end=now + timedelta(hours=1),
        account_id=account.id,
    )
    assert [(t.model, t.rows, t.characters, t.audio_seconds) for t in totals] == [
        ("coda", 1, 7, 1.5),
        ("mist", 2, 15, 3.0),
    ]
    everyone = usage_totals(session=db_session, start=now - timedelta(hours=1), end=now + timedelta(hours=1))
    assert {(t.account_name, t.model) for t in everyone} >= {(account.name, "mist"), (other.name, "mist")}
    assert (
        usage_totals(
            session=db_session,
            start=now + timedelta(hours=1),
            end=now + timedelta(hours=2),
            account_id=account.id,
        )
        == []
    )
