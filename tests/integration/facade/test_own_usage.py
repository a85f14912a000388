"""``GET /v1/usage`` (facade/routes/usage.py): an account's own usage, the same figures as the
admin report for that account, and no way to read another account's. Real PostgreSQL, the app
from ``create_app`` with the real ``db_authenticator``."""

from __future__ import annotations

import contextlib
import csv
import io
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from facade.app import create_app
from store.db import Usage, create_account, create_key, session_scope
from tests.fixtures.ledger import assert_same, direct_sums
from tests.support.services import services_over

ADMIN_TOKEN = "adm_" + "u" * 40
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
DAY0 = datetime(2025, 6, 1, tzinfo=UTC)


@pytest.fixture
def client(db_sessionmaker: sessionmaker[Session]) -> Iterator[TestClient]:
    @contextlib.contextmanager
    def sessions() -> Iterator[Session]:
        with session_scope(db_sessionmaker) as session:
            yield session

    services = services_over(sessions, admin_token=ADMIN_TOKEN)
    with TestClient(create_app(lambda: (services, lambda: None)), raise_server_exceptions=False) as test_client:
        yield test_client


def _billed(factory: sessionmaker[Session], seed: int) -> tuple[str, Any, str]:
    """An account with usage rows over three days (some cut by the report's bounds), and a key."""
    with session_scope(factory) as session:
        account = create_account(session=session, name=f"own-{uuid.uuid4().hex[:8]}")
        api_key, plaintext = create_key(session=session, account_id=account.id)
        for i in range(40):
            session.add(Usage(
                account_id=account.id, api_key_id=api_key.id, transport=("http", "ws")[i % 2],
                model=("coda", "mistv2", "mist")[i % 3], speaker="joe", lang="en", characters=seed + 7 * i,
                audio_seconds=0.5 * i, created_at=DAY0 + timedelta(hours=1.7 * i),
            ))
        return account.name, account.id, plaintext


@pytest.mark.parametrize("group_by", ["day", "day,model", "model", "transport"])
def test_own_usage_equals_the_admin_report_and_a_direct_sum(
    client: TestClient, db_sessionmaker: sessionmaker[Session], group_by: str
) -> None:
    name, account_id, key = _billed(db_sessionmaker, 11)
    _billed(db_sessionmaker, 1000)  # another account in the same days: must not show
    params = {"from": (DAY0 + timedelta(hours=5)).isoformat(), "to": "2025-06-03", "groupBy": group_by}
    own = client.get("/v1/usage", headers={"Authorization": f"Bearer {key}"}, params=params)
    assert own.status_code == 200, own.text
    admin = client.get("/admin/usage", headers=ADMIN, params={**params, "account": name})
    body = own.json()
    assert (body["rows"], body["total"]) == (admin.json()["rows"], admin.json()["total"])
    assert body["account"] == name
    dims = tuple(group_by.split(","))
    with session_scope(db_sessionmaker) as session:
        truth = direct_sums(session, start=DAY0 + timedelta(hours=5), end=datetime(2025, 6, 3, tzinfo=UTC),
                            group_by=dims, account_id=account_id)
    assert_same({tuple(r[d] for d in dims): (r["rows"], r["characters"], r["audioSeconds"]) for r in body["rows"]},
                truth)
    assert body["total"]["characters"] == sum(c for _, c, _ in truth.values()) > 0


def test_own_usage_as_csv_matches_the_admin_csv(client: TestClient, db_sessionmaker: sessionmaker[Session]) -> None:
    name, _, key = _billed(db_sessionmaker, 3)
    params = {"from": "2025-06-01", "to": "2025-06-04", "groupBy": "day,model"}
    own = client.get("/v1/usage", headers={"Authorization": f"Bearer {key}", "Accept": "text/csv"}, params=params)
    admin = client.get("/admin/usage", headers={**ADMIN, "Accept": "text/csv"}, params={**params, "account": name})
    assert own.headers["content-type"].startswith("text/csv")
    assert own.text == admin.text
    assert list(csv.DictReader(io.StringIO(own.text)))[0].keys() == {"day", "model", "rows", "characters", "audioSeconds"}


def test_no_way_to_read_another_account(client: TestClient, db_sessionmaker: sessionmaker[Session]) -> None:
    mine, _, key = _billed(db_sessionmaker, 5)
    theirs, _, _ = _billed(db_sessionmaker, 500)
    auth = {"Authorization": f"Bearer {key}"}
    response = client.get("/v1/usage", headers=auth, params={"from": "2025-06-01", "account": theirs})
    assert response.status_code == 400
    grouped = client.get("/v1/usage", headers=auth, params={"from": "2025-06-01", "to": "2025-06-04",
                                                              "groupBy": "account"}).json()
    assert [r["account"] for r in grouped["rows"]] == [mine]


@pytest.mark.parametrize(
    ("headers", "params", "status", "message"),
    [
        ({}, {"from": "2025-06-01"}, 401, "Missing Authorization header"),
        ({"Authorization": "Bearer lk_wrong"}, {"from": "2025-06-01"}, 401, "invalid api key"),
        # without from: the month to date, so a to in the past is before it
        (None, {"to": "2000-01-01"}, 400, "from must be before to"),
        (None, {"from": "2025-06-02", "to": "2025-06-01"}, 400, "from must be before to"),
        (None, {"from": "soon"}, 400, "from must be an ISO 8601 date or date-time"),
    ],
)
def test_own_usage_errors(client: TestClient, db_sessionmaker: sessionmaker[Session],
                          headers: dict[str, str] | None, params: dict[str, str], status: int, message: str) -> None:
    if headers is None:
        headers = {"Authorization": f"Bearer {_billed(db_sessionmaker, 1)[2]}"}
    response = client.get("/v1/usage", headers=headers, params=params)
    assert (response.status_code, response.text) == (status, message)
