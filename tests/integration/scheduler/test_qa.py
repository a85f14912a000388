"""The QA check of a book through the real pipeline in one process: the lifecycle's own
decisions carried out in order (plan, synthesize, qa_check, qa_redo, assemble) on real
PostgreSQL, the local object store, the real ``joe`` voice and Whisper tiny.en.

The voice is wrapped in ``tests.support.defects.DefectEngine``: in chapter 2 a sentence is always
left out (the check must flag it, with its chapter, offset, text and what was heard); in chapter
3 one is left out only when the engine is given the whole chunk at once, so the check's second
rendering, sentence by sentence, repairs it; chapter 1 is clean and must not be flagged."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from scheduler import intake, lifecycle, qa
from scheduler.objects import qa_report_key
from scheduler.queue import TASK_ASSEMBLE, TASK_QA_CHECK, TASK_QA_REDO, TASK_SYNTHESIZE, TASK_WEBHOOK, Message
from speech.asr import WhisperRecognizer
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from store.db import accounts
from store.db import jobs as job_repo
from store.db.session import make_engine, make_sessionmaker, scoped_sessions
from store.objects.local import LocalObjectStore
from tests.support.defects import DefectEngine

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ALWAYS_DROPPED = "The inspector asked each guest where they had been at nine o'clock that night."
DROPPED_IN_BATCH = "His grandfather built the wooden boat by hand over three long winters."
BOOK = (
    "Chapter 1\n\n"
    "The ferry left the harbour an hour late because the fog would not lift. "
    "Margaret counted the jars on the pantry shelf and found that two were missing. "
    "Nobody in the village remembered when the old mill had last turned its wheel.\n\n"
    "Chapter 2\n\n"
    "The orchestra tuned their instruments while the audience found their seats. "
    f"{ALWAYS_DROPPED} "
    "We walked along the cliffs until the path became too narrow and too steep.\n\n"
    "Chapter 3\n\n"
    "The shop on the corner sells newspapers, stamps, sweets and cheap umbrellas. "
    f"{DROPPED_IN_BATCH} "
    "Rain hammered on the tin roof all night, and nobody in the cabin slept well."
)


@pytest.fixture
def env(pg_url: str, tmp_path: Path) -> Iterator[dict[str, Any]]:
    engine = make_engine(pg_url)
    sessions = scoped_sessions(make_sessionmaker(engine))
    with sessions() as session:
        account_id = accounts.create_account(session=session, name=f"qa-{uuid.uuid4().hex[:8]}").id
    yield {"sessions": sessions, "objects": LocalObjectStore(tmp_path / "objects"), "account": account_id, "engine": engine}
    engine.dispose()


def _run(env: dict[str, Any], messages: list[Message], synthesizer: Synthesizer, recognizer: Any) -> list[str]:
    """Carry out the lifecycle's messages in order, as the workers would; the tasks run, in order."""
    common = {"sessions": env["sessions"], "objects": env["objects"]}
    ran: list[str] = []
    while messages:
        message = messages.pop(0)
        ran.append(message.task)
        job_id = uuid.UUID(message.args[0])
        if message.task == TASK_SYNTHESIZE:
            step: Any = lifecycle.synthesize(
                **common, synthesizer=synthesizer, catalog=Catalog.load(), job_id=job_id,
                indices=message.args[1], group_chars=1500, window=8,
            )
        elif message.task == TASK_QA_CHECK:
            step = lifecycle.qa_check(
                **common, recognizer=recognizer, job_id=job_id, indices=message.args[1], attempt=message.args[2]
            )
        elif message.task == TASK_QA_REDO:
            step = lifecycle.qa_redo(
                **common, synthesizer=synthesizer, catalog=Catalog.load(), job_id=job_id, indices=message.args[1]
            )
        elif message.task == TASK_ASSEMBLE:
            step = lifecycle.assemble(**common, job_id=job_id, workers=1)
        else:
            assert message.task == TASK_WEBHOOK
            continue
        messages.extend(step.messages)
    return ran


