"""scheduler/delivery.py on a real PostgreSQL against a real HTTP receiver on loopback: a signed
callback delivered once, a failing receiver retried with backoff, a refused target not retried,
and a redelivered task finding the callback already delivered."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import Response
from sqlalchemy.orm import Session, sessionmaker

from scheduler import delivery, webhooks
from store.db import create_account, create_job, get_account, list_webhook_attempts, scoped_sessions
from tests.support.servers import ServerThread


class Receiver:
    """A webhook endpoint that answers ``status`` and keeps what it received."""

    def __init__(self) -> None:
        self.status = 200
        self.received: list[tuple[bytes, str]] = []
        app = FastAPI()

        @app.post("/hook")
        async def hook(request: Request) -> Response:
            self.received.append((await request.body(), request.headers.get(webhooks.SIGNATURE_HEADER, "")))
            return Response(status_code=self.status)

        self.server = ServerThread(app).start()
        self.url = self.server.url + "/hook"


@pytest.fixture(scope="module")
def receiver() -> Any:
    made = Receiver()
    yield made
    made.server.close()


def _finished_job(sessions: Any, url: str) -> tuple[uuid.UUID, str]:
    with sessions() as session:
        account = create_account(session=session, name=f"hook-{uuid.uuid4().hex[:8]}")
        job, _ = create_job(session=session, account_id=account.id, request_hash=uuid.uuid4().hex,
                            params={"speaker": "joe"}, characters=10, webhook_url=url)
        job.status, job.finished_at = "succeeded", datetime.now(UTC)
        session.flush()
        return job.id, get_account(session=session, account_id=account.id).webhook_secret


def _deliver(sessions: Any, job_id: uuid.UUID, attempt: int = 1, *, allow_private: bool = True) -> delivery.DeliveryOutcome:
    return delivery.deliver(sessions=sessions, job_id=job_id, attempt=attempt, audio_url=lambda job: None,
                            allow_private=allow_private, timeout_s=5)


def test_a_signed_callback_is_delivered_once(db_sessionmaker: sessionmaker[Session], receiver: Receiver) -> None:
    sessions = scoped_sessions(db_sessionmaker)
    receiver.status, receiver.received = 200, []
    job_id, secret = _finished_job(sessions, receiver.url)
    assert _deliver(sessions, job_id) == delivery.DeliveryOutcome(True, None)
    (body, signature), = receiver.received
    assert webhooks.verify(secret, body, signature)
    assert f'"jobId":"{job_id}"'.encode() in body and b'"event":"job.succeeded"' in body
    # The same task redelivered (a worker died after posting): nothing is posted again.
    assert _deliver(sessions, job_id) == delivery.DeliveryOutcome(True, None)
    assert len(receiver.received) == 1


def test_a_failing_receiver_is_retried_with_backoff(db_sessionmaker: sessionmaker[Session], receiver: Receiver) -> None:
    sessions = scoped_sessions(db_sessionmaker)
    receiver.status = 503
    job_id, _ = _finished_job(sessions, receiver.url)
    assert _deliver(sessions, job_id, attempt=3) == delivery.DeliveryOutcome(False, webhooks.backoff_seconds(3))
    with sessions() as session:
        (attempt,) = list_webhook_attempts(session=session, job_id=job_id)
        assert (attempt.attempt, attempt.delivered, attempt.status_code) == (3, False, 503)


def test_a_private_target_is_refused_and_not_retried(db_sessionmaker: sessionmaker[Session], receiver: Receiver) -> None:
    sessions = scoped_sessions(db_sessionmaker)
    receiver.received = []
    job_id, _ = _finished_job(sessions, receiver.url)
    assert _deliver(sessions, job_id, allow_private=False) == delivery.DeliveryOutcome(False, None)
    assert receiver.received == []
    with sessions() as session:
        (attempt,) = list_webhook_attempts(session=session, job_id=job_id)
        assert not attempt.delivered and "private or loopback" in (attempt.error or "")


def test_a_checked_jobs_callback_carries_its_qa_report(db_sessionmaker: sessionmaker[Session], receiver: Receiver, tmp_path: Any) -> None:
    """The webhook of a ``"qa": true`` job carries the report the API shows (``scheduler.qa.report``)."""
    import json

    from scheduler import qa
    from scheduler.objects import qa_report_key
    from store.objects.local import LocalObjectStore

    sessions = scoped_sessions(db_sessionmaker)
    receiver.status, receiver.received = 200, []
    objects = LocalObjectStore(tmp_path / "objects")
    with sessions() as session:
        account = create_account(session=session, name=f"hook-{uuid.uuid4().hex[:8]}")
        job, _ = create_job(session=session, account_id=account.id, request_hash=uuid.uuid4().hex,
                            params={"speaker": "joe", "model_id": "mistv3", "lang": "en", "qa": True}, characters=10, webhook_url=receiver.url)
        job.status, job.finished_at = "succeeded", datetime.now(UTC)
        job_id = job.id
    passage = {"chapter": "Chapter 2", "offsetSeconds": 61.5, "text": "A said.", "heard": "", "score": 1.0}
    objects.put_bytes(qa_report_key(job_id), json.dumps({"checked": 3, "flagged": 1, "passages": [passage]}).encode())
    outcome = delivery.deliver(sessions=sessions, job_id=job_id, attempt=1, audio_url=lambda job: None,
                               allow_private=True, timeout_s=5, qa_report=lambda job: qa.report(objects, job))
    assert outcome.delivered
    (body, _), = receiver.received
    sent = json.loads(body)["qa"]
    assert sent["status"] == "done" and sent["flagged"] == 1 and sent["passages"] == [passage]
