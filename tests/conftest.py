"""Fixtures shared by every test room. Each service fixture lives in its own module under
``tests/fixtures`` and starts or connects to the *real* service (PostgreSQL, Redis, Swift s3api)."""

import pytest

pytest_plugins = [
    "tests.fixtures.postgres",
    "tests.fixtures.redis",
    "tests.fixtures.swift",
    "tests.fixtures.voice",
    "tests.fixtures.stack",
    "tests.fixtures.farm",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files with a slow test run first, each file's tests still together and in order: xdist
    (``infra/test.sh``) hands whole files to its workers in this order, and a long file handed
    out last keeps one worker busy for minutes while the other has nothing left to do."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)
