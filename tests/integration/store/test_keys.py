"""store/db/keys.py against a real PostgreSQL (each test rolled back)."""

from __future__ import annotations

import hashlib
import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from store.db import (
    Account,
    ApiKey,
    authenticate,
    create_account,
    create_key,
    disable_account,
    list_keys,
    revoke_key,
    set_subscription,
)
from store.errors import InvalidApiKey, InvalidSubscription, KeyNotFound

KEY_RE = re.compile(r"^lk_[A-Za-z0-9_-]{40}$")


def _account(session: Session, **kwargs: object) -> Account:
    return create_account(session=session, name=f"keys-{uuid.uuid4().hex[:8]}", **kwargs)  # type: ignore[arg-type]


def test_key_format_and_only_the_hash_is_stored(db_session: Session) -> None:
    account = _account(db_session)
    api_key, plaintext = create_key(session=db_session, account_id=account.id, name="ci")
    assert KEY_RE.match(plaintext)
    assert api_key.prefix == plaintext[:12]
    assert api_key.key_hash == hashlib.sha256(plaintext.encode()).hexdigest()
    # The plaintext appears in no column of the stored row.
    row = (
        db_session.execute(text("SELECT * FROM api_keys WHERE id = :id"), {"id": api_key.id}).mappings().one()
    )
    assert all(plaintext not in str(value) for value in row.values())


def test_keys_are_unique(db_session: Session) -> None:
    account = _account(db_session)
    keys = {create_key(session=db_session, account_id=account.id)[1] for _ in range(5)}
    assert len(keys) == 5


def test_authenticate_returns_account_and_key(db_session: Session) -> None:
    account = _account(db_session)
    api_key, plaintext = create_key(session=db_session, account_id=account.id)
    found_account, found_key = authenticate(session=db_session, key=plaintext)
    assert found_account.id == account.id
    assert found_key.id == api_key.id


def test_authenticate_records_last_use_at_most_once_a_minute(db_session: Session) -> None:
    account = _account(db_session)
    api_key, plaintext = create_key(session=db_session, account_id=account.id)
    assert api_key.last_used_at is None
    t0 = datetime(2030, 1, 1, tzinfo=UTC)

    def stored() -> datetime | None:
        return db_session.scalar(select(ApiKey.last_used_at).where(ApiKey.id == api_key.id))

    authenticate(session=db_session, key=plaintext, now=t0)
    assert stored() == t0
    authenticate(session=db_session, key=plaintext, now=t0 + timedelta(seconds=30))
    assert stored() == t0
    authenticate(session=db_session, key=plaintext, now=t0 + timedelta(seconds=90))
    assert stored() == t0 + timedelta(seconds=90)


@pytest.mark.parametrize(
    "make_bad",
    [
        lambda k: k[:-1] + ("A" if k[-1] != "A" else "B"),
        lambda k: k[:-1],
        lambda k: "",
        lambda k: "Bearer " + k,
    ],
)
def test_wrong_key_is_invalid(db_session: Session, make_bad: object) -> None:
    account = _account(db_session)
    _, plaintext = create_key(session=db_session, account_id=account.id)
    with pytest.raises(InvalidApiKey):
        authenticate(session=db_session, key=make_bad(plaintext))  # type: ignore[operator]


def test_unknown_well_formed_key_is_invalid(db_session: Session) -> None:
    with pytest.raises(InvalidApiKey):
        authenticate(session=db_session, key="lk_" + "a" * 40)


def test_revoked_key_is_invalid(db_session: Session) -> None:
    account = _account(db_session)
    api_key, plaintext = create_key(session=db_session, account_id=account.id)
    other, other_plaintext = create_key(session=db_session, account_id=account.id)
    revoked = revoke_key(session=db_session, prefix=api_key.prefix)
    assert revoked.id == api_key.id and revoked.revoked_at is not None
    with pytest.raises(InvalidApiKey):
        authenticate(session=db_session, key=plaintext)
    authenticate(session=db_session, key=other_plaintext)  # the account's other key still works


def test_revoking_twice_keeps_the_first_time(db_session: Session) -> None:
    account = _account(db_session)
    api_key, _ = create_key(session=db_session, account_id=account.id)
    first = revoke_key(session=db_session, prefix=api_key.prefix).revoked_at
    second = revoke_key(
        session=db_session, prefix=api_key.prefix, now=datetime(2099, 1, 1, tzinfo=UTC)
    ).revoked_at
    assert first == second


def test_revoke_unknown_prefix_or_other_account(db_session: Session) -> None:
    account, stranger = _account(db_session), _account(db_session)
    api_key, _ = create_key(session=db_session, account_id=account.id)
    with pytest.raises(KeyNotFound):
        revoke_key(session=db_session, prefix="lk_nothing00")
    with pytest.raises(KeyNotFound):
        revoke_key(session=db_session, prefix=api_key.prefix, account_id=stranger.id)


def test_expired_subscription(db_session: Session) -> None:
    account = _account(db_session, subscription_valid_until=datetime.now(UTC) - timedelta(seconds=1))
    _, plaintext = create_key(session=db_session, account_id=account.id)
    with pytest.raises(InvalidSubscription):
        authenticate(session=db_session, key=plaintext)
    set_subscription(session=db_session, name=account.name, valid_until=datetime.now(UTC) + timedelta(days=1))
    authenticate(session=db_session, key=plaintext)
    set_subscription(session=db_session, name=account.name, valid_until=None)
    authenticate(session=db_session, key=plaintext)


def test_disabled_account(db_session: Session) -> None:
    account = _account(db_session)
    _, plaintext = create_key(session=db_session, account_id=account.id)
    disable_account(session=db_session, name=account.name)
    with pytest.raises(InvalidSubscription):
        authenticate(session=db_session, key=plaintext)


def test_list_keys(db_session: Session) -> None:
    account, other = _account(db_session), _account(db_session)
    first, _ = create_key(session=db_session, account_id=account.id, name="one")
    second, _ = create_key(session=db_session, account_id=account.id, name="two")
    create_key(session=db_session, account_id=other.id)
    revoke_key(session=db_session, prefix=first.prefix)
    assert {k.id for k in list_keys(session=db_session, account_id=account.id)} == {first.id, second.id}
    assert [k.id for k in list_keys(session=db_session, account_id=account.id, include_revoked=False)] == [
        second.id
    ]
