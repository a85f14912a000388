"""Accounts: create, look up, change subscription and limits, disable.

Accounts are addressed by their unique name here because that is what an operator types; the
API addresses them by id, which ``authenticate`` returns. Nothing here commits.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from store.db.models import Account
from store.errors import AccountExists, AccountNotFound, InvalidArgument


def _require_aware(value: datetime | None) -> None:
    if value is not None and value.tzinfo is None:
        raise InvalidArgument("subscription_valid_until must be timezone-aware")


def create_account(
    *,
    session: Session,
    name: str,
    subscription_valid_until: datetime | None = None,
    allowed_models: Sequence[str] | None = None,
    allowed_endpoints: Sequence[str] | None = None,
    ws_connections_per_minute: int = 60,
) -> Account:
    """Create an active account. ``subscription_valid_until=None`` means no expiry.

    Raises ``AccountExists`` when the name is taken, also when a concurrent transaction took it
    first (the insert runs in a savepoint so the caller's transaction survives).
    """
    _require_aware(subscription_valid_until)
    name = name.strip()
    if not name:
        raise InvalidArgument("account name must not be empty")
    if session.scalar(select(Account.id).where(Account.name == name)) is not None:
        raise AccountExists(f"account {name!r} already exists")
    account = Account(
        name=name,
        status="active",
        subscription_valid_until=subscription_valid_until,
        allowed_models=list(allowed_models) if allowed_models is not None else None,
        allowed_endpoints=list(allowed_endpoints) if allowed_endpoints is not None else None,
        ws_connections_per_minute=ws_connections_per_minute,
    )
    try:
        with session.begin_nested():
            session.add(account)
    except IntegrityError as error:
        raise AccountExists(f"account {name!r} already exists") from error
    return account


def get_account(*, session: Session, account_id: uuid.UUID) -> Account:
    account = session.get(Account, account_id)
    if account is None:
        raise AccountNotFound(f"no account with id {account_id}")
    return account


def get_account_by_name(*, session: Session, name: str) -> Account:
    account = session.scalar(select(Account).where(Account.name == name))
    if account is None:
        raise AccountNotFound(f"no account named {name!r}")
    return account


def list_accounts(*, session: Session) -> list[Account]:
    return list(session.scalars(select(Account).order_by(Account.name)))


def set_subscription(*, session: Session, name: str, valid_until: datetime | None) -> Account:
    """Set when the subscription ends (an aware datetime), or ``None`` for no end."""
    _require_aware(valid_until)
    account = get_account_by_name(session=session, name=name)
    account.subscription_valid_until = valid_until
    session.flush()
    return account


def set_limits(
    *,
    session: Session,
    name: str,
    allowed_models: Sequence[str] | None,
    allowed_endpoints: Sequence[str] | None,
    ws_connections_per_minute: int,
) -> Account:
    """Replace all three limits at once; ``None`` for a list means "everything allowed"."""
    if ws_connections_per_minute < 0:
        raise InvalidArgument("ws_connections_per_minute must not be negative")
    account = get_account_by_name(session=session, name=name)
    account.allowed_models = list(allowed_models) if allowed_models is not None else None
    account.allowed_endpoints = list(allowed_endpoints) if allowed_endpoints is not None else None
    account.ws_connections_per_minute = ws_connections_per_minute
    session.flush()
    return account


def set_qa_default(*, session: Session, name: str, enabled: bool) -> Account:
    """Whether the account's jobs get the speech-recognition check when they do not say."""
    account = get_account_by_name(session=session, name=name)
    account.qa_default = enabled
    session.flush()
    return account


def disable_account(*, session: Session, name: str) -> Account:
    """Disable an account: its keys stop authenticating (``InvalidSubscription``); rows are kept."""
    account = get_account_by_name(session=session, name=name)
    account.status = "disabled"
    session.flush()
    return account


def enable_account(*, session: Session, name: str) -> Account:
    """Re-activate a disabled account; its keys authenticate again (subscription permitting)."""
    account = get_account_by_name(session=session, name=name)
    account.status = "active"
    session.flush()
    return account
