"""Book jobs at the edges, on real PostgreSQL, a real Redis broker and a local object store:
empty and control-character text at intake, a result object gone missing, the JSON variant's
500, cancelling while the broker hangs (the publish must not stall the event loop), and a cancel
that PostgreSQL aborts to break a deadlock with a worker's step."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from facade.app import create_app
from scheduler.errors import JOB_ERRORS, job_error
from scheduler.queue import Dispatcher, make_celery
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from store.db import jobs as job_repo
from store.objects.local import LocalObjectStore
from store.status import JobStatus
from tests.support.fake_engine import ToneEngine
from tests.support.job_state import force_status
from tests.support.servers import ServerThread
from tests.support.services import services_with_key


def _services(factory: sessionmaker[Session], tmp_path: Path, broker: str, *, engine: Any = None) -> tuple[Any, str]:
    return services_with_key(
        factory, f"jobs-{uuid.uuid4().hex[:6]}", catalog=Catalog.load(),
        synthesizer=Synthesizer(lambda voice: engine or ToneEngine()),
        objects=LocalObjectStore(tmp_path / "objects"), dispatcher=Dispatcher(make_celery(broker)),
    )


@pytest.fixture
def client(db_sessionmaker: sessionmaker[Session], tmp_path: Path, own_redis_url: str) -> Iterator[tuple[TestClient, str, Any]]:
    services, key = _services(db_sessionmaker, tmp_path, own_redis_url)
    with TestClient(create_app(lambda: (services, lambda: None)), raise_server_exceptions=False) as c:
        yield c, key, services


@pytest.mark.parametrize("text", ["   \n\n  ", "\x00\x00 \x01", "\t\x7f", "* * *", "***\n\n***"])
def test_a_job_with_nothing_to_say_is_400(client: tuple[TestClient, str, Any], text: str) -> None:
    c, key, _ = client
    response = c.post("/v1/jobs", json={"text": text, "speaker": "joe"}, headers={"Authorization": f"Bearer {key}"})
    assert (response.status_code, response.text) == (400, "text must not be empty")


def test_a_book_with_speech_late_in_it_is_accepted(client: tuple[TestClient, str, Any]) -> None:
    c, key, _ = client
    text = "* * *\n" * 3000 + "At last, a sentence."
    response = c.post("/v1/jobs", json={"text": text, "speaker": "joe"}, headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 202, response.text


def test_control_characters_are_cleaned_or_refused(client: tuple[TestClient, str, Any]) -> None:
    c, key, services = client
    auth = {"Authorization": f"Bearer {key}"}
    accepted = c.post("/v1/jobs", headers=auth,
                      json={"text": "One\x00 two.\x1b Three.", "speaker": "joe", "title": "A\x00B", "author": "C\x07"})
    assert accepted.status_code == 202, accepted.text
    view = accepted.json()
    assert (view["title"], view["author"], view["characters"]) == ("A B", "C ", len("One two. Three."))
    with services.storage.session_factory() as session:
        job = job_repo.get_job(session=session, job_id=uuid.UUID(view["id"]), account_id=None)
        stored = services.storage.objects.get_bytes(job.text_key).decode()
    assert "\x00" not in stored and "\x1b" not in stored and stored.split() == ["One", "two.", "Three."]
    refused = c.post("/v1/jobs", headers=auth, json={"text": "Hello.", "speaker": "jo\x00e"})
    assert (refused.status_code, refused.text) == (400, "speaker must not contain control characters")


def test_a_missing_result_object_is_404_like_the_subtitles(client: tuple[TestClient, str, Any]) -> None:
    c, key, services = client
    auth = {"Authorization": f"Bearer {key}"}
    jid = c.post("/v1/jobs", json={"text": "Hello.", "speaker": "joe"}, headers=auth).json()["id"]
    with services.storage.session_factory() as session:
        force_status(session, uuid.UUID(jid), JobStatus.SUCCEEDED,
                     result_key=f"results/{jid}/book.wav", result_content_type="audio/wav")
    audio = c.get(f"/v1/jobs/{jid}/audio", headers=auth)
    subtitles = c.get(f"/v1/jobs/{jid}/subtitles.srt", headers=auth)
    assert (audio.status_code, audio.text) == (subtitles.status_code, subtitles.text) == (404, "job not found")


def test_job_errors_are_our_own_sentences() -> None:
    """A psycopg DataError carries its SQL; the customer's error is one of our sentences."""
    import psycopg
    from sqlalchemy.exc import DataError

    exc = DataError("INSERT INTO chunks (text) VALUES (%(text)s)", {"text": "\x00"},
                    psycopg.DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes"))
    assert job_error(exc) == "internal error"
    assert job_error(RuntimeError("/work/secret/path.py line 3")) == "internal error"
    from speech.errors import EncodeError, VoiceNotFound

    assert job_error(VoiceNotFound("x" * 500, "mistv3")) == "the job's voice is not available"
    assert job_error(EncodeError("libmp3lame: /tmp/x")) == "audio encoding failed"
    assert all(len(message) < 60 and "/" not in message for message in JOB_ERRORS.values())


class _BrokenEngine:
    sample_rate = 22050

    def synthesize(self, sentences: Any, options: Any = None) -> Any:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    def phonemize(self, text: str) -> str:
        return text


def test_the_json_variant_fails_with_the_json_500(db_sessionmaker: sessionmaker[Session], tmp_path: Path,
                                                  own_redis_url: str) -> None:
    services, key = _services(db_sessionmaker, tmp_path, own_redis_url, engine=_BrokenEngine())
    with TestClient(create_app(lambda: (services, lambda: None)), raise_server_exceptions=False) as c:
        response = c.post("/v1/service-tts", json={"text": "This will fail.", "speaker": "joe", "modelId": "mistv2"},
                          headers={"Authorization": f"Bearer {key}", "Accept": "application/json"})
    assert (response.status_code, response.json()) == (500, {"error": "internal error"})


def test_cancel_does_not_block_the_event_loop_on_a_hung_broker(db_sessionmaker: sessionmaker[Session],
                                                                tmp_path: Path, own_redis_url: str) -> None:
    """The broker accepts connections and never answers: the cancel's publish hangs in a thread,
    and the API keeps answering other requests meanwhile."""
    services, key = _services(db_sessionmaker, tmp_path, own_redis_url)
    auth = {"Authorization": f"Bearer {key}"}
    with TestClient(create_app(lambda: (services, lambda: None))) as c:
        jid = c.post("/v1/jobs", json={"text": "Hello.", "speaker": "joe"}, headers=auth).json()["id"]
    hung = socket.socket()
    hung.bind(("127.0.0.1", 0))
    hung.listen(16)  # connections complete in the backlog; nothing ever reads or answers
    services.brokers.dispatcher = Dispatcher(make_celery(f"redis://127.0.0.1:{hung.getsockname()[1]}/0"))
    server = ServerThread(create_app(lambda: (services, lambda: None))).start()
    try:
        threading.Thread(target=lambda: _quietly(httpx.delete, f"{server.url}/v1/jobs/{jid}", headers=auth, timeout=5),
                         daemon=True).start()
        time.sleep(0.5)  # the cancel is now inside its publish
        started = time.monotonic()
        response = httpx.get(f"{server.url}/v1/jobs/{jid}", headers=auth, timeout=5)
        assert response.status_code == 200 and response.json()["status"] == "canceled"
        assert time.monotonic() - started < 1.0
    finally:
        hung.close()
        server.close()


def _quietly(call: Any, *args: Any, **kwargs: Any) -> None:
    try:
        call(*args, **kwargs)
    except httpx.HTTPError:
        pass


def test_a_cancel_aborted_to_break_a_deadlock_is_run_again(
    pg_url: str, tmp_path: Path, own_redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A worker's step holds the account (handing out batches) and then wants the job's row, which
    the cancel holds while it waits for the account: PostgreSQL aborts the cancel, the one that
    waited first. The API runs it again once the step has committed and answers 200, not the
    500 ``Database error`` a client could not know to be safe to retry. (Connections of their
    own: the savepoint fixture's one connection cannot deadlock with itself.)"""
    from sqlalchemy import select, text

    from store.db.batches import lock_account
    from store.db.models import Job
    from store.db.session import make_engine, make_sessionmaker

    engine = make_engine(pg_url)
    sessions = make_sessionmaker(engine)
    services, key = _services(sessions, tmp_path, own_redis_url)
    auth = {"Authorization": f"Bearer {key}"}
    step = sessions()  # the worker's step, in a transaction of its own
    answers: list[httpx.Response] = []
    try:
        with TestClient(create_app(lambda: (services, lambda: None)), raise_server_exceptions=False) as c:
            jid = c.post("/v1/jobs", json={"text": "Hello there.", "speaker": "joe"}, headers=auth).json()["id"]
            with sessions() as probe:
                account_id = job_repo.get_job(session=probe, job_id=uuid.UUID(jid), account_id=None).account_id
            lock_account(session=step, account_id=account_id)
            pid = step.execute(text("SELECT pg_backend_pid()")).scalar_one()
            cancel = threading.Thread(target=lambda: answers.append(c.delete(f"/v1/jobs/{jid}", headers=auth)))
            with caplog.at_level("INFO", logger="lector.store"):
                cancel.start()
                deadline = time.monotonic() + 10
                with sessions() as probe:  # until the cancel, holding the job's row, waits for the step
                    while not probe.execute(
                        text("SELECT count(*) FROM pg_stat_activity WHERE :pid = ANY(pg_blocking_pids(pid))"), {"pid": pid}
                    ).scalar_one():
                        assert time.monotonic() < deadline, ("the cancel never waited for the account", answers)
                        probe.rollback()  # pg_stat_activity is read once a transaction
                        time.sleep(0.05)
                # the step now wants the job's row: a cycle, which PostgreSQL breaks by aborting the cancel
                step.execute(select(Job.status).where(Job.id == uuid.UUID(jid)).with_for_update())
                step.commit()  # the step was not the one aborted
                cancel.join(30)
        assert [(r.status_code, r.json()["status"] if r.status_code == 200 else r.text) for r in answers] == [(200, "canceled")]
        assert any("running it again" in r.getMessage() and "deadlock" in r.getMessage() for r in caplog.records)
    finally:
        step.close()
        engine.dispose()
