"""The usage rollup (migration 0002) and store/db/reports.py, against a real PostgreSQL.

Every check compares with a direct ``SELECT ... sum(...)`` over the raw ``usage`` rows, written
here independently of ``store/db/reports.py``: the rollup is exact, never sampled.
"""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import delete, text
from sqlalchemy.orm import Session

from store.db import (
    Account,
    ApiKey,
    Usage,
    create_account,
    create_job,
    create_key,
    make_engine,
    make_sessionmaker,
    record_usage,
    session_scope,
)
from store.db.migrate import downgrade, upgrade
from store.db.reports import DIMENSIONS, ReportRow, parse_group_by, report_csv, usage_report
from tests.fixtures.ledger import as_sums, assert_same, direct_sums
from tests.fixtures.postgres import race_together

DAY0 = datetime(2025, 3, 1, tzinfo=UTC)

def rollup_matches_raw(session: Session | Any, account_ids: list[Any]) -> None:
    """``usage_daily`` holds exactly the raw rows' sums per slot, for these accounts."""
    raw = session.execute(
        text(
            "SELECT account_id, (created_at AT TIME ZONE 'UTC')::date, model, speaker, transport, lang, api_key_id,"
            " count(*), sum(characters), sum(audio_seconds) FROM usage WHERE account_id = ANY(:ids)"
            " GROUP BY 1, 2, 3, 4, 5, 6, 7"
        ),
        {"ids": account_ids},
    ).all()
    rolled = session.execute(
        text(
            "SELECT account_id, day, model, speaker, transport, lang, api_key_id, row_count, characters, audio_seconds"
            " FROM usage_daily WHERE account_id = ANY(:ids)"
        ),
        {"ids": account_ids},
    ).all()
    assert_same({tuple(r[:7]): tuple(r[7:]) for r in rolled}, {tuple(r[:7]): tuple(r[7:]) for r in raw})
    assert len(rolled) == len(raw)


def _accounts_with_keys(session: Session, n: int = 2) -> list[tuple[Account, list[ApiKey]]]:
    result = []
    for _ in range(n):
        account = create_account(session=session, name=f"roll-{uuid.uuid4().hex[:8]}")
        keys = [create_key(session=session, account_id=account.id)[0] for _ in range(2)]
        result.append((account, keys))
    return result


def _spread_rows(session: Session, accounts: list[tuple[Account, list[ApiKey]]], count: int = 300) -> None:
    """Rows over five days from DAY0, some without key or language, some near midnight UTC."""
    rng = random.Random(7)
    rows = []
    for i in range(count):
        account, keys = rng.choice(accounts)
        key = rng.choice(keys) if rng.random() < 0.8 else None
        rows.append(
            Usage(
                account_id=account.id,
                api_key_id=key.id if key is not None else None,
                transport=rng.choice(["http", "ws"]),
                request_id=f"r{i}",
                model=rng.choice(["mist", "coda", "mistv2"]),
                speaker=rng.choice(["lola", "joe", "ana"]),
                lang=rng.choice(["en", "es", None]),
                characters=rng.randint(1, 1000),
                audio_seconds=round(rng.uniform(0, 60), 3),
                created_at=DAY0 + timedelta(seconds=rng.randint(0, 5 * 86400 - 1)),
            )
        )
    session.add_all(rows)
    session.flush()


def test_every_insert_moves_its_slot(db_session: Session) -> None:
    accounts = _accounts_with_keys(db_session)
    _spread_rows(db_session, accounts)
    rollup_matches_raw(db_session, [a.id for a, _ in accounts])


def test_rows_without_key_or_language_share_one_slot(db_session: Session) -> None:
    account = create_account(session=db_session, name=f"roll-{uuid.uuid4().hex[:8]}")
    for characters in (3, 4):
        record_usage(
            session=db_session, account_id=account.id, transport="ws", model="mist", speaker="x", characters=characters
        )
    slots = db_session.execute(
        text("SELECT row_count, characters FROM usage_daily WHERE account_id = :id"), {"id": account.id}
    ).all()
    assert slots == [(2, 7)]  # NULLS NOT DISTINCT: one slot, not two


