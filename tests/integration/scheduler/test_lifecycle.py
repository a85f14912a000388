"""scheduler/lifecycle.py on a real PostgreSQL and the local object store: every transition
returns the messages to send after commit, and only the call that made a transition announces it."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from books import rendering
from scheduler import lifecycle
from scheduler.intake import JobSpec
from scheduler.queue import (
    TASK_ASSEMBLE,
    TASK_ASSEMBLE_AHEAD,
    TASK_PLAN,
    TASK_SYNTHESIZE,
    TASK_WEBHOOK,
    Message,
)
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from store.db import create_account, get_job, make_sessionmaker, scoped_sessions
from store.errors import JobNotFound
from store.objects.local import LocalObjectStore
from tests.support.fake_engine import ToneEngine

T = TypeVar("T")
TEXT = "The first sentence of the book. " * 40 + "\n\n" + "A second paragraph follows here. " * 40


@pytest.fixture
def sessions(db_sessionmaker: sessionmaker[Session]) -> lifecycle.SessionFactory:
    return scoped_sessions(db_sessionmaker)


def _submit(
    sessions: lifecycle.SessionFactory,
    objects: LocalObjectStore,
    key: str | None = None,
    account_id: uuid.UUID | None = None,
    spec: JobSpec | None = None,
) -> tuple[uuid.UUID, uuid.UUID, bool, list[Message]]:
    with sessions() as session:
        if account_id is None:
            account_id = create_account(session=session, name=f"life-{uuid.uuid4().hex[:8]}").id
        job, created, messages = lifecycle.submit(
            session=session,
            objects=objects,
            account_id=account_id,
            spec=spec or JobSpec(text=TEXT, speaker="joe", model_id="mistv3", lang="en"),
            idempotency_key=key,
            allow_private_webhooks=False,
        )
    return job.id, account_id, created, messages


def test_submit_plans_a_new_job_once_and_a_replay_sends_nothing(
    sessions: lifecycle.SessionFactory, tmp_path: Path
) -> None:
    objects, key = LocalObjectStore(tmp_path), uuid.uuid4().hex
    job_id, account_id, created, messages = _submit(sessions, objects, key)
    assert created and messages == [Message(TASK_PLAN, (str(job_id),))]
    again, _, created_again, replayed = _submit(sessions, objects, key, account_id)
    assert (again, created_again, replayed) == (job_id, False, [])


def test_plan_moves_the_job_to_running_and_hands_out_its_batches(
    sessions: lifecycle.SessionFactory, tmp_path: Path
) -> None:
    objects = LocalObjectStore(tmp_path)
    job_id, *_ = _submit(sessions, objects)
    step = lifecycle.plan(sessions=sessions, objects=objects, job_id=job_id, batch_chars=400, window=2)
    with sessions() as session:
        job = get_job(session=session, job_id=job_id, account_id=None)
        assert job.status == "running" and job.chunks_total > 2
    assert step.value == len(step.messages) == 2  # the window, not every batch
    assert all(m.task == TASK_SYNTHESIZE and m.args[0] == str(job_id) for m in step.messages)
    handed = [i for m in step.messages for i in m.args[1]]
    assert len(handed) == len(set(handed)) and set(handed) < set(range(job.chunks_total))


def test_cancel_announces_once_and_another_accounts_job_is_not_found(
    sessions: lifecycle.SessionFactory,
    tmp_path: Path,
) -> None:
    objects = LocalObjectStore(tmp_path)
    job_id, account_id, *_ = _submit(sessions, objects)
    with sessions() as session:
        job, messages = lifecycle.cancel(session=session, job_id=job_id, account_id=account_id, window=2)
    assert job.status == "canceled" and messages == [Message(TASK_WEBHOOK, (str(job_id), 1))]
    with sessions() as session:
        assert lifecycle.cancel(session=session, job_id=job_id, account_id=account_id, window=2)[1] == []
    with pytest.raises(JobNotFound), sessions() as session:
        lifecycle.cancel(session=session, job_id=job_id, account_id=uuid.uuid4(), window=2)
    # A failure after the cancel changes nothing and announces nothing.
    assert lifecycle.fail(sessions=sessions, job_id=job_id, error=RuntimeError("late"), window=2) == []


def test_fail_records_the_error_and_announces(sessions: lifecycle.SessionFactory, tmp_path: Path) -> None:
    job_id, *_ = _submit(sessions, LocalObjectStore(tmp_path))
    assert lifecycle.fail(sessions=sessions, job_id=job_id, error=ValueError("bad chunk"), window=2) == [
        Message(TASK_WEBHOOK, (str(job_id), 1)),
    ]
    with sessions() as session:
        job = get_job(session=session, job_id=job_id, account_id=None)
        assert (job.status, job.error) == ("failed", "internal error")  # the customer reads our sentence; the log has the exception


def test_assemble_before_every_chunk_is_done_does_nothing(
    sessions: lifecycle.SessionFactory, tmp_path: Path
) -> None:
    objects = LocalObjectStore(tmp_path)
    job_id, *_ = _submit(sessions, objects)
    lifecycle.plan(sessions=sessions, objects=objects, job_id=job_id, batch_chars=400, window=1)
    step = lifecycle.assemble(sessions=sessions, objects=objects, job_id=job_id, workers=1)
    assert (step.value, step.messages) == (False, [])


def test_reap_resends_the_next_step_of_a_stalled_job(
    sessions: lifecycle.SessionFactory, tmp_path: Path
) -> None:
    job_id, *_ = _submit(sessions, LocalObjectStore(tmp_path))
    with sessions() as session:
        get_job(session=session, job_id=job_id, account_id=None).updated_at = datetime.now(UTC) - timedelta(
            hours=1
        )
    step = lifecycle.reap(sessions=sessions, stall_after_s=60, visibility_timeout_s=1800)
    assert Message(TASK_PLAN, (str(job_id),)) in step.messages
    again = lifecycle.reap(sessions=sessions, stall_after_s=60, visibility_timeout_s=1800)
    assert Message(TASK_PLAN, (str(job_id),)) not in again.messages  # touched: the next sweep waits


def _carry(
    sessions: lifecycle.SessionFactory, objects: LocalObjectStore, queue: list[Message], *, ahead: bool = False,
    until: str | None = None,
) -> list[str]:
    """Carry out each message in order, as the workers would, with a tone engine for the voice;
    return the tasks run. ``until``: stop when that task is next."""
    tone = ToneEngine()
    synthesizer, catalog = Synthesizer(lambda voice: tone), Catalog.load()
    ran: list[str] = []
    while queue and queue[0].task != until:
        message, queue = queue[0], queue[1:]
        ran.append(message.task)
        jid = uuid.UUID(message.args[0])
        if message.task == TASK_PLAN:
            step: lifecycle.Step[object] = lifecycle.plan(
                sessions=sessions, objects=objects, job_id=jid, batch_chars=400, window=2
            )
        elif message.task == TASK_SYNTHESIZE:
            step = lifecycle.synthesize(
                sessions=sessions,
                objects=objects,
                synthesizer=synthesizer,
                catalog=catalog,
                job_id=jid,
                indices=message.args[1],
                group_chars=400,
                assemble_ahead=ahead,
                window=2,
            )
        elif message.task == TASK_ASSEMBLE_AHEAD:
            step = lifecycle.assemble_ahead(sessions=sessions, objects=objects, job_id=jid, workers=1)
        elif message.task == TASK_ASSEMBLE:
            step = lifecycle.assemble(sessions=sessions, objects=objects, job_id=jid, workers=1)
        else:  # no webhook URL: nothing to deliver and nothing to retry
            step = lifecycle.deliver_webhook(
                sessions=sessions,
                objects=objects,
                job_id=jid,
                attempt=message.args[1],
                presign_seconds=60,
                allow_private=False,
                timeout_s=1,
                visibility_timeout_s=1800,
            )
        queue = queue + step.messages
    return ran


def test_the_messages_carry_a_job_from_plan_to_its_announcement(
    sessions: lifecycle.SessionFactory, tmp_path: Path
) -> None:
    """The lifecycle alone drives the job to ``succeeded``, and the queue then runs dry."""
    objects = LocalObjectStore(tmp_path)
    job_id, _, _, queue = _submit(sessions, objects)
    ran = _carry(sessions, objects, queue, ahead=True)  # book scope: nothing is assembled ahead
    with sessions() as session:
        job = get_job(session=session, job_id=job_id, account_id=None)
        assert job.status == "succeeded" and job.chunks_done == job.chunks_total > 2
    assert ran[0] == TASK_PLAN and ran[-2:] == [TASK_ASSEMBLE, TASK_WEBHOOK]
    assert ran.count(TASK_SYNTHESIZE) > 2  # batches handed on one by one after the first window
    assert TASK_ASSEMBLE_AHEAD not in ran


def test_a_chapter_scope_book_assembled_ahead_is_the_book_assembled_after(
    sessions: lifecycle.SessionFactory, tmp_path: Path
) -> None:
    """Chapter one is measured and encoded while chapter two is synthesized; the file is the same
    byte for byte as the one assembled after the last chunk."""
    chapters = [{"title": "One", "start": 0}, {"title": "Two", "start": TEXT.index("A second")}]
    spec = JobSpec(text=TEXT, speaker="joe", model_id="mistv3", lang="en", format="mp3", chapters=chapters,
                   loudness_scope="chapter")
    files = {}
    for ahead in (False, True):
        objects = LocalObjectStore(tmp_path / str(ahead))
        job_id, _, _, queue = _submit(sessions, objects, spec=spec)
        ran = _carry(sessions, objects, queue, ahead=ahead)
        assert ran[-2:] == [TASK_ASSEMBLE, TASK_WEBHOOK]
        assert (TASK_ASSEMBLE_AHEAD in ran) is ahead
        with sessions() as session:
            job = get_job(session=session, job_id=job_id, account_id=None)
            assert job.status == "succeeded"
        files[ahead] = objects.get_bytes(job.result_key or "")
    assert files[True][:3] == b"ID3" and files[True] == files[False]


class _CountingStore(LocalObjectStore):
    """The local store, counting the writes of each key. A segment's write takes a little longer,
    so that two steps started together are both still running when either looks for work."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.puts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def put_bytes(self, key: str, data: bytes, *, content_type: str | None = None) -> None:
        if "/ahead/segments/" in key:
            time.sleep(0.05)
        with self._lock:
            self.puts[key] += 1
        super().put_bytes(key, data, content_type=content_type)

    def put_file(self, key: str, path: Path, *, content_type: str | None = None) -> None:
        with self._lock:
            self.puts[key] += 1
        super().put_file(key, path, content_type=content_type)


