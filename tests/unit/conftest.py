"""Unit tests run without services: a unit test that reaches PostgreSQL, Redis or RabbitMQ, or
starts a database server of its own, fails here instead of passing slowly on a machine that happens
to run them. Tests that need a service belong in ``tests/integration``."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

SERVICE_PORTS = {5432: "PostgreSQL", 6379: "Redis", 5672: "RabbitMQ"}
SERVER_PROGRAMS = ("postgres", "initdb", "pg_ctl", "redis-server", "rabbitmq-server")


class ServiceInUnitTest(AssertionError):
    """A unit test touched a service: move it to ``tests/integration``."""


def _refuse_service(address: Any) -> None:
    if isinstance(address, tuple) and len(address) >= 2 and address[1] in SERVICE_PORTS:
        raise ServiceInUnitTest(f"a unit test connected to {SERVICE_PORTS[address[1]]} at {address[:2]}")
    if isinstance(address, (str, bytes)) and ".s.PGSQL." in str(address):
        raise ServiceInUnitTest(f"a unit test connected to PostgreSQL's socket {address!r}")


def _refuse_server(argv: Any) -> None:
    words = [argv] if isinstance(argv, (str, bytes)) else list(argv or [])
    program = str(words[0]).rsplit("/", 1)[-1] if words else ""
    if program in SERVER_PROGRAMS:
        raise ServiceInUnitTest(f"a unit test started a server: {program}")


@pytest.fixture(autouse=True)
def _no_services(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    connect, connect_ex, popen_init = socket.socket.connect, socket.socket.connect_ex, subprocess.Popen.__init__

    def guarded_connect(self: socket.socket, address: Any) -> None:
        _refuse_service(address)
        connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        _refuse_service(address)
        return connect_ex(self, address)

    def guarded_popen(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        _refuse_server(args)
        popen_init(self, args, *rest, **kwargs)

    def refused_connect(*_args: Any, **_kwargs: Any) -> None:
        raise ServiceInUnitTest("a unit test connected to PostgreSQL")  # libpq's sockets are not Python's

    monkeypatch.setattr(psycopg.Connection, "connect", classmethod(refused_connect))
    monkeypatch.setattr(psycopg, "connect", refused_connect)
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(subprocess.Popen, "__init__", guarded_popen)
    yield
