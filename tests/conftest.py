"""Fixtures shared by every test room. Each service fixture lives in its own module under
``tests/fixtures`` and starts or connects to the *real* service (PostgreSQL, Redis, Swift s3api)."""

pytest_plugins = [
    "tests.fixtures.postgres",
    "tests.fixtures.redis",
    "tests.fixtures.swift",
    "tests.fixtures.voice",
    "tests.fixtures.stack",
]
