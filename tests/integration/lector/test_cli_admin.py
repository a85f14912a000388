"""``lector admin usage`` against the test database through typer's CliRunner: every format gives
the same totals as a direct SQL sum over the raw rows."""

from __future__ import annotations

import csv
import io
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from typer.testing import CliRunner

from lector.commands import admin
from store.db import Usage, create_account, make_engine, make_sessionmaker, session_scope
from tests.fixtures.ledger import assert_same, direct_sums

DAY0 = datetime(2025, 7, 1, tzinfo=UTC)


@pytest.fixture
def cli_db(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("LECTOR_DATABASE_URL", pg_url)
    yield pg_url


@pytest.fixture
def billed(cli_db: str) -> Iterator[tuple[str, Any, Any]]:
    """A committed account with rows over four days of July 2025, and a sessionmaker to check with."""
    engine = make_engine(cli_db, pool=False)
    factory = make_sessionmaker(engine)
    with session_scope(factory) as session:
        account = create_account(session=session, name=f"cli-adm-{uuid.uuid4().hex[:8]}")
        for i in range(40):
            session.add(
                Usage(account_id=account.id, transport=("http", "ws")[i % 2], model=("mist", "coda")[i % 2],
                      speaker="joe", lang="en", characters=100 + i, audio_seconds=0.5 * i,
                      created_at=DAY0 + timedelta(hours=2.3 * i))
            )
        name, account_id = account.name, account.id
    try:
        yield name, account_id, factory
    finally:
        engine.dispose()


def _truth(factory: Any, account_id: Any, group_by: tuple[str, ...], end: datetime) -> dict[Any, Any]:
    with session_scope(factory) as session:
        return direct_sums(session, start=DAY0, end=end, group_by=group_by, account_id=account_id)


def test_json_and_csv_equal_a_direct_sum(billed: tuple[str, Any, Any]) -> None:
    name, account_id, factory = billed
    runner = CliRunner()
    args = ["usage", "--account", name, "--from", "2025-07-01", "--to", "2025-07-03T12:00"]
    end = DAY0 + timedelta(days=2, hours=12)

    result = runner.invoke(admin.app, [*args, "--group-by", "day", "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    reported = {(r["day"],): (r["rows"], r["characters"], r["audioSeconds"]) for r in document["rows"]}
    assert_same(reported, _truth(factory, account_id, ("day",), end))
    assert document["account"] == name

    result = runner.invoke(admin.app, [*args, "--group-by", "model,transport", "--format", "csv"])
    assert result.exit_code == 0, result.output
    records = list(csv.DictReader(io.StringIO(result.stdout)))
    reported = {
        (r["model"], r["transport"]): (int(r["rows"]), int(r["characters"]), float(r["audioSeconds"])) for r in records
    }
    assert_same(reported, _truth(factory, account_id, ("model", "transport"), end))


def test_table_lists_each_day_and_a_total(billed: tuple[str, Any, Any]) -> None:
    name, account_id, factory = billed
    result = CliRunner().invoke(admin.app, ["usage", "--account", name, "--from", "2025-07-01", "--to", "2025-07-05"])
    assert result.exit_code == 0, result.output
    lines = [line.split("\t") for line in result.stdout.splitlines()]  # piped: tab-separated
    assert lines[0] == ["day", "rows", "characters", "audioSeconds"]
    truth = _truth(factory, account_id, ("day",), DAY0 + timedelta(days=4))
    assert [line[0] for line in lines[1:-1]] == sorted(day for (day,) in truth)
    assert lines[-1][0] == "total"
    assert lines[-1][2] == f"{sum(c for _, c, _ in truth.values()):,}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--account", "nobody-here", "--from", "2025-07-01"], "AccountNotFound"),
        (["--from", "someday"], "--from"),
        (["--from", "2025-07-01", "--group-by", "colour"], "--group-by"),
        (["--from", "2025-07-02", "--to", "2025-07-01"], "--from must be before --to"),
    ],
)
def test_bad_arguments_exit_non_zero(cli_db: str, args: list[str], message: str) -> None:
    result = CliRunner().invoke(admin.app, ["usage", *args])
    assert result.exit_code != 0
    assert message in result.output
