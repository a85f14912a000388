"""What a running job has done from its start: the one read that the steps working ahead of the
last chunk share (the live playlist's segment maker, ``scheduler.hls``, and assembly ahead,
``scheduler.progressive_assembly``).

Both need the same three things in the same order: the job's row (its status and options
decide whether there is anything to do at all, so a message for a finished or unsuited job
costs one read), the chunks' durations and audio keys from the same transaction (a chunk marked
done between two reads would give a timeline whose keys and lengths disagree), and then the
plan's pauses and chapters from the object store, outside the transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from books.chunks import ChunkKeys
from books.layout import Layout
from books.timeline import Timeline, done_prefix
from scheduler.job_params import JobParams
from scheduler.objects import plan_key
from store.db import jobs as job_repo
from store.db.session import SessionFactory
from store.objects.base import ObjectStore
from store.status import JobStatus


@dataclass(frozen=True, slots=True)
class DonePart:
    """A job's contiguous done prefix, with what the job asked for and its plan."""

    status: JobStatus
    options: JobParams  # what the job asked for
    layout: Layout
    timeline: Timeline  # the chunks done from the first, in order

    @property
    def total(self) -> int:
        """The book's chunks."""
        return len(self.layout.pauses_ms)

    @property
    def closed(self) -> bool:
        """Every chunk of the book is done."""
        return len(self.timeline.offsets) == self.total


def read_done_part(
    sessions: SessionFactory, objects: ObjectStore, job_id: uuid.UUID,
    wanted: Callable[[JobStatus, JobParams], bool],
) -> DonePart | None:
    """The job's done prefix when ``wanted`` accepts its status and options; None when it does
    not, or before the first chunk is done."""
    with sessions() as session:
        job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        status, params = JobStatus(job.status), JobParams.from_stored(job.params)
        if not wanted(status, params):
            return None
        durations = job_repo.chunk_durations(session=session, job_id=job_id)
        keys = ChunkKeys(job_id, tuple(job_repo.chunk_audio_keys(session=session, job_id=job_id)))
    layout = Layout.from_json(objects.get_bytes(plan_key(job_id)))
    timeline = done_prefix(objects, durations, keys, layout.pauses_ms)
    return None if timeline is None else DonePart(status, params, layout, timeline)
