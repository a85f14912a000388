"""An account's limit on unfinished jobs (``LECTOR_MAX_ACTIVE_JOBS``), in process on real
PostgreSQL and Redis and a local object store: the job past the limit is a 429 that says the
limit, leaves no row and no stored text behind, a repeat of an accepted request is not refused,
and a canceled job frees its place."""

from __future__ import annotations

import uuid
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from facade.app import create_app
from scheduler.queue import Dispatcher, make_celery
from speech.voices import Catalog
from store.db.models import Job
from store.objects.local import LocalObjectStore
from tests.support.services import services_with_key

BOOK = {"text": "A short book. It ends here.", "speaker": "joe"}
LIMIT = 2


def test_the_job_past_an_accounts_limit_is_a_429_and_leaves_nothing_behind(
    db_sessionmaker: sessionmaker[Session], spare_redis_url: str, tmp_path: Path,
) -> None:
    objects = LocalObjectStore(tmp_path)
    services, key = services_with_key(
        db_sessionmaker, f"limit-{uuid.uuid4().hex[:6]}", catalog=Catalog.load(), objects=objects,
        dispatcher=Dispatcher(make_celery(spare_redis_url)), max_active_jobs=LIMIT,
    )
    auth = {"Authorization": f"Bearer {key}"}
    with TestClient(create_app(lambda: (services, lambda: None))) as client:
        first = client.post("/v1/jobs", headers=auth, json=BOOK)
        second = client.post("/v1/jobs", headers={**auth, "Idempotency-Key": "two"}, json=BOOK)
        assert first.status_code == second.status_code == 202, (first.text, second.text)
        stored_before = sorted(objects.iter_keys("jobs/"))

        refused = client.post("/v1/jobs", headers=auth, json=BOOK)
        assert (refused.status_code, refused.text) == (
            429, f"too many unfinished jobs: an account may have at most {LIMIT} queued or running"
        )
        assert sorted(objects.iter_keys("jobs/")) == stored_before  # its text was not kept
        with db_sessionmaker() as session:
            ids = {uuid.UUID(first.json()["id"]), uuid.UUID(second.json()["id"])}
            owner = session.scalar(select(Job.account_id).where(Job.id == uuid.UUID(first.json()["id"])))
            assert owner is not None
            rows = session.scalar(select(func.count()).select_from(Job).where(Job.account_id == owner))
            assert rows == len(ids)  # no row for the refused job

        replay = client.post("/v1/jobs", headers={**auth, "Idempotency-Key": "two"}, json=BOOK)
        assert replay.status_code == 202 and replay.json()["id"] == second.json()["id"]  # a repeat, not a new job

        assert client.delete(f"/v1/jobs/{first.json()['id']}", headers=auth).status_code == 200
        third = client.post("/v1/jobs", headers=auth, json=BOOK)
        assert third.status_code == 202, third.text  # the canceled job freed its place