def test_a_chunk_billed_twice_in_one_transaction_counts_once(db_session: Session) -> None:
    account = create_account(session=db_session, name=f"roll-{uuid.uuid4().hex[:8]}")
    job, _ = create_job(session=db_session, account_id=account.id, request_hash="h", params={}, characters=20)
    kwargs: dict[str, Any] = dict(
        account_id=account.id, transport="job", model="mist", speaker="lola", job_id=job.id, characters=10
    )
    assert record_usage(session=db_session, chunk_index=0, **kwargs)
    assert not record_usage(session=db_session, chunk_index=0, **kwargs)
    assert record_usage(session=db_session, chunk_index=1, **kwargs)
    slots = db_session.execute(
        text("SELECT row_count, characters FROM usage_daily WHERE account_id = :id"), {"id": account.id}
    ).all()
    assert slots == [(2, 20)]


def test_racing_chunk_retries_count_once_in_the_rollup(pg_url: str) -> None:
    """Four connections bill the same chunk at once: one usage row, one count in the rollup."""
    engine = make_engine(pg_url, pool=False)
    factory = make_sessionmaker(engine)
    try:
        with session_scope(factory) as session:
            account = create_account(session=session, name=f"race-{uuid.uuid4().hex[:8]}")
            job, _ = create_job(session=session, account_id=account.id, request_hash="h", params={}, characters=9)

        def bill(session: Session) -> bool:
            return record_usage(
                session=session, account_id=account.id, transport="job", model="mist", speaker="lola",
                characters=9, audio_seconds=0.5, job_id=job.id, chunk_index=0,
            )

        results = race_together(factory, 4, bill)
        assert sorted(results, key=str) == [False, False, False, True], results
        with session_scope(factory) as session:
            slots = session.execute(
                text("SELECT row_count, characters, audio_seconds FROM usage_daily WHERE account_id = :id"),
                {"id": account.id},
            ).all()
            assert slots == [(1, 9, 0.5)]
            rollup_matches_raw(session, [account.id])
    finally:
        engine.dispose()


def test_concurrent_streams_on_one_slot_all_count(pg_url: str) -> None:
    """Eight connections bill the same slot at once (a hot account): every row counts."""
    engine = make_engine(pg_url, pool=False)
    factory = make_sessionmaker(engine)
    try:
        with session_scope(factory) as session:
            account = create_account(session=session, name=f"hot-{uuid.uuid4().hex[:8]}")
        barrier = threading.Barrier(8)
        errors: list[BaseException] = []

        def worker() -> None:
            try:
                for i in range(5):
                    with session_scope(factory) as session:
                        if i == 0:
                            barrier.wait(10)
                        record_usage(
                            session=session, account_id=account.id, transport="http", model="mist", speaker="x",
                            characters=7,
                        )
            except BaseException as error:  # noqa: BLE001
                errors.append(error)

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert errors == []
        with session_scope(factory) as session:
            slots = session.execute(
                text("SELECT row_count, characters FROM usage_daily WHERE account_id = :id"), {"id": account.id}
            ).all()
            assert slots == [(40, 280)]
    finally:
        engine.dispose()


def test_corrections_and_key_deletion_keep_the_rollup_exact(db_session: Session) -> None:
    accounts = _accounts_with_keys(db_session)
    _spread_rows(db_session, accounts, count=120)
    ids = [a.id for a, _ in accounts]
    (account, keys), _ = accounts
    db_session.execute(delete(ApiKey).where(ApiKey.id == keys[0].id))  # usage.api_key_id -> NULL
    db_session.execute(text("UPDATE usage SET characters = characters + 1 WHERE account_id = :id"), {"id": account.id})
    db_session.execute(text("DELETE FROM usage WHERE account_id = :id AND model = 'coda'"), {"id": account.id})
    rollup_matches_raw(db_session, ids)
    emptied = db_session.scalar(
        text("SELECT count(*) FROM usage_daily WHERE account_id = ANY(:ids) AND row_count <= 0"), {"ids": ids}
    )
    assert emptied == 0  # a slot whose rows are all gone is removed, not left at zero


