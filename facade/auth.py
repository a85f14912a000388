"""Turning an API key into a ``Principal``.

Cloud mode looks keys up in PostgreSQL (only their hash is stored). Self-hosted mode has no
database: the accepted keys come from configuration. Both return the same ``Principal`` so the
handlers cannot tell them apart.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterable
from typing import Any

from facade import errors as e
from facade.deps import Principal


def db_authenticator(session_factory: Callable[[], Any]) -> Callable[[str], Principal]:
    from store.db import keys as key_repo

    def authenticate(key: str) -> Principal:
        with session_factory() as session:
            account, api_key = key_repo.authenticate(session=session, key=key)
            return Principal(
                account_id=account.id,
                api_key_id=api_key.id,
                account_name=account.name,
                allowed_models=account.allowed_models,
                allowed_endpoints=account.allowed_endpoints,
                ws_connections_per_minute=account.ws_connections_per_minute,
                webhook_secret=account.webhook_secret,
                qa_default=account.qa_default,
            )

    return authenticate


def static_authenticator(keys: Iterable[str]) -> Callable[[str], Principal]:
    """Keys given as plaintext or as ``sha256:<hex>``; compared by hash in constant time."""
    hashes = [k.removeprefix("sha256:") if k.startswith("sha256:") else hashlib.sha256(k.encode()).hexdigest() for k in keys]

    def authenticate(key: str) -> Principal:
        digest = hashlib.sha256(key.encode()).hexdigest()
        if not any(hmac.compare_digest(digest, h) for h in hashes):
            raise e.ApiError(401, e.INVALID_KEY)
        return Principal(
            account_id=None, api_key_id=None, account_name="self-hosted", allowed_models=None,
            allowed_endpoints=None, ws_connections_per_minute=600, webhook_secret="",
        )

    return authenticate
