"""Usage rows are not lost when PostgreSQL goes away after a request was authenticated: they
wait in the on-disk outbox and are replayed, once, when it is back.

PostgreSQL is real and stays up; lector reaches it through a relay that is cut and restored
(``tests/support/relay.py``), as a network partition would do."""

from __future__ import annotations

import uuid
from pathlib import Path
from urllib.parse import urlsplit

from sqlalchemy import text

from facade.deps import Principal, Services, Speech, Storage, Usage
from facade.request_resolution import ResolvedRequest
from facade.usage import record, replay_into
from facade.usage_spool import UsageSpool
from facade.validation import SynthesisRequest
from speech.stream_steps import StreamStep
from speech.streaming import StreamStats
from speech.synthesizer import Controls
from store.db import create_account, create_key, make_engine, make_sessionmaker, session_scope
from store.db.session import scoped_sessions
from tests.support.relay import Relay


def test_rows_wait_in_the_outbox_and_are_replayed_once(pg_url: str, tmp_path: Path) -> None:
    direct = make_engine(pg_url)
    with session_scope(make_sessionmaker(direct)) as session:
        account = create_account(session=session, name=f"outbox-{uuid.uuid4().hex[:8]}")
        key_row = create_key(session=session, account_id=account.id)[0]
        account_id, key_id = account.id, key_row.id

    parts = urlsplit(pg_url)
    relay = Relay(parts.hostname or "127.0.0.1", parts.port or 5432)
    relayed = make_engine(pg_url.replace(f"{parts.hostname}:{parts.port}", f"127.0.0.1:{relay.port}"))
    factory = make_sessionmaker(relayed)

    sessions = scoped_sessions(factory)

    outbox = UsageSpool(tmp_path / "outbox", None, post=replay_into(sessions))
    services = Services(speech=Speech(catalog=None, synthesizer=None),  # type: ignore[arg-type]
                        storage=Storage(session_factory=sessions), usage=Usage(outbox=outbox))
    principal = Principal(account_id, key_id, "outbox", None, None, 60, "secret")
    req = SynthesisRequest(text="Two sentences. Billed once.", speaker="joe")
    resolved = ResolvedRequest("mistv3", "mistv3", None, "en", [StreamStep(text="Two sentences."), StreamStep(text="Billed once.")], Controls())
    stats = StreamStats(sentences=2, audio_seconds=2.5)

    def rows(request_id: str) -> list[tuple[int, str]]:
        with direct.connect() as conn:
            found = conn.execute(text("SELECT characters, transport FROM usage WHERE request_id = :r"), {"r": request_id})
            return [tuple(r) for r in found]  # type: ignore[misc]

    try:
        record(services, principal, req, resolved, stats, transport="http", request_id="ok-1")
        assert rows("ok-1") == [(len(req.text), "http")] and outbox.pending() == []  # the normal path

        relay.cut()
        record(services, principal, req, resolved, stats, transport="ws", request_id="during-outage")
        assert rows("during-outage") == []
        assert [r["requestId"] for r in outbox.pending()] == ["during-outage"]  # on disk, fsynced
        assert outbox.flush() == 0  # still down: kept

        relay.restore()
        relayed.dispose()  # drop the pool's broken connections, as pool_pre_ping would
        batch = {"records": outbox.pending()}
        assert outbox.flush() == 1
        assert rows("during-outage") == [(len(req.text), "ws")]
        assert replay_into(sessions)(batch)  # a replay that crashed before moving its cursor, sent again
        assert rows("during-outage") == [(len(req.text), "ws")]  # still billed once
        assert outbox.pending() == []
    finally:
        relay.close()
        relayed.dispose()
        direct.dispose()