@pytest.mark.parametrize(
    ("start", "end"),
    [
        (DAY0, DAY0 + timedelta(days=5)),  # whole days: rollup only
        (DAY0 + timedelta(hours=13, minutes=7), DAY0 + timedelta(days=3, hours=5)),  # partial ends: raw edges
        (DAY0 + timedelta(days=1, hours=2), DAY0 + timedelta(days=1, hours=20)),  # inside one day: raw only
        (DAY0 + timedelta(days=2), DAY0 + timedelta(days=4, seconds=1)),
        (DAY0 - timedelta(days=30), DAY0 + timedelta(days=60)),
    ],
)
def test_reports_equal_the_raw_sums(db_session: Session, start: datetime, end: datetime) -> None:
    accounts = _accounts_with_keys(db_session)
    _spread_rows(db_session, accounts)
    account_id = accounts[0][0].id
    for group_by in [(d,) for d in DIMENSIONS] + [("account", "model"), ("day", "transport", "key"), ()]:
        for who in (account_id, None):
            report = usage_report(session=db_session, start=start, end=end, group_by=group_by, account_id=who)
            truth = direct_sums(db_session, start=start, end=end, group_by=group_by, account_id=who)
            assert_same(as_sums(report, group_by), truth)


def test_report_days_are_utc_days(db_session: Session) -> None:
    account = create_account(session=db_session, name=f"roll-{uuid.uuid4().hex[:8]}")
    late_in_new_york = datetime(2025, 3, 1, 23, 30, tzinfo=UTC) + timedelta(hours=5)  # 04:30 UTC on the 2nd
    db_session.add(
        Usage(account_id=account.id, transport="http", model="mist", speaker="x", characters=5,
              created_at=late_in_new_york)
    )
    db_session.flush()
    rows = usage_report(session=db_session, account_id=account.id, start=DAY0, end=DAY0 + timedelta(days=3))
    assert [(r.group["day"], r.characters) for r in rows] == [("2025-03-02", 5)]


def test_report_arguments_are_checked(db_session: Session) -> None:
    with pytest.raises(ValueError):
        usage_report(session=db_session, start=DAY0, end=DAY0, group_by="day")
    with pytest.raises(ValueError):
        usage_report(session=db_session, start=DAY0, end=DAY0 + timedelta(days=1), group_by="colour")
    with pytest.raises(ValueError):
        parse_group_by("day,day")
    with pytest.raises(ValueError):
        usage_report(session=db_session, start=DAY0.replace(tzinfo=None), end=DAY0 + timedelta(days=1))
    assert parse_group_by(" account, model ") == ("account", "model")


def test_csv_has_a_header_and_empty_fields_for_missing_values() -> None:
    rows = [ReportRow({"key": None, "model": "mist"}, 2, 30, 1.25)]
    assert report_csv(rows, ("key", "model")) == "key,model,rows,characters,audioSeconds\n,mist,2,30,1.25\n"


def test_the_migration_backfills_and_round_trips_with_rows(empty_pg_database: Callable[[], str]) -> None:
    """Rows written before 0002 are summed by its upgrade; down and up again sums them again."""
    url = empty_pg_database()
    upgrade(url, "0001")
    engine = make_engine(url, pool=False)
    factory = make_sessionmaker(engine)
    try:
        with session_scope(factory) as session:
            accounts = _accounts_with_keys(session)
            _spread_rows(session, accounts, count=200)
            ids = [a.id for a, _ in accounts]
        for _ in range(2):
            upgrade(url)
            with session_scope(factory) as session:
                rollup_matches_raw(session, ids)
                record_usage(session=session, account_id=ids[0], transport="ws", model="m", speaker="s", characters=1)
                rollup_matches_raw(session, ids)  # and the triggers are in place
            downgrade(url, "0001")
            with session_scope(factory) as session:
                assert session.scalar(text("SELECT to_regclass('usage_daily')")) is None
                assert session.scalar(text("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'usage_rollup%'")) == 0
                assert session.scalar(text("SELECT count(*) FROM usage WHERE account_id = ANY(:ids)"), {"ids": ids})
    finally:
        engine.dispose()
