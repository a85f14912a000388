"""Book jobs for the end-to-end tests that run real workers: corpus excerpts, the stack's S3
store as the test sees it, and a job submitted the way the API would."""

from __future__ import annotations

import uuid
from typing import Any

from scheduler import intake
from store.db import accounts
from store.db import jobs as job_repo
from store.db.session import session_scope
from store.objects import S3ObjectStore
from tests.support.corpus import CORPUS


def excerpt(chars: int, start_at: str = "It is a truth universally acknowledged") -> str:
    """About ``chars`` characters of the novel from ``start_at``, cut after a full stop."""
    book = CORPUS.read_text(encoding="utf-8")
    start = book.index(start_at)
    piece = book[start : start + chars]
    return piece[: piece.rfind(".") + 1]


def s3_store(env: dict[str, str]) -> S3ObjectStore:
    return S3ObjectStore(
        bucket=env["LECTOR_S3_BUCKET"], endpoint_url=env["LECTOR_S3_ENDPOINT_URL"], region=env["LECTOR_S3_REGION"],
        access_key_id=env["LECTOR_S3_ACCESS_KEY_ID"], secret_access_key=env["LECTOR_S3_SECRET_ACCESS_KEY"],
    )


def submit(
    sessions: Any, objects: S3ObjectStore, text: str, *, fmt: str, account: str, owner: uuid.UUID | None = None,
) -> uuid.UUID:
    """A job of ``text`` for ``owner``, or a new account named ``account-<random>``, spoken by joe."""
    with session_scope(sessions) as session:
        if owner is None:
            owner = accounts.create_account(session=session, name=f"{account}-{uuid.uuid4().hex[:6]}").id
        job, _ = intake.submit_job(
            session=session, objects=objects, account_id=owner,
            spec=intake.JobSpec(text=text, speaker="joe", model_id="mistv3", lang="en", format=fmt),
        )
        return job.id


def job_row(sessions: Any, job_id: uuid.UUID) -> Any:
    """The job's row as it is now, detached (readable after its session closed)."""
    with session_scope(sessions) as session:
        job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        session.expunge(job)
        return job
