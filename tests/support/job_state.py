"""Putting a job straight into a state, past the transitions table (``store.status``).

A test's shortcut to a state the pipeline would take a whole book to reach (a finished job for
the download or retention routes). Production code never does this: ``store.db.jobs.set_job_status``
is the one writer of a status, and it only makes the moves the table allows.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, update
from sqlalchemy.orm import Session

from store.db.models import Job
from store.status import TERMINAL, JobStatus


def force_status(session: Session, job_id: uuid.UUID, status: JobStatus, **values: Any) -> None:
    """Write ``status`` (and ``values``: ``result_key``...) whatever the job's status was; an ending
    also sets ``finished_at``, as ``set_job_status`` would."""
    if status in TERMINAL:
        values.setdefault("finished_at", func.now())
    session.execute(
        update(Job)
        .where(Job.id == job_id)
        .values(status=status, updated_at=func.now(), **values)
        .execution_options(synchronize_session="fetch")
    )
