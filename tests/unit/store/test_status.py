"""store/status.py: the one table of a job's moves, and the database's strings kept as they were."""

from __future__ import annotations

from store.db.models import CHUNK_STATUSES, JOB_STATUSES
from store.status import ACTIVE, TERMINAL, TRANSITIONS, ChunkStatus, JobStatus, allowed, sources


def test_the_stored_strings_are_the_ones_rows_already_hold() -> None:
    """No migration: the CHECK constraints of revision 0001 name exactly these values."""
    assert JOB_STATUSES == ("queued", "planning", "running", "assembling", "succeeded", "failed", "canceled")
    assert CHUNK_STATUSES == ("pending", "done")
    assert JobStatus("succeeded") is JobStatus.SUCCEEDED and JobStatus.SUCCEEDED == "succeeded"
    assert ChunkStatus("done") is ChunkStatus.DONE


def test_every_status_has_a_row_and_endings_have_no_way_out() -> None:
    assert set(TRANSITIONS) == set(JobStatus)
    assert all(not TRANSITIONS[end] for end in TERMINAL)
    assert set(ACTIVE) | TERMINAL == set(JobStatus) and not set(ACTIVE) & TERMINAL


def test_the_pipeline_walks_forward_and_can_end_early_from_any_active_state() -> None:
    path = [JobStatus.QUEUED, JobStatus.PLANNING, JobStatus.RUNNING, JobStatus.ASSEMBLING, JobStatus.SUCCEEDED]
    assert all(allowed(now, then) for now, then in zip(path, path[1:], strict=False))
    assert sources(JobStatus.CANCELED) == sources(JobStatus.FAILED) == set(ACTIVE)
    assert not allowed(JobStatus.RUNNING, JobStatus.PLANNING)  # nothing goes back
    assert not allowed(JobStatus.QUEUED, JobStatus.SUCCEEDED)  # nothing skips assembly
    assert sources(JobStatus.SUCCEEDED) == {JobStatus.ASSEMBLING}
    assert sources(JobStatus.QUEUED) == set()  # only a new row is queued
