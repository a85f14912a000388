"""Engines, sessions and the one place a transaction is committed.

Repositories in ``store.db`` only ever ``flush()``; ``session_scope`` commits on success and rolls
back on error, so several writes from different repositories share one transaction. Loss of the
database is translated here, once, into ``DatabaseUnavailable``.

Engines are built by ``make_engine`` in entry points, never at import. A process that forks
(Celery's prefork pool) builds its engine with ``pool=False`` (``NullPool``) before the fork, or a
pooled one in each child after it, so that no pooled connection is shared across a fork.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TypeVar

from sqlalchemy import Engine, create_engine, exc
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool

from store.errors import DatabaseUnavailable, TransactionConflict

log = logging.getLogger("lector.store")
_T = TypeVar("_T")

# What the scheduler's steps take: a call that opens one unit of work (commit on success).
SessionFactory = Callable[[], AbstractContextManager[Session]]

_DRIVER = "postgresql+psycopg"
# SQLSTATE classes meaning "the server is not there for us": connection exceptions (08),
# operator intervention (57: shutdown, cannot connect now), insufficient resources (53).
_UNAVAILABLE_SQLSTATE_PREFIXES = ("08", "57", "53")


def normalize_url(url: str) -> str:
    """Return ``url`` with the psycopg 3 driver: ``postgresql://`` and ``postgres://`` are rewritten."""
    parsed = make_url(url)
    if parsed.get_backend_name() not in ("postgresql", "postgres"):
        raise ValueError(f"not a PostgreSQL URL: {parsed.render_as_string(hide_password=True)}")
    return parsed.set(drivername=_DRIVER).render_as_string(hide_password=False)


# A database that vanishes without a word (its host's link gone, packets dropped) must fail a
# call in seconds, not after the kernel's ~15 minutes of TCP retransmissions: a worker stuck that
# long holds its task (and the broker, hearing its heartbeats, never hands the task elsewhere).
# libpq's own settings, ignored on Unix sockets: data unacknowledged for 15 s, or an idle link
# silent to three keepalive probes, closes the connection; a connection attempt gives up after 10 s.
# The server's side too (``options``: the same settings for the backend's socket): a worker whose
# host vanished mid-step leaves a session that holds locks (assembly's advisory lock is held for
# the whole assembly), and the server, never told, would keep it for the kernel's two hours: the
# redelivered step would wait on that lock as long. With them the backend ends in about 30 s.
SERVER_KEEPALIVE = (
    "-c tcp_keepalives_idle=15 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3 -c tcp_user_timeout=15000"
)
CONNECT_ARGS = {
    "connect_timeout": 10,
    "tcp_user_timeout": 15_000,
    "keepalives": 1,
    "keepalives_idle": 15,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "options": SERVER_KEEPALIVE,
}


def make_engine(url: str, *, pool: bool = True, echo: bool = False) -> Engine:
    """Build an engine on psycopg 3. ``pool=False`` gives a ``NullPool`` (safe to create before fork)."""
    if pool:
        return create_engine(normalize_url(url), pool_pre_ping=True, echo=echo, connect_args=CONNECT_ARGS)
    return create_engine(normalize_url(url), poolclass=NullPool, echo=echo, connect_args=CONNECT_ARGS)


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """Sessions keep their objects readable after commit (``expire_on_commit=False``), so a handler
    can build its response from rows it just wrote without a second round trip."""
    return sessionmaker(engine, expire_on_commit=False)


_CONFLICT_SQLSTATES = frozenset({"40P01", "40001"})  # deadlock_detected, serialization_failure


def _is_unavailable(error: exc.OperationalError) -> bool:
    if error.connection_invalidated:
        return True
    sqlstate = getattr(error.orig, "sqlstate", None)
    # psycopg raises connection failures (refused, unknown host, bad database) with no SQLSTATE.
    return sqlstate is None or sqlstate.startswith(_UNAVAILABLE_SQLSTATE_PREFIXES)


@contextmanager
def translate_db_errors() -> Iterator[None]:
    """Turn "cannot reach PostgreSQL" into ``DatabaseUnavailable`` and a deadlock or serialization
    failure (an ``OperationalError`` too, but the database is there) into ``TransactionConflict``;
    other errors pass unchanged."""
    try:
        yield
    except exc.OperationalError as error:
        if getattr(error.orig, "sqlstate", None) in _CONFLICT_SQLSTATES:
            raise TransactionConflict(str(error.orig)) from error
        if _is_unavailable(error):
            raise DatabaseUnavailable(str(error.orig)) from error
        raise
    except exc.InterfaceError as error:  # a connection closed under us
        raise DatabaseUnavailable(str(error.orig)) from error


@contextmanager
def session_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One unit of work: commit when the block succeeds, roll back when it raises. The only commit."""
    with translate_db_errors():
        session = factory()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()


def scoped_sessions(factory: sessionmaker[Session]) -> SessionFactory:
    """``session_scope`` over ``factory`` as a no-argument factory: what the scheduler, the facade
    and the workers take as ``sessions`` (each call one unit of work)."""

    def scope() -> AbstractContextManager[Session]:
        return session_scope(factory)

    return scope


def within(session: Session) -> SessionFactory:
    """A factory whose units of work are all part of ``session``'s open transaction, committed
    with it: for a step that holds a transaction-scoped lock and reads again and again under it
    (the live playlist's maker: one commit a task instead of one a look)."""

    @contextmanager
    def scope() -> Iterator[Session]:
        session.expire_all()  # each look reads the rows afresh, as a transaction of its own would
        with translate_db_errors():
            yield session

    return scope


def retrying_conflicts(work: Callable[[], _T], *, attempts: int = 3) -> _T:
    """``work`` (one unit of work, and what it does after its commit) run again when PostgreSQL
    aborted its transaction to break a deadlock or a serialization failure: the aborted
    transaction left nothing behind, and the other side (a worker's step, which Celery retries
    the same way) has gone on. A request answered 500 for it would hand the retry to a client
    that cannot know it is safe; the workers retry it as a task (``workers.tasks.TRANSIENT``)."""
    for attempt in range(2, attempts + 1):
        try:
            return work()
        except TransactionConflict as conflict:
            log.info("transaction aborted to break a conflict (%s): running it again, try %d", conflict, attempt)
    return work()
