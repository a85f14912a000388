"""API keys: issue, authenticate, list, revoke.

A key is ``lk_`` followed by 40 url-safe random characters (240 bits). Only its SHA-256 is
stored, with its first 12 characters as a visible prefix for humans; the plaintext exists once,
in ``create_key``'s return value. Authentication looks the hash up through a unique index: the
lookup does not reveal how much of a guess matched, so there is no string comparison to time.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from datetime import UTC, datetime, timedelta
from typing import Final

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from store.db.models import Account, ApiKey
from store.errors import InvalidApiKey, InvalidSubscription, KeyNotFound

KEY_PREFIX: Final = "lk_"
KEY_RANDOM_CHARS: Final = 40
VISIBLE_PREFIX_CHARS: Final = 12
# last_used_at is a hint for humans; writing it at most once a minute keeps auth read-mostly.
LAST_USED_RESOLUTION: Final = timedelta(seconds=60)


def generate_key() -> str:
    """A fresh plaintext key: ``lk_`` + 40 url-safe characters."""
    return KEY_PREFIX + secrets.token_urlsafe(KEY_RANDOM_CHARS * 3 // 4)


def hash_key(key: str) -> str:
    """The stored form of a key: its SHA-256, hex."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def create_key(*, session: Session, account_id: uuid.UUID, name: str | None = None) -> tuple[ApiKey, str]:
    """Issue a key for an account; return the row and the plaintext, which is never stored."""
    plaintext = generate_key()
    api_key = ApiKey(
        account_id=account_id,
        prefix=plaintext[:VISIBLE_PREFIX_CHARS],
        key_hash=hash_key(plaintext),
        name=name or "default",
    )
    session.add(api_key)
    session.flush()
    return api_key, plaintext


def authenticate(*, session: Session, key: str, now: datetime | None = None) -> tuple[Account, ApiKey]:
    """Resolve a bearer key to its account.

    Raises ``InvalidApiKey`` for an unknown or revoked key, ``InvalidSubscription`` when the
    account is disabled or its subscription ended. Updates ``last_used_at`` at most once a minute
    per key, with a guarded UPDATE, so concurrent requests do not queue on the key's row.
    Callers that go on streaming should commit this short transaction first.
    """
    if not key.startswith(KEY_PREFIX) or len(key) != len(KEY_PREFIX) + KEY_RANDOM_CHARS:
        raise InvalidApiKey("invalid api key")
    row = session.execute(
        select(Account, ApiKey)
        .join(ApiKey, ApiKey.account_id == Account.id)
        .where(ApiKey.key_hash == hash_key(key))
    ).one_or_none()
    if row is None:
        raise InvalidApiKey("invalid api key")
    account, api_key = row
    if api_key.revoked_at is not None:
        raise InvalidApiKey("invalid api key")
    now = now or datetime.now(UTC)
    if account.status != "active":
        raise InvalidSubscription("account disabled")
    if account.subscription_valid_until is not None and account.subscription_valid_until <= now:
        raise InvalidSubscription("subscription expired")
    stale_before = now - LAST_USED_RESOLUTION
    if api_key.last_used_at is None or api_key.last_used_at < stale_before:
        session.execute(
            update(ApiKey)
            .where(
                ApiKey.id == api_key.id,
                or_(ApiKey.last_used_at.is_(None), ApiKey.last_used_at < stale_before),
            )
            .values(last_used_at=now)
            .execution_options(synchronize_session=False)
        )
        set_committed_value(api_key, "last_used_at", now)
    return account, api_key


def list_keys(*, session: Session, account_id: uuid.UUID, include_revoked: bool = True) -> list[ApiKey]:
    """An account's keys, oldest first."""
    query = select(ApiKey).where(ApiKey.account_id == account_id)
    if not include_revoked:
        query = query.where(ApiKey.revoked_at.is_(None))
    return list(session.scalars(query.order_by(ApiKey.created_at, ApiKey.id)))


def revoke_key(
    *, session: Session, prefix: str, account_id: uuid.UUID | None = None, now: datetime | None = None
) -> ApiKey:
    """Revoke the key with this visible prefix (optionally only within one account).

    Revoking a revoked key keeps its first revocation time. Raises ``KeyNotFound`` when no
    such key exists.
    """
    query = select(ApiKey).where(ApiKey.prefix == prefix)
    if account_id is not None:
        query = query.where(ApiKey.account_id == account_id)
    api_key = session.scalar(query)
    if api_key is None:
        raise KeyNotFound(f"no key with prefix {prefix!r}")
    if api_key.revoked_at is None:
        api_key.revoked_at = now or datetime.now(UTC)
        session.flush()
    return api_key
