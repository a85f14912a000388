"""The facade's ``Services`` over a real PostgreSQL session factory, for in-process app tests."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from facade.auth import db_authenticator
from facade.deps import Services
from lector.settings import Settings
from store.db import create_account, create_key
from store.db.session import scoped_sessions


def sessions_of(factory: sessionmaker[Session]) -> Callable[[], contextlib.AbstractContextManager[Session]]:
    return scoped_sessions(factory)


def services_with_key(factory: sessionmaker[Session], account: str, **parts: Any) -> tuple[Services, str]:
    """Services with real auth, and the key of a new account named ``account``; ``parts`` fill
    the rest (catalog, synthesizer, ...), None where the test does not reach them."""
    sessions = sessions_of(factory)
    with sessions() as session:
        key = create_key(session=session, account_id=create_account(session=session, name=account).id)[1]
    defaults: dict[str, Any] = {
        "catalog": None, "synthesizer": None, "objects": None, "dispatcher": None, "redis": None,
        "max_job_chars": Settings.model_fields["max_job_chars"].default,  # the jobs route's limit, as served
    }
    services = Services(session_factory=sessions, authenticator=db_authenticator(sessions), **{**defaults, **parts})
    return services, key
