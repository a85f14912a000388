"""What a synthesize task costs PostgreSQL in commits (the control plane's figure, docs/scaling.md):
a batch's chunk rows, usage rows and hand-out to the account's next batch commit once, and the
task's other transactions are the reads it cannot do without (the job, the account's chunk
cache, one look per engine call before writing its audio). Counted on the real server, with
SQLAlchemy's events on an engine of the test's own.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event

from scheduler import hls, lifecycle
from scheduler.intake import JobSpec
from scheduler.queue import TASK_SYNTHESIZE
from scheduler.synthesis import _groups
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from store.db.accounts import create_account
from store.db.jobs import list_chunks
from store.db.session import SessionFactory, make_engine, make_sessionmaker, scoped_sessions
from store.objects.local import LocalObjectStore
from tests.support.fake_engine import ToneEngine

pytestmark = [pytest.mark.integration]

BATCH_CHARS, GROUP_CHARS = 4000, 1500  # the CPU defaults: three engine calls a batch or so
TEXT = "\n\n".join(f"Paragraph {n} of the ledger. The clerk counted the rows again, and then once more." for n in range(60))
_WRITE = re.compile(r"^\s*(INSERT INTO|UPDATE|DELETE FROM)\s+(\w+)", re.IGNORECASE)


@dataclass
class Transactions:
    """Each committed transaction's writes, as ``"UPDATE job_chunks"``-like names, in order."""

    committed: list[set[str]] = field(default_factory=list)
    open: dict[int, set[str]] = field(default_factory=dict)

    def listen(self, engine: Engine) -> None:
        event.listen(engine, "before_cursor_execute", self._statement)
        event.listen(engine, "commit", self._commit)
        event.listen(engine, "rollback", self._rollback)

    def _statement(self, conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        writes = self.open.setdefault(id(conn), set())
        if match := _WRITE.match(statement):
            writes.add(f"{match.group(1).upper()} {match.group(2)}")

    def _commit(self, conn: Any) -> None:
        self.committed.append(self.open.pop(id(conn), set()))

    def _rollback(self, conn: Any) -> None:
        self.open.pop(id(conn), None)


@pytest.fixture
def counted(pg_url: str) -> Iterator[tuple[SessionFactory, Transactions]]:
    engine = make_engine(pg_url)
    transactions = Transactions()
    transactions.listen(engine)
    yield scoped_sessions(make_sessionmaker(engine)), transactions
    engine.dispose()


def _planned(sessions: SessionFactory, objects: LocalObjectStore, name: str) -> tuple[uuid.UUID, list[int]]:
    """A job of ``TEXT`` submitted and planned: its id and its first synthesize batch."""
    with sessions() as session:
        account = create_account(session=session, name=f"{name}-{uuid.uuid4().hex[:8]}").id
        job, _, _ = lifecycle.submit(
            session=session, objects=objects, account_id=account, idempotency_key=None, allow_private_webhooks=False,
            spec=JobSpec(text=TEXT, speaker="joe", model_id="mistv3", lang="en", format="wav"),
        )
    planned = lifecycle.plan(sessions=sessions, objects=objects, job_id=job.id, batch_chars=BATCH_CHARS, window=1)
    batch = [int(i) for i in next(m for m in planned.messages if m.task == TASK_SYNTHESIZE).args[1]]  # type: ignore[attr-defined]
    return job.id, batch


@pytest.mark.parametrize("live", [False, True])
def test_a_batch_commits_its_chunks_usage_and_hand_out_once(
    counted: tuple[SessionFactory, Transactions], tmp_path: Path, live: bool,
) -> None:
    """Without the live playlist, one commit marks the batch's chunks, bills them and hands on;
    the task commits ``groups + 3`` times in all (the job read, the cache look, a look per engine
    call, that one). With it, each engine call's chunks commit as they are stored (the playlist
    follows them), the hand-out with the last."""
    sessions, transactions = counted
    objects = LocalObjectStore(tmp_path / "objects")
    job_id, batch = _planned(sessions, objects, "commits")
    with sessions() as session:
        texts = {c.index: c.text for c in list_chunks(session=session, job_id=job_id)}
    groups = len(_groups([(i, texts[i]) for i in batch], GROUP_CHARS))
    assert groups >= 3, "the batch is one engine call: nothing to merge"
    tone = ToneEngine()
    heard: list[object] = []
    transactions.committed.clear()

    step = lifecycle.synthesize(
        sessions=sessions, objects=objects, synthesizer=Synthesizer(lambda voice: tone), catalog=Catalog.load(),
        job_id=job_id, indices=batch, group_chars=GROUP_CHARS, window=1,
        live=live, send=heard.extend if live else None,
    )

    assert step.value == len(batch)
    marks = [i for i, writes in enumerate(transactions.committed) if "UPDATE job_chunks" in writes]
    billed = [i for i, writes in enumerate(transactions.committed) if "INSERT INTO usage" in writes]
    handed = [i for i, writes in enumerate(transactions.committed) if "UPDATE job_batches" in writes]
    assert marks == billed  # chunks and their usage rows: always in the same commits
    assert handed == [marks[-1]]  # the hand-out rides on the batch's last one
    if live:
        assert len(marks) == groups and len(heard) == groups
        assert len(transactions.committed) == 2 * groups + 2
    else:
        assert len(marks) == 1
        assert len(transactions.committed) == groups + 3
    print(f"\ncommits for a batch of {len(batch)} chunks in {groups} engine calls ({'live' if live else 'no live'} "  # noqa: T201
          f"playlist): {len(transactions.committed)}, {len(transactions.committed) / len(batch):.2f} a chunk")


def test_a_live_segment_task_commits_twice_however_many_looks_it_takes(
    counted: tuple[SessionFactory, Transactions], tmp_path: Path,
) -> None:
    """The segment maker (``scheduler.hls.advance_stream``) looks at the done prefix until it
    finds nothing more to cut: those looks ride in the transaction that holds its lock, and one
    more look after letting go is the other commit. Two, not one a look."""
    sessions, transactions = counted
    objects = LocalObjectStore(tmp_path / "objects")
    job_id, batch = _planned(sessions, objects, "segments")
    tone = ToneEngine()
    lifecycle.synthesize(
        sessions=sessions, objects=objects, synthesizer=Synthesizer(lambda voice: tone), catalog=Catalog.load(),
        job_id=job_id, indices=batch, group_chars=GROUP_CHARS, window=1, live=False, send=None,
    )
    transactions.committed.clear()

    made = hls.advance_stream(sessions=sessions, objects=objects, job_id=job_id)

    assert made >= 2  # more than one segment, so more than one look under the lock
    assert len(transactions.committed) == 2
    assert hls.advance_stream(sessions=sessions, objects=objects, job_id=job_id) == 0  # a twin finds it all done
