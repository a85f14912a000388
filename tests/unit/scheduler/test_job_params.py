"""scheduler/job_params.py: a job's options written and read back through one typed object."""

from __future__ import annotations

import ast
import json
from dataclasses import fields
from pathlib import Path

import pytest

from scheduler.intake import JobSpec
from scheduler.job_params import JobParams

ROOT = Path(__file__).resolve().parents[3]
ROOMS = ("store", "books", "scheduler", "workers", "facade", "lector")  # speech never sees a job row (it imports no store)
#: The store's own modules hold the column and the keys it keeps beside the options.
STORE_SIDE = ("store/db/models.py", "store/db/jobs.py")

EVERYTHING = JobParams(
    speaker="joe", model_id="mistv3", lang="en", sampling_rate=44100, time_scale=1.2, speed_alpha=0.9,
    format="m4b", webhook_url="https://example.com/h", title="T", author="A", normalize=False,
    skip_front_matter=True, chapters=[{"title": "One", "start": 0}], pauses={"sentence": 300},
    loudness_lufs=-16.0, loudness_scope="chapter", lexicons=[{"name": "names", "version": 2}], delivery="acx",
    cast={"narrator": "joe", "characters": {"Elizabeth": {"voice": "nora", "aliases": []}}, "dialogue": "ivy"},
    cover={"type": "image/png", "sha256": "0" * 64}, qa=True, ssml=True,
)


def test_every_option_survives_the_row() -> None:
    """Through JSON, as PostgreSQL's jsonb hands it back."""
    minimal = JobParams(speaker="joe", model_id="mistv3", lang="en")
    for params in (EVERYTHING, minimal):
        assert JobParams.from_stored(json.loads(json.dumps(params.to_stored()))) == params


def test_options_added_later_are_left_out_at_their_defaults() -> None:
    """A row written before an option existed, and a repeat of its request today, hash the same."""
    stored = JobParams(speaker="joe", model_id="mistv3", lang="en").to_stored()
    later = {"skip_front_matter", "chapters", "pauses", "loudness_lufs", "loudness_scope", "lexicons", "delivery", "cast", "cover", "qa", "ssml"}
    assert not later & stored.keys()
    assert {f.name for f in fields(JobParams)} - later <= stored.keys()
    assert later <= EVERYTHING.to_stored().keys()


def test_the_request_hash_covers_the_options_and_the_text() -> None:
    spec = JobSpec(text="A book.", speaker="joe", model_id="mistv3", lang="en")
    assert spec.request_hash() == JobSpec(text="A book.", speaker="joe", model_id="mistv3", lang="en").request_hash()
    assert spec.request_hash() != JobSpec(text="A book!", speaker="joe", model_id="mistv3", lang="en").request_hash()
    assert spec.request_hash() != JobSpec(
        text="A book.", speaker="joe", model_id="mistv3", lang="en", format="mp3"
    ).request_hash()
    assert "text" not in spec.to_stored()  # the text lives in the object store


def test_the_stores_own_keys_are_not_options_and_a_row_without_a_voice_is_refused() -> None:
    stored = {**EVERYTHING.to_stored(), "batches_dispatched": 3, "expired": True, "expired_at": "2026-01-01"}
    assert JobParams.from_stored(stored) == EVERYTHING
    with pytest.raises(ValueError, match="speaker"):
        JobParams.from_stored({"model_id": "mistv3", "lang": "en"})
    assert EVERYTHING.chapter_scope and not JobParams(speaker="j", model_id="m", lang="en").chapter_scope


def test_a_stored_object_is_not_shared_with_the_caller() -> None:
    stored = EVERYTHING.to_stored()
    stored["chapters"].append({"title": "Two", "start": 5})
    assert EVERYTHING.chapters == [{"title": "One", "start": 0}]


def _job_params_reads(tree: ast.Module) -> list[int]:
    """Lines that touch a row's ``params`` other than by handing it to ``JobParams.from_stored``."""
    through: set[int] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "from_stored"
                and node.args):
            through.add(id(node.args[0]))
    return sorted(
        node.lineno for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "params" and isinstance(node.ctx, ast.Load)
        and id(node) not in through
    )


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (path.relative_to(ROOT).as_posix(), ast.parse(path.read_text()))
        for room in ROOMS for path in sorted((ROOT / room).rglob("*.py"))
    ]


def test_every_read_of_a_jobs_options_goes_through_job_params() -> None:
    offences = {
        name: lines for name, tree in _modules() if name not in STORE_SIDE and (lines := _job_params_reads(tree))
    }
    assert offences == {}, "read a job's options with JobParams.from_stored(job.params)"


def test_the_walk_finds_a_read_past_job_params() -> None:
    sample = ast.parse('p = JobParams.from_stored(job.params)\nfmt = job.params.get("format")\nx = job.params["lang"]')
    assert _job_params_reads(sample) == [2, 3]
