"""The jobs route's ``delivery`` option in process, on real PostgreSQL and Redis and a local
object store: what it refuses, what a delivery job's master is, and where its compliance report
is read once the job has succeeded (the report itself is made and measured in
``tests/e2e/test_acx_delivery.py``)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from facade.app import create_app
from scheduler.objects import compliance_key, result_key
from scheduler.queue import Dispatcher, make_celery
from speech.voices import Catalog
from store.objects.local import LocalObjectStore
from store.status import JobStatus
from tests.support.job_state import force_status
from tests.support.services import services_with_key

BOOK = {"text": "A short book. It ends here.", "speaker": "joe", "title": "Short", "author": "A. Writer"}


def test_delivery_is_checked_its_master_is_lossless_and_its_report_is_on_the_job(
    db_sessionmaker: sessionmaker[Session], spare_redis_url: str, tmp_path: Path,
) -> None:
    objects = LocalObjectStore(tmp_path)
    services, key = services_with_key(
        db_sessionmaker, f"delivery-{uuid.uuid4().hex[:6]}", catalog=Catalog.load(), objects=objects,
        dispatcher=Dispatcher(make_celery(spare_redis_url)),
    )
    auth = {"Authorization": f"Bearer {key}"}
    with TestClient(create_app(lambda: (services, lambda: None))) as client:
        unknown = client.post("/v1/jobs", headers=auth, json={**BOOK, "delivery": "kindle"})
        assert (unknown.status_code, unknown.text) == (400, "delivery must be one of: acx")
        nameless = client.post("/v1/jobs", headers=auth, json={**BOOK, "author": None, "delivery": "acx"})
        assert (nameless.status_code, nameless.text) == (400, "delivery acx needs a title and an author (its credits say them)")

        submitted = client.post("/v1/jobs", headers=auth, json={**BOOK, "format": "mp3", "delivery": "acx"})
        assert submitted.status_code == 202, submitted.text
        job = submitted.json()
        assert (job["delivery"], job["format"], job["samplingRate"]) == ("acx", "wav", 44100)  # the master
        assert "compliance" not in client.get(f"/v1/jobs/{job['id']}", headers=auth).json()

        report = {"delivery": "acx", "pass": True, "files": [{"file": "00 Opening Credits.mp3", "rules": []}]}
        job_id = uuid.UUID(job["id"])
        objects.put_bytes(compliance_key(job_id), json.dumps(report).encode())
        objects.put_bytes(result_key(job_id, "zip"), b"PK")
        with services.storage.session_factory() as session:
            force_status(
                session, job_id, JobStatus.SUCCEEDED, result_key=result_key(job_id, "zip"),
                result_content_type="application/zip",
            )
            session.commit()
        assert client.get(f"/v1/jobs/{job_id}", headers=auth).json()["compliance"] == report
        served = client.get(f"/v1/jobs/{job_id}/compliance.json", headers=auth)
        assert served.status_code == 200 and served.json() == report
        plain = client.post("/v1/jobs", headers=auth, json=BOOK).json()
        assert plain["delivery"] is None and plain["format"] == "wav"
