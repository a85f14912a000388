"""store/db/accounts.py against a real PostgreSQL (each test rolled back)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from store.db import (
    Account,
    create_account,
    disable_account,
    get_account,
    get_account_by_name,
    list_accounts,
    make_engine,
    make_sessionmaker,
    set_limits,
    set_subscription,
)
from store.errors import AccountExists, AccountNotFound
from tests.fixtures.postgres import race_behind


def _name() -> str:
    return f"acct-{uuid.uuid4().hex[:8]}"


def test_create_and_read_back(db_session: Session) -> None:
    name = _name()
    until = datetime.now(UTC) + timedelta(days=30)
    account = create_account(
        session=db_session, name=name, subscription_valid_until=until, allowed_models=["coda"]
    )
    db_session.expire_all()
    loaded = get_account_by_name(session=db_session, name=name)
    assert loaded.id == account.id
    assert loaded.status == "active"
    assert loaded.subscription_valid_until == until
    assert loaded.allowed_models == ["coda"]
    assert loaded.allowed_endpoints is None
    assert loaded.ws_connections_per_minute == 60
    assert len(loaded.webhook_secret) >= 32
    assert loaded.created_at.tzinfo is not None
    assert get_account(session=db_session, account_id=account.id) is loaded


def test_each_account_gets_its_own_webhook_secret(db_session: Session) -> None:
    first = create_account(session=db_session, name=_name())
    second = create_account(session=db_session, name=_name())
    assert first.webhook_secret != second.webhook_secret


def test_duplicate_name_raises_and_keeps_the_transaction_usable(db_session: Session) -> None:
    name = _name()
    create_account(session=db_session, name=name)
    with pytest.raises(AccountExists):
        create_account(session=db_session, name=name)
    # Still usable afterwards: the failed insert did not poison the transaction.
    assert db_session.scalar(select(func.count()).select_from(Account).where(Account.name == name)) == 1


def test_concurrent_create_with_the_same_name(pg_url: str) -> None:
    """The pre-check cannot see another transaction's uncommitted row; the unique index must still
    make the second creation fail with AccountExists (not IntegrityError)."""
    engine = make_engine(pg_url)
    factory = make_sessionmaker(engine)
    name = _name()
    try:
        # The first creation is flushed, not committed, and holds the index entry the second waits on.
        _, second = race_behind(
            engine, factory,
            lambda session: create_account(session=session, name=name),
            lambda session: create_account(session=session, name=name),
        )
    finally:
        engine.dispose()
    assert isinstance(second, AccountExists), second


def test_unknown_account(db_session: Session) -> None:
    with pytest.raises(AccountNotFound):
        get_account_by_name(session=db_session, name=_name())
    with pytest.raises(AccountNotFound):
        get_account(session=db_session, account_id=uuid.uuid4())
    with pytest.raises(AccountNotFound):
        disable_account(session=db_session, name=_name())


def test_list_accounts_sorted_by_name(db_session: Session) -> None:
    suffix = uuid.uuid4().hex[:8]
    for name in (f"zz-{suffix}", f"aa-{suffix}", f"mm-{suffix}"):
        create_account(session=db_session, name=name)
    names = [a.name for a in list_accounts(session=db_session) if a.name.endswith(suffix)]
    assert names == [f"aa-{suffix}", f"mm-{suffix}", f"zz-{suffix}"]


def test_set_subscription_and_clear_it(db_session: Session) -> None:
    name = _name()
    create_account(session=db_session, name=name)
    past = datetime(2020, 1, 1, tzinfo=UTC)
    set_subscription(session=db_session, name=name, valid_until=past)
    db_session.expire_all()
    assert get_account_by_name(session=db_session, name=name).subscription_valid_until == past
    set_subscription(session=db_session, name=name, valid_until=None)
    db_session.expire_all()
    assert get_account_by_name(session=db_session, name=name).subscription_valid_until is None


def test_naive_datetimes_are_refused(db_session: Session) -> None:
    name = _name()
    create_account(session=db_session, name=name)
    with pytest.raises(ValueError):
        set_subscription(session=db_session, name=name, valid_until=datetime(2030, 1, 1))


def test_set_limits_replaces_all_three(db_session: Session) -> None:
    name = _name()
    create_account(session=db_session, name=name, allowed_models=["coda"])
    set_limits(
        session=db_session,
        name=name,
        allowed_models=None,
        allowed_endpoints=["/ws3"],
        ws_connections_per_minute=5,
    )
    db_session.expire_all()
    account = get_account_by_name(session=db_session, name=name)
    assert account.allowed_models is None
    assert account.allowed_endpoints == ["/ws3"]
    assert account.ws_connections_per_minute == 5


def test_disable(db_session: Session) -> None:
    name = _name()
    create_account(session=db_session, name=name)
    disable_account(session=db_session, name=name)
    db_session.expire_all()
    assert get_account_by_name(session=db_session, name=name).status == "disabled"
