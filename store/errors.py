"""Errors raised by the store. Foreign errors (botocore, psycopg) are translated at one boundary
per adapter and re-raised from these. No HTTP statuses here.

    StoreError
    ├── DatabaseUnavailable      PostgreSQL cannot be reached (facade: 500 "Database error")
    ├── ObjectStoreError
    │   ├── ObjectNotFound       no object under that key
    │   └── ObjectStoreUnavailable  the S3 endpoint cannot be reached
    ├── AuthError
    │   ├── InvalidApiKey        unknown or revoked key
    │   └── InvalidSubscription  the key's account has no valid subscription
    ├── AccountNotFound
    ├── AccountExists
    ├── JobNotFound
    └── IdempotencyConflict      same Idempotency-Key, different request body
"""

from __future__ import annotations


class StoreError(Exception):
    """Root of every error the store raises."""


class DatabaseUnavailable(StoreError):
    pass


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


class AccountNotFound(StoreError):
    pass


class AccountExists(StoreError):
    pass


class JobNotFound(StoreError):
    pass


class IdempotencyConflict(StoreError):
    pass