def _twice_at_once(step: Callable[[], T]) -> list[T]:
    barrier = threading.Barrier(2)

    def go(_: int) -> T:
        barrier.wait()
        return step()

    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(go, range(2)))


@pytest.fixture
def committing_sessions(db_engine: Engine) -> lifecycle.SessionFactory:
    """Each unit of work on a connection of its own, committed (in this run's own database): two
    steps at once must really be two transactions, as on two workers."""
    return scoped_sessions(make_sessionmaker(db_engine))


def test_twin_steps_on_one_job_do_each_piece_of_work_once(
    committing_sessions: lifecycle.SessionFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two ``assemble_ahead`` steps at once (a redelivery, a message per batch), then two
    ``assemble`` steps at once: every chunk is measured once, every segment encoded once, the
    file uploaded once, and it is the file of the same book assembled with nothing ahead."""
    sessions = committing_sessions
    monkeypatch.setattr(rendering, "TARGET_SEGMENT_S", 2.0)  # segments inside chapters too
    chapters = [{"title": "One", "start": 0}, {"title": "Two", "start": TEXT.index("A second")}]
    spec = JobSpec(text=TEXT, speaker="joe", model_id="mistv3", lang="en", format="mp3", chapters=chapters,
                   loudness_scope="chapter")
    reference = LocalObjectStore(tmp_path / "reference")
    ref_id, _, _, queue = _submit(sessions, reference, spec=spec)
    _carry(sessions, reference, queue)

    objects = _CountingStore(tmp_path / "twins")
    job_id, _, _, queue = _submit(sessions, objects, spec=spec)
    _carry(sessions, objects, queue, until=TASK_ASSEMBLE)  # every chunk done; the job still running
    with sessions() as session:
        total = get_job(session=session, job_id=job_id, account_id=None).chunks_total

    ahead = _twice_at_once(
        lambda: lifecycle.assemble_ahead(sessions=sessions, objects=objects, job_id=job_id, workers=1).value
    )
    assert sorted(ahead) == [0, total]  # one measured the book; its twin left it the work
    segments = [k for k in objects.puts if "/ahead/segments/" in k]
    loudness = [k for k in objects.puts if "/ahead/loudness/" in k]
    assert len(segments) >= 2 and len(loudness) == total  # a segment per chapter at least
    assert all(objects.puts[k] == 1 for k in segments + loudness)

    done = _twice_at_once(lambda: lifecycle.assemble(sessions=sessions, objects=objects, job_id=job_id, workers=1))
    assert sorted(step.value for step in done) == [False, True]
    assert [m.task for step in done for m in step.messages] == [TASK_WEBHOOK]  # announced once
    with sessions() as session:
        job = get_job(session=session, job_id=job_id, account_id=None)
        ref = get_job(session=session, job_id=ref_id, account_id=None)
    assert job.status == "succeeded" and job.result_key
    # nothing encoded again; a chapter's record is written once, then once a look at its decoding
    assert all(objects.puts[k] == 1 for k in objects.puts if "/ahead/" in k and "/ahead/chapters/" not in k)
    chapters = [k for k in objects.puts if "/ahead/chapters/" in k]
    assert chapters and all(objects.puts[k] == 1 + len(json.loads(objects.get_bytes(k))["tries"]) for k in chapters)
    assert objects.puts[job.result_key] == 1
    assert objects.get_bytes(job.result_key) == reference.get_bytes(ref.result_key or "")


def test_failing_a_job_that_no_longer_exists_sends_nothing(sessions: lifecycle.SessionFactory) -> None:
    """A stale message's failure handler must not raise a second error for a job whose rows are gone."""
    assert lifecycle.fail(sessions=sessions, job_id=uuid.uuid4(), error=RuntimeError("boom"), window=2) == []


class _FrozenEngine(ToneEngine):
    """An engine call during which the host is frozen: ``meanwhile`` (another host doing the same
    batch, redelivered to it) runs inside the first call, which then returns as a thawed host's."""

    def __init__(self, meanwhile: Callable[[], object]) -> None:
        super().__init__()
        self.meanwhile: Callable[[], object] | None = meanwhile

    def synthesize(self, sentences, options=None):  # type: ignore[no-untyped-def]
        if self.meanwhile is not None:
            run, self.meanwhile = self.meanwhile, None
            run()
        return super().synthesize(sentences, options)


def test_a_thawed_zombie_writes_nothing_over_chunks_another_host_stored(
    committing_sessions: lifecycle.SessionFactory, tmp_path: Path
) -> None:
    """A synthesize task whose host froze in the engine call, and whose batch another host did
    meanwhile, wakes up: it stores no audio over that host's (assembly may have read it already)
    and bills nothing."""
    sessions = committing_sessions
    objects = _CountingStore(tmp_path / "zombie")
    job_id, _, _, _ = _submit(sessions, objects)
    planned = lifecycle.plan(sessions=sessions, objects=objects, job_id=job_id, batch_chars=400, window=2)
    batch = next(m for m in planned.messages if m.task == TASK_SYNTHESIZE).args[1]
    catalog = Catalog.load()

    def run(engine: ToneEngine) -> int:
        return lifecycle.synthesize(
            sessions=sessions, objects=objects, synthesizer=Synthesizer(lambda voice: engine), catalog=catalog,
            job_id=job_id, indices=batch, group_chars=200, window=2,
        ).value

    rescued: list[int] = []
    late = run(_FrozenEngine(lambda: rescued.append(run(ToneEngine()))))
    assert rescued == [len(batch)] and late == 0
    chunk_writes = {key: n for key, n in objects.puts.items() if "/chunks/" in key}
    assert len(chunk_writes) == 2 * len(batch)  # audio and timings of each chunk
    assert set(chunk_writes.values()) == {1}, chunk_writes  # the rescuer's, never overwritten


def test_the_live_playlist_follows_synthesis_group_by_group_and_ends_with_the_book(
    sessions: lifecycle.SessionFactory, tmp_path: Path
) -> None:
    """With ``live``, each engine call's commit sends the segment maker (run here at once, in the
    middle of the batch); every playlist starts with the one before, and the last one covers the
    book to its final sample."""
    from books.hls_index import TARGET_DURATION_S
    from books.timeline import Timeline
    from scheduler import hls, hls_playlist
    from scheduler.queue import TASK_HLS

    objects = LocalObjectStore(tmp_path)
    spec = JobSpec(text=TEXT * 3, speaker="joe", model_id="mistv3", lang="en",
                   chapters=[{"title": "One", "start": 0}, {"title": "Two", "start": len(TEXT) + 2}])
    job_id, _, _, queue = _submit(sessions, objects, spec=spec)
    tone = ToneEngine()
    synthesizer, catalog = Synthesizer(lambda voice: tone), Catalog.load()
    playlists: list[str] = []
    sent: list[Message] = []

    def send(messages: list[Message]) -> None:
        sent.extend(messages)
        for message in messages:
            assert message == Message(TASK_HLS, (str(job_id),))
            lifecycle.hls_segments(sessions=sessions, objects=objects, job_id=job_id)
        with sessions() as session:
            playlists.append(hls_playlist.playlist(objects, get_job(session=session, job_id=job_id, account_id=None)))

    queue = lifecycle.plan(sessions=sessions, objects=objects, job_id=job_id, batch_chars=1200, window=1).messages
    batches = 0
    while queue[0].task == TASK_SYNTHESIZE:
        batches += 1
        step = lifecycle.synthesize(
            sessions=sessions, objects=objects, synthesizer=synthesizer, catalog=catalog, job_id=job_id,
            indices=queue[0].args[1], group_chars=400, live=True, send=send, window=1,
        )
        assert Message(TASK_HLS, (str(job_id),)) not in step.messages  # sent group by group instead
        queue = queue[1:] + step.messages
    assert len(sent) > batches > 2
    assert queue[0].task == TASK_ASSEMBLE
    done = lifecycle.assemble(sessions=sessions, objects=objects, job_id=job_id, workers=1, live=True)
    send([m for m in done.messages if m.task == TASK_HLS])

    for earlier, later in zip(playlists, playlists[1:], strict=False):
        assert later.startswith(earlier.removesuffix("#EXT-X-ENDLIST\n"))
    assert "#EXT-X-ENDLIST" not in playlists[0] and playlists[-1].endswith("#EXT-X-ENDLIST\n")
    index = hls.read_index(objects, job_id)
    assert index is not None and index.complete
    from books.layout import Layout
    from scheduler.objects import plan_key
    from store.db import jobs as job_repo

    with sessions() as session:
        durations = job_repo.chunk_durations(session=session, job_id=job_id)
    layout = Layout.from_json(objects.get_bytes(plan_key(job_id)))
    timeline = Timeline.build(tone.sample_rate, layout.pauses_ms, [round(d * tone.sample_rate) for d in durations])
    assert index.segments[0][0] == 0 and index.segments[-1][1] == timeline.end
    assert all(a[1] == b[0] for a, b in zip(index.segments, index.segments[1:], strict=False))  # no gap, no overlap
    assert all(0 < stop - start <= TARGET_DURATION_S * tone.sample_rate for start, stop in index.segments)
    assert [c.title for c in index.chapters] == ["One", "Two"]
    two = timeline.offsets[layout.chapters[1].chunk] - timeline.pauses[layout.chapters[1].chunk]
    assert index.chapters[1].start == two and index.segments[index.chapters[1].segment][0] == two // 1024 * 1024
