"""The jobs route in process, on real PostgreSQL, Redis and a local object store: the length limit
is the app's setting (``Services.max_job_chars``), and submit and cancel send the lifecycle's
messages to the real broker only after their transaction committed."""

from __future__ import annotations

import json
from pathlib import Path

import redis
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from facade.app import create_app
from scheduler.queue import QUEUE_CPU, TASK_PLAN, TASK_WEBHOOK, Dispatcher, make_celery
from speech.voices import Catalog
from store.db.models import JOB_STATUSES
from store.objects.local import LocalObjectStore
from tests.support.services import services_with_key


def _queued(client: redis.Redis) -> list[tuple[str, str]]:
    """(task, argsrepr) of every message on the cpu queue, oldest first."""
    raw = client.lrange(QUEUE_CPU, 0, -1)
    return [(m["headers"]["task"], m["headers"]["argsrepr"]) for m in map(json.loads, reversed(raw))]


def test_the_limit_is_the_setting_and_messages_follow_the_commit(
    db_sessionmaker: sessionmaker[Session], own_redis_url: str, tmp_path: Path,
) -> None:
    broker = redis.Redis.from_url(own_redis_url)
    broker.delete(QUEUE_CPU)
    services, key = services_with_key(
        db_sessionmaker, "jobs-route", catalog=Catalog.load(), objects=LocalObjectStore(tmp_path),
        dispatcher=Dispatcher(make_celery(own_redis_url)), max_job_chars=40,
    )
    auth = {"Authorization": f"Bearer {key}"}
    with TestClient(create_app(lambda: (services, lambda: None))) as client:
        too_long = client.post("/v1/jobs", headers=auth, json={"text": "x" * 41, "speaker": "joe"})
        assert too_long.status_code == 400 and "text is too long" in too_long.text
        assert _queued(broker) == []

        submitted = client.post("/v1/jobs", headers=auth, json={"text": "A book of forty characters at most.", "speaker": "joe"})
        assert submitted.status_code == 202, submitted.text
        job_id = submitted.json()["id"]
        assert _queued(broker) == [(TASK_PLAN, repr([job_id]))]

        canceled = client.delete(f"/v1/jobs/{job_id}", headers=auth)
        assert canceled.status_code == 200 and canceled.json()["status"] == "canceled"
        assert _queued(broker)[1:] == [(TASK_WEBHOOK, repr([job_id, 1]))]
        assert client.delete(f"/v1/jobs/{job_id}", headers=auth).status_code == 200
        assert len(_queued(broker)) == 2  # canceling again announces nothing

        listed = client.get("/v1/jobs?status=canceled", headers=auth)
        assert [job["id"] for job in listed.json()["jobs"]] == [job_id]
        bogus = client.get("/v1/jobs?status=bogus", headers=auth)  # a 400 that names the statuses, not a 500
        assert (bogus.status_code, bogus.text) == (400, "status must be one of " + ", ".join(JOB_STATUSES))
    broker.close()


def test_an_accounts_qa_default_applies_where_a_job_does_not_say(
    db_sessionmaker: sessionmaker[Session], own_redis_url: str, tmp_path: Path,
) -> None:
    """``lector accounts qa NAME --on``: the account's jobs get the speech-recognition check
    (their ``qa`` report shows it) unless a job says ``"qa": false``."""
    import uuid

    from store.db import set_qa_default
    from tests.support.services import sessions_of

    name = f"qa-default-{uuid.uuid4().hex[:8]}"
    services, key = services_with_key(
        db_sessionmaker, name, catalog=Catalog.load(), objects=LocalObjectStore(tmp_path),
        dispatcher=Dispatcher(make_celery(own_redis_url)),
    )
    auth = {"Authorization": f"Bearer {key}"}
    body = {"text": "A short book.", "speaker": "joe"}
    with TestClient(create_app(lambda: (services, lambda: None))) as client:
        plain = client.post("/v1/jobs", headers=auth, json=body).json()
        assert "qa" not in plain
        with sessions_of(db_sessionmaker)() as session:
            set_qa_default(session=session, name=name, enabled=True)
        defaulted = client.post("/v1/jobs", headers=auth, json=body).json()
        assert defaulted["qa"] == {"status": "pending"}
        assert client.get(f"/v1/jobs/{defaulted['id']}", headers=auth).json()["qa"] == {"status": "pending"}
        declined = client.post("/v1/jobs", headers=auth, json={**body, "qa": False}).json()
        assert "qa" not in declined
