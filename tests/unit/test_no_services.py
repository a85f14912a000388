"""The unit-test guard (``tests/unit/conftest.py``) catches each way a unit test could reach a
service or start one."""

from __future__ import annotations

import subprocess

import psycopg
import pytest
import redis
import sqlalchemy as sa

from tests.unit.conftest import ServiceInUnitTest


def test_postgresql_is_refused() -> None:
    with pytest.raises(ServiceInUnitTest):
        psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    with pytest.raises(ServiceInUnitTest):
        sa.create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/postgres").connect()


def test_redis_and_rabbitmq_are_refused() -> None:
    with pytest.raises(ServiceInUnitTest):
        redis.Redis(host="127.0.0.1", port=6379).ping()
    import socket

    with pytest.raises(ServiceInUnitTest), socket.create_connection(("127.0.0.1", 5672), timeout=1):
        pass


def test_starting_a_database_server_is_refused() -> None:
    with pytest.raises(ServiceInUnitTest):
        subprocess.run(["/usr/lib/postgresql/15/bin/initdb", "-D", "/nonexistent"], check=False)
    with pytest.raises(ServiceInUnitTest):
        subprocess.Popen(["redis-server", "--port", "0"])


def test_other_programs_still_run() -> None:
    assert subprocess.run(["true"], check=False).returncode == 0
