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
from facade.deps import Access, Brokers, JobRules, Services, Speech, Storage
from lector.settings import Settings
from scheduler.queue import Dispatcher, make_celery
from store.db import create_account, create_key
from store.db.session import scoped_sessions
from store.objects.base import ObjectStore
from store.objects.local import LocalObjectStore


def sessions_of(factory: sessionmaker[Session]) -> Callable[[], contextlib.AbstractContextManager[Session]]:
    return scoped_sessions(factory)


def services_over(
    sessions: Callable[[], contextlib.AbstractContextManager[Session]], *, catalog: Any = None, synthesizer: Any = None,
    objects: ObjectStore | None = None, dispatcher: Dispatcher | None = None, redis: Any = None,
    max_job_chars: int | None = None, max_active_jobs: int = 0, admin_token: str | None = None,
) -> Services:
    """A cloud deployment's ``Services`` over ``sessions``, with real auth. None where the test
    does not reach a part (catalog, synthesizer, Redis); the parts a cloud app needs to start
    (``facade.parts``) that the test does not give are idle: a real object store in a new
    directory, a real Celery dispatcher on kombu's in-memory transport (nothing is sent), and the
    jobs route's limit as served."""
    if objects is None:
        root = Path(tempfile.mkdtemp(prefix="lector-idle-objects-"))
        objects = LocalObjectStore(root)
        weakref.finalize(objects, shutil.rmtree, root, ignore_errors=True)  # gone with the store, or at exit
    return Services(
        speech=Speech(catalog=catalog, synthesizer=synthesizer),
        storage=Storage(session_factory=sessions, objects=objects),
        brokers=Brokers(dispatcher=dispatcher or Dispatcher(make_celery("memory://")), redis=redis),
        access=Access(authenticator=db_authenticator(sessions), admin_token=admin_token),
        jobs=JobRules(max_job_chars=max_job_chars if max_job_chars is not None
                      else Settings.model_fields["max_job_chars"].default, max_active_jobs=max_active_jobs),
    )


def services_with_key(factory: sessionmaker[Session], account: str, **parts: Any) -> tuple[Services, str]:
    """``services_over`` (``parts`` as it takes them), and the key of a new account named ``account``."""
    sessions = sessions_of(factory)
    with sessions() as session:
        key = create_key(session=session, account_id=create_account(session=session, name=account).id)[1]
    return services_over(sessions, **parts), key
