"""docs/api.md's jobs table names every field of the ``/v1/jobs`` body's model
(``facade.job_request.JobRequest``), by the name the HTTP body gives it (its alias): a field
added to the model without a row leaves the operators' page silently short of it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from facade.job_request import JobRequest

ROOT = Path(__file__).resolve().parents[3]
PAGE = (ROOT / "docs" / "api.md").read_text()
BODY_NAMES = sorted(field.alias or name for name, field in JobRequest.model_fields.items())


def _jobs_section() -> str:
    start = PAGE.index("## Book jobs: `/v1/jobs`")
    end = PAGE.index("\n## ", start + 1)
    return PAGE[start:end]


def _documented_fields() -> set[str]:
    """The backticked names in the first cell of each row of the section's ``| field |`` table."""
    lines = _jobs_section().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| field |"))
    names: set[str] = set()
    for line in lines[header + 2:]:
        if not line.startswith("|"):
            break
        names.update(re.findall(r"`([^`]+)`", line.split("|")[1]))
    return names


def test_the_table_is_found_and_read() -> None:
    assert {"text", "format", "webhookUrl"} <= _documented_fields()


@pytest.mark.parametrize("name", BODY_NAMES)
def test_every_job_request_field_has_a_row_in_the_jobs_table(name: str) -> None:
    assert name in _documented_fields(), f"docs/api.md's /v1/jobs table has no row for `{name}`"
