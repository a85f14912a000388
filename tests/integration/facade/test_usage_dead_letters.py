"""The usage outbox never blocks or loses rows: a row PostgreSQL refuses (here a foreign-key
violation, an account that does not exist) goes to the dead letters and the rows behind it are
replayed; a spool line that is not JSON is logged and kept aside. Real PostgreSQL throughout."""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from facade.usage import replay_into
from facade.usage_spool import CORRUPT_NAME, SPOOL_NAME, DeadLetters, UsageSpool
from store.db import create_account, make_engine, make_sessionmaker, session_scope


def _row(account_id: Any, request_id: str) -> dict[str, Any]:
    return {"accountId": str(account_id), "apiKeyId": None, "transport": "http", "requestId": request_id,
            "model": "mistv3", "speaker": "joe", "lang": "en", "characters": 12, "audioSeconds": 1.0,
            "createdAt": datetime.now(UTC).isoformat()}


def test_a_poison_row_and_a_corrupt_line_block_nothing(pg_url: str, tmp_path: Path,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    engine = make_engine(pg_url)
    factory = make_sessionmaker(engine)

    @contextlib.contextmanager
    def sessions() -> Iterator[Any]:
        with session_scope(factory) as session:
            yield session

    with sessions() as session:
        account_id = create_account(session=session, name=f"dead-{uuid.uuid4().hex[:8]}").id
    dead = DeadLetters(tmp_path / "outbox")
    outbox = UsageSpool(tmp_path / "outbox", None, post=replay_into(sessions, dead), dead_letters=dead, batch_size=10)
    tag = uuid.uuid4().hex[:8]
    outbox.append(_row(uuid.uuid4(), f"poison-{tag}"))  # no such account: refused for good
    with open(tmp_path / "outbox" / SPOOL_NAME, "ab") as spool:
        spool.write(b'{"accountId": "torn\n')
    outbox.append(_row(account_id, f"good-1-{tag}"))
    outbox.append(_row(account_id, f"good-2-{tag}"))
    caplog.set_level(logging.INFO)
    try:
        assert outbox.flush() == 3
        with engine.connect() as conn:
            billed = conn.execute(text("SELECT request_id FROM usage WHERE request_id LIKE :t ORDER BY request_id"),
                                  {"t": f"%{tag}"}).scalars().all()
        assert billed == [f"good-1-{tag}", f"good-2-{tag}"]
        assert [(d["record"]["requestId"], d["reason"].split(":")[0]) for d in dead.records()] == [
            (f"poison-{tag}", "IntegrityError")
        ]
        assert (tmp_path / "outbox" / CORRUPT_NAME).read_bytes() == b'{"accountId": "torn\n'
        assert outbox.pending() == []
        messages = [r.getMessage() for r in caplog.records if r.name == "lector.usage_spool"]
        assert any("set aside" in m and f"poison-{tag}" in m for m in messages)
        assert any("corrupt usage spool line" in m for m in messages)
    finally:
        engine.dispose()


def test_a_row_refused_at_record_time_goes_to_the_dead_letters(pg_url: str, tmp_path: Path) -> None:
    """Not "database unavailable": the row is not spooled for replay (it would be refused again
    forever) but set aside, and the request that made it is not failed."""
    from facade.deps import Principal, Services, Speech, Storage, Usage
    from facade.request_resolution import ResolvedRequest
    from facade.usage import record
    from facade.validation import SynthesisRequest
    from speech.stream_steps import StreamStep
    from speech.streaming import StreamStats
    from speech.synthesizer import Controls

    engine = make_engine(pg_url)
    factory = make_sessionmaker(engine)

    @contextlib.contextmanager
    def sessions() -> Iterator[Any]:
        with session_scope(factory) as session:
            yield session

    dead = DeadLetters(tmp_path / "outbox")
    outbox = UsageSpool(tmp_path / "outbox", None, post=replay_into(sessions, dead), dead_letters=dead)
    services = Services(speech=Speech(catalog=None, synthesizer=None),  # type: ignore[arg-type]
                        storage=Storage(session_factory=sessions), usage=Usage(outbox=outbox))
    ghost = Principal(uuid.uuid4(), None, "ghost", None, None, 60, "secret")  # no such account
    request_id = f"ghost-{uuid.uuid4().hex[:8]}"
    try:
        record(services, ghost, SynthesisRequest(text="Hello.", speaker="joe"),
               ResolvedRequest("mistv3", "mistv3", None, "en", [StreamStep(text="Hello.")], Controls()),
               StreamStats(sentences=1, audio_seconds=0.5), transport="http", request_id=request_id)
        assert outbox.pending() == []
        assert [d["record"]["requestId"] for d in dead.records()] == [request_id]
    finally:
        engine.dispose()
