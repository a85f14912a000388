"""A job's and a chunk's states, and the one table of the moves a job may make.

Why here, in ``store`` and outside ``store.db``: the table is what ``store.db.jobs.set_job_status``
(the one function that writes a job's status) enforces in its compare-and-set, every room above
may read it, and the CLI, an HTTP client, reads the enum without importing SQLAlchemy.
The values are the strings the database has always held (``jobs.status`` and
``job_chunks.status`` stay ``VARCHAR`` under a CHECK constraint), so no migration follows from
the enums; a ``StrEnum`` member also equals its string, so the API and the webhook still say
``"succeeded"``.

    queued ──> planning ──> running ──> assembling ──> succeeded
       │          │    ▲       │            │
       │          └────┼───────┤            │
       └───────────────┘       ▼            ▼
     (every state before the end) ──> failed | canceled
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Final


class JobStatus(StrEnum):
    """Where a job is. Stored as its value."""

    QUEUED = "queued"
    PLANNING = "planning"
    RUNNING = "running"
    ASSEMBLING = "assembling"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELED = "canceled"


class ChunkStatus(StrEnum):
    """A chunk is synthesized once: ``pending`` until its audio is stored, then ``done``."""

    PENDING = "pending"
    DONE = "done"


class BatchState(StrEnum):
    """A planned batch of a job's chunks (``store.db.batches``): ``waiting`` for its turn under its
    account's window, ``sent`` to the synth queue (in flight), ``done`` when its task ended."""

    WAITING = "waiting"
    SENT = "sent"
    DONE = "done"


#: A job that may still fail or be canceled (the reaper nudges these when they stop moving).
ACTIVE: Final = (JobStatus.QUEUED, JobStatus.PLANNING, JobStatus.RUNNING, JobStatus.ASSEMBLING)
#: A job that has ended: nothing more is synthesized or billed, and its webhook is due.
TERMINAL: Final = frozenset({JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELED})
#: A job that left the queue (``started_at`` is set on the first of these).
STARTED: Final = frozenset({JobStatus.PLANNING, JobStatus.RUNNING, JobStatus.ASSEMBLING})

_ENDINGS: Final = frozenset({JobStatus.FAILED, JobStatus.CANCELED})

#: The one table of allowed moves: ``TRANSITIONS[now]`` is where a job in ``now`` may go.
#: ``queued -> running`` is the planning step's guard as it always was (a job that already has
#: its chunks goes straight on).
TRANSITIONS: Final[Mapping[JobStatus, frozenset[JobStatus]]] = {
    JobStatus.QUEUED: frozenset({JobStatus.PLANNING, JobStatus.RUNNING}) | _ENDINGS,
    JobStatus.PLANNING: frozenset({JobStatus.RUNNING}) | _ENDINGS,
    JobStatus.RUNNING: frozenset({JobStatus.ASSEMBLING}) | _ENDINGS,
    JobStatus.ASSEMBLING: frozenset({JobStatus.SUCCEEDED}) | _ENDINGS,
    JobStatus.SUCCEEDED: frozenset(),
    JobStatus.FAILED: frozenset(),
    JobStatus.CANCELED: frozenset(),
}


class IllegalTransition(ValueError):
    """A move the table does not allow was asked for: a programming error, not a customer's."""


def allowed(now: JobStatus, to: JobStatus) -> bool:
    """Whether a job in ``now`` may move to ``to``."""
    return to in TRANSITIONS[now]


def sources(to: JobStatus) -> frozenset[JobStatus]:
    """Every status a job may move to ``to`` from (the compare-and-set's guard)."""
    return frozenset(now for now, targets in TRANSITIONS.items() if to in targets)
