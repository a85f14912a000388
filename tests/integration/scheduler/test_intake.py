"""scheduler/intake.py on a real PostgreSQL and the local object store: Idempotency-Key rules,
and no source text left behind by a submission that made no job."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from scheduler.intake import JobSpec, submit_job
from store.db import create_account
from store.errors import IdempotencyConflict
from store.objects.local import LocalObjectStore


def _sources(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and "source" in p.as_posix()]


def test_idempotency_replay_conflict_and_no_orphaned_text(db_session: Session, tmp_path: Path) -> None:
    objects = LocalObjectStore(tmp_path)
    account = create_account(session=db_session, name=f"intake-{uuid.uuid4().hex[:8]}")
    spec = JobSpec(text="A book of one sentence.", speaker="joe", model_id="mistv3", lang="en")
    key = uuid.uuid4().hex

    first, created = submit_job(session=db_session, objects=objects, account_id=account.id, spec=spec, idempotency_key=key)
    assert created and objects.exists(first.text_key)
    again, created_again = submit_job(session=db_session, objects=objects, account_id=account.id, spec=spec,
                                      idempotency_key=key)
    assert (again.id, created_again) == (first.id, False)
    with pytest.raises(IdempotencyConflict):
        submit_job(session=db_session, objects=objects, account_id=account.id,
                   spec=JobSpec(text="Another book.", speaker="joe", model_id="mistv3", lang="en"), idempotency_key=key)
    assert [p.read_text() for p in _sources(tmp_path)] == ["A book of one sentence."]
