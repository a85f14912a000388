"""What a worker process holds: database sessions, the object store, the voices, a dispatcher.

Built on first use inside the worker process, never at import and never before a fork: a pooled
database connection or a CUDA context must not be shared across processes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from lector.settings import Settings
from lector.wiring import build_catalog, build_object_store, build_synthesizer, resolved_database_url
from scheduler.queue import Dispatcher
from speech.synthesizer import Synthesizer
from store.db.session import make_engine, make_sessionmaker, session_scope


@dataclass
class Resources:
    settings: Settings
    sessions: Callable[[], AbstractContextManager[Session]]
    objects: Any
    catalog: Any
    synthesizer: Synthesizer
    dispatcher: Dispatcher


_lock = threading.Lock()
_resources: Resources | None = None


def get(settings: Settings, dispatcher: Dispatcher) -> Resources:
    global _resources
    with _lock:
        if _resources is None:
            factory = make_sessionmaker(make_engine(resolved_database_url(settings)))

            @contextmanager
            def sessions() -> Iterator[Session]:
                with session_scope(factory) as session:
                    yield session

            _resources = Resources(
                settings=settings,
                sessions=sessions,
                objects=build_object_store(settings),
                catalog=build_catalog(settings),
                synthesizer=build_synthesizer(settings),
                dispatcher=dispatcher,
            )
        return _resources
