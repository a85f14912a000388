"""The QA check's second rendering of an SSML job's chunk keeps its words' offsets into the
document: the real pipeline in one process (plan, synthesize, qa_check, qa_redo, assemble) on
real PostgreSQL, the local object store, the real ``joe`` voice and Whisper tiny.en, with a
sentence the engine always leaves out (``tests.support.defects.DefectEngine``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scheduler import intake, lifecycle, qa
from scheduler.objects import timestamps_key
from scheduler.queue import TASK_QA_REDO
from speech.asr import WhisperRecognizer
from speech.synthesizer import Synthesizer
from store.db import jobs as job_repo
from tests.integration.scheduler.test_qa import ALWAYS_DROPPED, _run, env  # noqa: F401  (env: the fixture)
from tests.support.defects import DefectEngine

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DOCUMENT = (
    "<speak><p>The ferry left the harbour an hour late because the fog would not lift.</p>"
    f"<p>The orchestra tuned their instruments &amp; waited. {ALWAYS_DROPPED} "
    'We walked along the <sub alias="cliffs">cliff path</sub> until it became too steep.</p></speak>'
)


def test_a_rendered_again_ssml_chunk_keeps_its_offsets_into_the_document(
    env: dict[str, Any], vits_engine: Any, tmp_path: Path  # noqa: F811
) -> None:
    spec = intake.JobSpec(text=DOCUMENT, ssml=True, speaker="joe", model_id="mistv3", lang="en", format="wav", qa=True)
    with env["sessions"]() as session:
        job, _ = intake.submit_job(session=session, objects=env["objects"], account_id=env["account"], spec=spec)
        job_id = job.id
    defects = DefectEngine(vits_engine, drop=lambda s: s == ALWAYS_DROPPED)
    synthesizer = Synthesizer(lambda voice: defects)  # type: ignore[arg-type,return-value]
    recognizer = WhisperRecognizer(cache_root=tmp_path / "asr", cpu_threads=2)
    first = lifecycle.plan(sessions=env["sessions"], objects=env["objects"], job_id=job_id, batch_chars=4000, window=8)
    ran = _run(env, list(first.messages), synthesizer, recognizer)

    with env["sessions"]() as session:
        job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        session.expunge(job)
    assert job.status == "succeeded" and TASK_QA_REDO in ran, ran
    report = qa.report(env["objects"], job)
    assert report is not None and report["resynthesized"] >= 1 and report["flagged"] == 1, report
    words = json.loads(env["objects"].get_bytes(timestamps_key(job_id)))["words"]
    redone = [w for w in words if w["word"] in ("orchestra", "and", "cliffs", "steep")]
    assert len(redone) == 4 and all("textOffset" in w for w in redone), words
    read = {w["word"]: DOCUMENT[w["textOffset"] : w["textOffset"] + w["textLength"]] for w in redone}
    assert read == {"orchestra": "orchestra", "and": "&amp;", "cliffs": "cliff path", "steep": "steep"}
