"""Errors raised by the store. Foreign errors (botocore, psycopg) are translated at one boundary
per adapter and re-raised from these. No HTTP statuses here.

    StoreError
    ├── DatabaseUnavailable      PostgreSQL cannot be reached (facade: 500 "Database error")
    ├── TransactionConflict      PostgreSQL aborted a transaction to break a deadlock or a
    │                            serialization conflict: running it again succeeds
    ├── ObjectStoreError
    │   ├── ObjectNotFound       no object under that key
    │   └── ObjectStoreUnavailable  the S3 endpoint cannot be reached
    ├── AuthError
    │   ├── InvalidApiKey        unknown or revoked key
    │   └── InvalidSubscription  the key's account has no valid subscription
    ├── KeyNotFound              no key under that prefix (an operator's revoke, not a login)
    ├── AccountNotFound
    ├── AccountExists
    ├── JobNotFound
    ├── LexiconNotFound          no lexicon (or no such version) of that name for the account
    ├── IdempotencyConflict      same Idempotency-Key, different request body
    └── InvalidArgument          a value the store refuses; the message is the caller's
"""

from __future__ import annotations


class StoreError(Exception):
    """Root of every error the store raises."""


class DatabaseUnavailable(StoreError):
    pass


class TransactionConflict(StoreError):
    """Transient by nature (SQLSTATE 40P01, 40001): the workers retry the task, as for an outage."""


class ObjectStoreError(StoreError):
    pass


class ObjectNotFound(ObjectStoreError):
    def __init__(self, key: str) -> None:
        super().__init__(f"no object under key {key!r}")
        self.key = key


class ObjectStoreUnavailable(ObjectStoreError):
    pass


class AuthError(StoreError):
    pass


class InvalidApiKey(AuthError):
    pass


class InvalidSubscription(AuthError):
    pass


class KeyNotFound(StoreError):
    """No key has this prefix. Not ``InvalidApiKey``: the admin API answers it 404, a login 401."""


class AccountNotFound(StoreError):
    pass


class AccountExists(StoreError):
    pass


class JobNotFound(StoreError):
    pass


class LexiconNotFound(StoreError):
    def __init__(self, name: str) -> None:
        super().__init__(f"lexicon {name[:64]!r} not found")
        self.name = name


class IdempotencyConflict(StoreError):
    pass


class InvalidArgument(StoreError, ValueError):
    """A value the store refuses (an empty account name, an unknown report dimension). Also a
    ``ValueError``: callers that validate before calling may treat it as one."""
