"""The facade's ``Services`` over a real PostgreSQL session factory, for in-process app tests."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from facade.auth import db_authenticator
from facade.deps import Services
from lector.settings import Settings
from scheduler.queue import Dispatcher, make_celery
from store.db import create_account, create_key
from store.db.session import scoped_sessions
from store.objects.local import LocalObjectStore


def sessions_of(factory: sessionmaker[Session]) -> Callable[[], contextlib.AbstractContextManager[Session]]:
    return scoped_sessions(factory)


def idle_parts() -> dict[str, Any]:
    """The parts a cloud app needs to start (``facade.parts``) that a test of other routes never
    reaches: a real object store in a new directory and a real Celery dispatcher on kombu's
    in-memory transport (nothing is sent), and the jobs route's limit as served."""
    root = Path(tempfile.mkdtemp(prefix="lector-idle-objects-"))
    objects = LocalObjectStore(root)
    weakref.finalize(objects, shutil.rmtree, root, ignore_errors=True)  # gone with the store, or at exit
    return {
        "objects": objects,
        "dispatcher": Dispatcher(make_celery("memory://")),
        "max_job_chars": Settings.model_fields["max_job_chars"].default,
    }


def services_with_key(factory: sessionmaker[Session], account: str, **parts: Any) -> tuple[Services, str]:
    """Services with real auth, and the key of a new account named ``account``; ``parts`` fill
    the rest (catalog, synthesizer, ...), None where the test does not reach them, and
    ``idle_parts`` where the app needs them to start."""
    sessions = sessions_of(factory)
    with sessions() as session:
        key = create_key(session=session, account_id=create_account(session=session, name=account).id)[1]
    defaults: dict[str, Any] = {"catalog": None, "synthesizer": None, "redis": None, **idle_parts()}
    services = Services(session_factory=sessions, authenticator=db_authenticator(sessions), **{**defaults, **parts})
    return services, key