def test_a_dropped_sentence_is_flagged_a_clean_chunk_is_not_and_a_second_rendering_repairs(
    env: dict[str, Any], vits_engine: Any, tmp_path: Path
) -> None:
    spec = intake.JobSpec(text=BOOK, speaker="joe", model_id="mistv3", lang="en", format="mp3", qa=True)
    with env["sessions"]() as session:
        job, _ = intake.submit_job(session=session, objects=env["objects"], account_id=env["account"], spec=spec)
        job_id = job.id
    defects = DefectEngine(
        vits_engine,
        drop=lambda s, calls=None: s == ALWAYS_DROPPED,
    )
    # Chapter 3's sentence is dropped only when the chunk comes in one call (the first rendering).
    original = defects.synthesize

    def synthesize(sentences: list[str], options: Any = None) -> Any:
        batch = len(sentences) > 1
        defects.drop = lambda s: s == ALWAYS_DROPPED or (batch and s == DROPPED_IN_BATCH)
        return original(sentences, options)

    defects.synthesize = synthesize  # type: ignore[method-assign]
    synthesizer = Synthesizer(lambda voice: defects)  # type: ignore[arg-type,return-value]
    recognizer = WhisperRecognizer(cache_root=tmp_path / "asr", cpu_threads=2)

    first = lifecycle.plan(sessions=env["sessions"], objects=env["objects"], job_id=job_id, batch_chars=4000, window=8)
    ran = _run(env, list(first.messages), synthesizer, recognizer)

    with env["sessions"]() as session:
        job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        chunks = job_repo.list_chunks(session=session, job_id=job_id)
        session.expunge(job)
    assert job.status == "succeeded", ran
    assert ran.count(TASK_ASSEMBLE) >= 1 and ran.index(TASK_QA_REDO) < ran.index(TASK_ASSEMBLE)
    report = qa.report(env["objects"], job)
    assert report is not None and report["status"] == "done"
    assert report["checked"] == len(chunks)  # each heading is a chunk of its own, then a body
    assert report["resynthesized"] >= 2  # chapters 2 and 3 failed their first look
    assert report["flagged"] == 1, report
    (passage,) = report["passages"]
    assert passage["chapter"] == "Chapter 2"
    assert ALWAYS_DROPPED in passage["text"]
    assert "inspector" not in passage["heard"].lower() and "orchestra" in passage["heard"].lower()
    assert passage["missingWords"] >= 6
    # Its offset is where its chunk starts in the book: after every earlier chunk's audio and
    # their pauses (a few seconds at most here); within its chapter, after the heading.
    before = sum(c.duration_s for c in chunks if c.index < passage["chunk"])
    assert chunks[passage["chunk"]].text.startswith("The orchestra")
    assert before < passage["offsetSeconds"] < before + 6.0
    assert 0.0 < passage["chapterOffsetSeconds"] < passage["offsetSeconds"] - chunks[0].duration_s
    # The second rendering went sentence by sentence, and was not billed.
    assert any(call == [DROPPED_IN_BATCH] for call in defects.calls)
    with env["engine"].connect() as conn:
        billed = conn.execute(text("SELECT count(*) FROM usage WHERE job_id = :j"), {"j": job_id}).scalar_one()
    assert billed == len(chunks)
    assert json.loads(env["objects"].get_bytes(qa_report_key(job_id)))["flagged"] == 1


def test_a_resumed_job_whose_chunks_are_done_is_checked_before_it_is_assembled(env: dict[str, Any]) -> None:
    """The reaper re-sends ``plan`` for a job that stopped moving; with every chunk done and the
    check's tasks lost, the check runs over every chunk (each judged one is skipped) instead of
    assembly."""
    from tests.support.fake_engine import ToneEngine

    spec = intake.JobSpec(text=BOOK, speaker="joe", model_id="mistv3", lang="en", qa=True)
    with env["sessions"]() as session:
        job, _ = intake.submit_job(session=session, objects=env["objects"], account_id=env["account"], spec=spec)
        job_id = job.id
    tone = ToneEngine()
    first = lifecycle.plan(sessions=env["sessions"], objects=env["objects"], job_id=job_id, batch_chars=4000, window=8)
    sent = []
    for message in first.messages:
        step = lifecycle.synthesize(
            sessions=env["sessions"], objects=env["objects"], synthesizer=Synthesizer(lambda voice: tone),
            catalog=Catalog.load(), job_id=job_id, indices=message.args[1], group_chars=1500, window=8,
        )
        sent.extend(step.messages)
    assert {m.task for m in sent} == {TASK_QA_CHECK}  # no assembly from synthesis
    resumed = lifecycle.plan(sessions=env["sessions"], objects=env["objects"], job_id=job_id, batch_chars=4000, window=8)
    with env["sessions"]() as session:
        total = job_repo.get_job(session=session, job_id=job_id, account_id=None).chunks_total
    assert resumed.messages == [Message(TASK_QA_CHECK, (str(job_id), list(range(total)), 1))]
