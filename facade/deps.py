"""What handlers are given: the process's services and the caller's identity.

The ``Services`` bundle is built once in the app's lifespan (never at import) and handed to
handlers through ``Annotated`` dependencies, so route signatures read as types.
"""

from __future__ import annotations

import contextvars
import functools
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from fastapi import Depends
from sqlalchemy.orm import Session
from starlette.requests import HTTPConnection

from facade import errors as e
from facade.serving_pools import ServingPools
from scheduler import log_context
from scheduler.lexicons import LexiconLimits
from speech.pace import Pace
from speech.synthesizer import Synthesizer

if TYPE_CHECKING:  # for the fields' types only: nothing here needs them at run time
    from redis import Redis

    from facade.usage_spool import UsageSpool  # a cycle at run time: it reads Services
    from scheduler.queue import Dispatcher
    from scheduler.queue_depth import QueueDepths
    from speech.voices.catalog import Catalog
    from store.objects.base import ObjectStore

T = TypeVar("T")


@dataclass(slots=True)
class Principal:
    """The authenticated caller."""

    account_id: uuid.UUID | None  # None: the self-hosted API's static keys (no accounts)
    api_key_id: uuid.UUID | None
    account_name: str
    allowed_models: list[str] | None
    allowed_endpoints: list[str] | None
    ws_connections_per_minute: int
    webhook_secret: str
    qa_default: bool = False  # the account's jobs get the QA check unless they say "qa": false

    def may_use(self, *, model: str | None = None, endpoint: str | None = None) -> bool:
        if model is not None and self.allowed_models is not None and model not in self.allowed_models:
            return False
        return not (
            endpoint is not None and self.allowed_endpoints is not None and endpoint not in self.allowed_endpoints
        )


@dataclass(slots=True)
class Speech:
    """How text becomes speech: the voices, the engines behind them, the pronunciations an account
    may add, and how a stream's first audio is paced."""

    catalog: Catalog
    synthesizer: Synthesizer
    lexicon_limits: LexiconLimits = field(default_factory=LexiconLimits)  # LECTOR_LEXICON*
    # A stream's first audio: the wall-time budget for its first piece (LECTOR_STREAM_FIRST_AUDIO_MS;
    # 0: first sentences are never cut), judged by the voices' pace as this process measured it.
    first_audio_s: float = 0.3
    pace: Pace = field(default_factory=Pace)


@dataclass(slots=True)
class Storage:
    """Where what lasts is kept: PostgreSQL and the object store (None where a deployment has none:
    the self-hosted API; ``facade.parts`` refuses to start a deployment whose routes need one)."""

    session_factory: Callable[[], AbstractContextManager[Session]] | None = None  # commits on success
    objects: ObjectStore | None = None
    presign_seconds: int = 3600  # LECTOR_S3_PRESIGN_SECONDS: how long a job's download link lives


@dataclass(slots=True)
class Brokers:
    """The task queue jobs are sent through, its depths, and the Redis replicas share counters in."""

    dispatcher: Dispatcher | None = None
    queue_depths: QueueDepths | None = None  # the broker's queues, for the metrics' depth gauge
    redis: Redis | None = None  # None: connection rate limits are counted per process


@dataclass(slots=True)
class Access:
    """Who may call: the API key check and the admin API's token."""

    authenticator: Callable[[str], Principal] | None = None
    admin_token: str | None = None  # LECTOR_ADMIN_TOKEN; None: the admin API answers 403


@dataclass(slots=True)
class JobRules:
    """What the jobs routes allow and how jobs are judged (``Settings`` of the same names)."""

    max_job_chars: int | None = None  # None where no jobs route is mounted
    max_active_jobs: int = 0  # unfinished jobs an account may have; 0: no limit
    account_batch_window: int = 4  # a canceled job's places go to the account's others
    webhook_allow_private: bool = False
    stall_after_s: float = 300.0  # LECTOR_STALL_AFTER_S: the metrics' stalled-jobs gauge judges by it


@dataclass(slots=True)
class Usage:
    """Where billed usage goes besides PostgreSQL (``facade.usage``)."""

    # Self-hosted usage reporting (facade.usage_spool): called with one record per billed synthesis.
    sink: Callable[[dict[str, Any]], object] | None = None
    outbox: UsageSpool | None = None  # a UsageSpool for rows PostgreSQL could not take (facade/usage.py)


@dataclass(slots=True)
class Services:
    """What a deployment is made of, in one place: a few named groups, not a flat list of parts
    (issue 25; ``tests/unit/facade/test_services_shape.py`` keeps it small)."""

    speech: Speech
    storage: Storage = field(default_factory=Storage)
    brokers: Brokers = field(default_factory=Brokers)
    access: Access = field(default_factory=Access)
    jobs: JobRules = field(default_factory=JobRules)
    usage: Usage = field(default_factory=Usage)
    pools: ServingPools = field(default_factory=ServingPools)  # the threads it serves with
    self_hosted: bool = False  # the self-hosted API: its catalog rules, no accounts
    clock: Callable[[], datetime] | None = None

    def now(self) -> datetime:
        """The clock the arcana switch and subscriptions are judged by (injectable for tests)."""
        return self.clock() if self.clock else datetime.now(UTC)

    async def offload(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` off the event loop, on a thread that was started before serving
        (``facade.thread_pool`` for why not anyio's pool). The context (log ids) goes along."""
        call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
        return await self.pools.run_blocking(call)


async def get_services(request: HTTPConnection) -> Services:
    """Async, as every dependency here: FastAPI runs a sync one on anyio's pool, a thread per call."""
    return request.app.state.services  # type: ignore[no-any-return]


ServicesDep = Annotated[Services, Depends(get_services)]


def configured(part: T | None) -> T:
    """A part of the services a route needs (the object store, the dispatcher), narrowed from
    optional. A deployment built without it does not start (``facade.parts``: the route's
    ``NEEDS``); should a route use a part it did not declare, this answers 500 ``internal error``."""
    if part is None:
        raise e.ApiError(500, e.INTERNAL)
    return part


@contextmanager
def session_for(services: Services) -> Iterator[Session]:
    if services.storage.session_factory is None:
        raise e.ApiError(500, e.INTERNAL)
    with services.storage.session_factory() as session:
        yield session


def bearer_key(headers: Any, *, missing_message: str = e.MISSING_AUTH) -> str:
    """The API key from ``Authorization: Bearer <key>``, or the vendor API contract's 401 for its absence."""
    raw: str | None = headers.get("authorization")
    if raw is None:
        raise e.ApiError(401, missing_message)
    value = raw.strip()
    scheme, _, key = value.partition(" ")
    if scheme.lower() != "bearer":
        # A bare key (no scheme) is accepted: some clients send the key alone.
        key = value if " " not in value else ""
        if not key:
            raise e.ApiError(401, e.INVALID_KEY)
    key = key.strip()
    if not key:
        raise e.ApiError(401, e.EMPTY_KEY)
    return key


async def current_principal(request: HTTPConnection, services: ServicesDep) -> Principal:
    key = bearer_key(request.headers)
    if services.access.authenticator is None:
        raise e.ApiError(401, e.INVALID_KEY)
    principal = await services.offload(services.access.authenticator, key)
    log_context.bind(account_id=principal.account_id)  # the account's id, never its key
    return principal


PrincipalDep = Annotated[Principal, Depends(current_principal)]
