"""Every job status goes through ``store.status``: no room spells a status as a string, and one
function writes it (``store.db.jobs.set_job_status``, guarded by the transitions table).

An AST walk over the rooms, so a new module that compares ``job.status == "runing"`` or writes
``.values(status=...)`` past the table fails here instead of at a customer's job.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from store.status import ChunkStatus, JobStatus

ROOT = Path(__file__).resolve().parents[3]
ROOMS = ("speech", "store", "books", "scheduler", "workers", "facade", "lector")
STATUS_STRINGS = {s.value for s in JobStatus} | {s.value for s in ChunkStatus}
THE_TABLE = "store/status.py"
THE_WRITER = "store/db/jobs.py"


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for room in ROOMS:
        for path in sorted((ROOT / room).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(), filename=str(path))


def _names_a_status(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "status"
    if isinstance(node, ast.Name):
        return "status" in node.id.lower()
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "status"
    if isinstance(node, ast.Call):  # a helper that reads it: _status(sessions, job_id)
        return _names_a_status(node.func)
    return False


def _status_literals(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and n.value in STATUS_STRINGS]


def _spelt_statuses(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_names_a_status(o) for o in operands):
                for literal in _status_literals(node):
                    yield node.lineno, literal
        elif isinstance(node, ast.keyword) and node.arg in {"status", "expected", "statuses"}:
            for literal in _status_literals(node.value):
                yield node.value.lineno, literal


def _status_writes(tree: ast.Module) -> Iterator[int]:
    """``.values(status=...)`` (a SQL UPDATE or INSERT) and ``<job>.status = ...`` (the ORM)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "values":
            if any(k.arg == "status" for k in node.keywords):
                yield node.lineno
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for part in ast.walk(target):
                    if (isinstance(part, ast.Attribute) and part.attr == "status"
                            and isinstance(part.value, ast.Name) and "job" in part.value.id.lower()):
                        yield node.lineno


MODULES = list(_modules())


def test_the_walk_sees_the_rooms() -> None:
    names = {name for name, _ in MODULES}
    assert {THE_TABLE, THE_WRITER, "scheduler/assembly.py", "facade/routes/jobs.py"} <= names


@pytest.mark.parametrize(("name", "tree"), MODULES, ids=[name for name, _ in MODULES])
def test_no_room_spells_a_status_as_a_string(name: str, tree: ast.Module) -> None:
    if name == THE_TABLE:
        return
    assert list(_spelt_statuses(tree)) == [], f"{name}: use store.status.JobStatus / ChunkStatus"


@pytest.mark.parametrize(("name", "tree"), MODULES, ids=[name for name, _ in MODULES])
def test_only_the_one_writer_writes_a_status(name: str, tree: ast.Module) -> None:
    if name == THE_WRITER:
        return
    assert list(_status_writes(tree)) == [], f"{name}: move a job with store.db.jobs.set_job_status"


def test_the_checks_would_catch_what_they_look_for() -> None:
    """The walk itself must be able to fail: each kind of offence is found in a sample."""
    spelt = ast.parse('if job.status != "running" or _status(s, j) == "canceled": set(status="failed")')
    assert [literal for _, literal in _spelt_statuses(spelt)] == ["running", "canceled", "failed"]
    writes = ast.parse('session.execute(update(Job).values(status=x))\njob.status = JobStatus.FAILED')
    assert sorted(_status_writes(writes)) == [1, 2]
