"""The parts of ``Services`` a route needs, checked when an app starts, not when a request comes.

``Services`` leaves some parts optional because not every deployment has them: the self-hosted
API has no database, object store or task queue. A route that needs one used to find it missing
at its first request and answer 500 ``internal error``. Each router now says what it needs
(``NEEDS`` in its module), the app is composed with those needs (``facade.app.compose_app``),
and the lifespan refuses to start a deployment built without one, saying which route needs
which part and which setting provides it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Final

from facade.deps import Services


class Part(StrEnum):
    """An optional part of ``Services``, by the field that holds it (its group's, then its own)."""

    DATABASE = "storage.session_factory"
    OBJECTS = "storage.objects"
    DISPATCHER = "brokers.dispatcher"
    AUTHENTICATOR = "access.authenticator"
    JOB_LIMIT = "jobs.max_job_chars"


#: What each part is, in an operator's words: the message names it and where it comes from.
DESCRIPTIONS: Final[Mapping[Part, str]] = {
    Part.DATABASE: "PostgreSQL (LECTOR_DATABASE_URL)",
    Part.OBJECTS: "the object store (LECTOR_S3_BUCKET, or LECTOR_OBJECTS_DIR)",
    Part.DISPATCHER: "the task queue (LECTOR_BROKER_URL, or LECTOR_REDIS_URL)",
    Part.AUTHENTICATOR: "an API key check (accounts in PostgreSQL, or LECTOR_API_KEYS self-hosted)",
    Part.JOB_LIMIT: "the longest book a job may be (LECTOR_MAX_JOB_CHARS)",
}
_PRESENT: Final[Mapping[Part, Callable[[Services], bool]]] = {
    Part.DATABASE: lambda s: s.storage.session_factory is not None,
    Part.OBJECTS: lambda s: s.storage.objects is not None,
    Part.DISPATCHER: lambda s: s.brokers.dispatcher is not None,
    Part.AUTHENTICATOR: lambda s: s.access.authenticator is not None,
    Part.JOB_LIMIT: lambda s: s.jobs.max_job_chars is not None,
}

#: Routes by what they are (a path, for the message) -> the parts they need.
Needs = Mapping[str, frozenset[Part]]


class MissingParts(RuntimeError):
    """A deployment built without a part one of its routes needs: raised in the lifespan, so the
    server does not start (uvicorn exits with it)."""


def missing(services: Services, needs: Needs) -> list[str]:
    """One sentence per route and part it lacks; empty when nothing is missing."""
    return [
        f"{routes} needs {DESCRIPTIONS[part]} (Services.{part.value})"
        for routes, parts in needs.items()
        for part in sorted(parts)
        if not _PRESENT[part](services)
    ]


def check(services: Services, needs: Needs) -> None:
    lacking = missing(services, needs)
    if lacking:
        raise MissingParts("lector cannot start: this deployment was built without what its routes need: "
                           + "; ".join(lacking))
