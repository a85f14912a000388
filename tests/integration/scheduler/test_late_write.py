"""A zombie's late write replaces nothing: chunk audio keys are write-once per attempt.

A synthesize task whose host was frozen looks again which of its chunks are pending before it
writes; a host frozen *after* that look writes anyway when it wakes, late, after another host
did the batch and the book was assembled. Here that write really happens (the zombie's PUTs wait
while another "host" does the whole job, then go through), with audio that differs from the
rescuer's: the rows keep the rescuer's keys, the book assembled again from them is the same
file, and the zombie bills nothing. With one key per chunk (before), the late PUT replaced audio
that assembly had read.
"""

from __future__ import annotations

import io
import threading
import uuid
import wave
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import Engine, text

from books.chunks import ChunkKeys
from scheduler import assembly, lifecycle
from scheduler.intake import JobSpec
from scheduler.job_params import JobParams
from scheduler.queue import TASK_ASSEMBLE, TASK_ASSEMBLE_AHEAD, TASK_SYNTHESIZE, TASK_WEBHOOK, Message
from speech.synthesizer import Synthesizer
from speech.types import AudioChunk
from speech.voices import Catalog
from store.db import create_account, get_job, make_sessionmaker, scoped_sessions
from store.db import jobs as job_repo
from store.objects.local import LocalObjectStore
from tests.support.fake_engine import ToneEngine

TEXT = "The first sentence of the book. " * 20 + "\n\n" + "A second paragraph follows here. " * 20


class _QuietTone(ToneEngine):
    """The tone at half its level: the zombie's render, which differs from the rescuer's."""

    def synthesize(self, sentences, options=None):  # type: ignore[no-untyped-def]
        return [AudioChunk(c.samples * 0.5, c.sample_rate, c.text, c.words) for c in super().synthesize(sentences, options)]


def _attempt(key: str) -> str:
    return key.rsplit(".", 2)[-2]


class _FreezingStore(LocalObjectStore):
    """The first attempt to PUT chunk audio is the zombie's: all its chunk PUTs wait until
    ``meanwhile`` (run by the first of them) has finished, then go through, late."""

    def __init__(self, root: Path, meanwhile: Callable[[], object]) -> None:
        super().__init__(root)
        self._meanwhile: Callable[[], object] | None = meanwhile
        self._lock = threading.Lock()
        self._thawed = threading.Event()
        self.zombie: str | None = None  # the zombie's attempt
        self.late: list[str] = []  # what it wrote after waking

    def put_bytes(self, key: str, data: bytes, *, content_type: str | None = None) -> None:
        if "/chunks/" in key:
            with self._lock:
                if self.zombie is None and key.endswith(".pcm"):
                    self.zombie = _attempt(key)
                run = self._meanwhile if _attempt(key) == self.zombie else None
                self._meanwhile = None
            if run is not None:
                run()
                self._thawed.set()
            if _attempt(key) == self.zombie:
                assert self._thawed.wait(120), "the rescue never finished"
                self.late.append(key)
        super().put_bytes(key, data, content_type=content_type)


def _frames(wav: bytes) -> bytes:
    with wave.open(io.BytesIO(wav)) as reader:
        return reader.readframes(reader.getnframes())


def test_a_late_write_from_a_zombie_replaces_nothing(db_engine: Engine, tmp_path: Path) -> None:
    sessions = scoped_sessions(make_sessionmaker(db_engine))  # committed: two "hosts" really race
    catalog = Catalog.load()
    rescued: list[Message] = []

    def synthesize(batch: list[int], engine: ToneEngine) -> lifecycle.Step[int]:
        return lifecycle.synthesize(sessions=sessions, objects=objects, synthesizer=Synthesizer(lambda voice: engine),
                                    catalog=catalog, job_id=job_id, indices=batch, group_chars=200, window=2)

    def rescue() -> None:
        """Another host: the frozen task's batch (redelivered), the rest of the book, assembly."""
        queue = list(rescued)
        while queue:
            message = queue.pop(0)
            if message.task == TASK_SYNTHESIZE:
                queue.extend(synthesize(list(message.args[1]), ToneEngine()).messages)  # type: ignore[call-overload]
            elif message.task == TASK_ASSEMBLE:
                queue.extend(lifecycle.assemble(sessions=sessions, objects=objects, job_id=job_id, workers=1).messages)
            else:
                assert message.task in (TASK_WEBHOOK, TASK_ASSEMBLE_AHEAD), message

    objects = _FreezingStore(tmp_path / "objects", rescue)
    with sessions() as session:
        account = create_account(session=session, name=f"late-{uuid.uuid4().hex[:8]}").id
        job = lifecycle.submit(
            session=session, objects=objects, account_id=account, idempotency_key=None, allow_private_webhooks=False,
            spec=JobSpec(text=TEXT, speaker="joe", model_id="mistv3", lang="en", format="wav"),
        )[0]
        job_id = job.id
    planned = lifecycle.plan(sessions=sessions, objects=objects, job_id=job_id, batch_chars=400, window=2)
    rescued.extend(planned.messages)
    frozen = next(m for m in planned.messages if m.task == TASK_SYNTHESIZE).args[1]

    late = synthesize(list(frozen), _QuietTone())  # type: ignore[call-overload]

    assert late.value == 0  # it marked and billed nothing
    assert objects.late, "the zombie wrote nothing late: the test did not reach the race"
    with sessions() as session:
        done = get_job(session=session, job_id=job_id, account_id=None)
        keys = ChunkKeys(job_id, tuple(job_repo.chunk_audio_keys(session=session, job_id=job_id)))
        durations = job_repo.chunk_durations(session=session, job_id=job_id)
        params = JobParams.from_stored(done.params)
        usage = session.execute(text("SELECT count(*), count(DISTINCT chunk_index) FROM usage WHERE job_id = :j"),
                                {"j": job_id}).one()
    assert done.status == "succeeded" and done.result_key is not None
    assert tuple(usage) == (done.chunks_total, done.chunks_total)  # billed once per chunk
    assert objects.zombie not in {_attempt(str(key)) for key in keys.audio}  # no row names the zombie's audio
    assert all(objects.exists(key) for key in objects.late)  # and its bytes are really there, beside
    # The book assembled again from the rows now is the book assembled before the late write.
    again = assembly.render(objects, job_id, params, _workdir(tmp_path), workers=1, durations=durations, keys=keys)
    assert _frames(again.audio.read_bytes()) == _frames(objects.get_bytes(done.result_key))


def _workdir(tmp_path: Path) -> Path:
    path = tmp_path / "again"
    path.mkdir()
    return path
