"""Every file the documents name in backticks is in the tree, and a ``module.name`` they name is in
its module.

``docs/architecture.md`` is kept true by being read against the code; a renamed or deleted module
leaves a sentence pointing at nothing, which a reader only finds by looking. Markdown links are
checked in ``test_links.py``; this checks the paths written as code (``facade/metered.py``,
``facade/job_request.JobRequest``, ``tests/support/farm_books.render``).
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
TOP = ("speech", "store", "books", "scheduler", "workers", "facade", "lector", "bench", "migrations", "tests",
       "infra", "docs", "samples")
CODE = re.compile(r"`([^`\s]+)`")
PATTERN = re.compile(r"[*{}<>]|\.\.\.")  # a glob, a placeholder or an elision, not one file


def named_paths(text: str) -> list[str]:
    return [
        token.split("::")[0].rstrip(".,:;")
        for token in CODE.findall(text)
        if token.split("/")[0] in TOP and "/" in token and not PATTERN.search(token)
    ]


@cache
def _defined(module: Path) -> frozenset[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name | ast.alias):
            names.add(node.id if isinstance(node, ast.Name) else (node.asname or node.name))
    return frozenset(names)


def resolves(token: str) -> bool:
    """A path in the tree, or ``folder/module.name`` (the ``.py`` left out) naming something the
    module defines."""
    if (ROOT / token.rstrip("/")).exists():
        return True
    module, _, name = token.rpartition(".")
    return bool(module) and (ROOT / f"{module}.py").is_file() and name in _defined(ROOT / f"{module}.py")


@pytest.mark.parametrize("document", DOCUMENTS, ids=[d.relative_to(ROOT).as_posix() for d in DOCUMENTS])
def test_every_named_path_is_in_the_tree(document: Path) -> None:
    assert [p for p in named_paths(document.read_text()) if not resolves(p)] == []


def test_the_check_tells_a_gone_file_from_a_present_one() -> None:
    text = "`facade/metered.py`, `facade/job_request.JobRequest`, `speech/audio/stitch.py`, `facade/job_request.Nope`, `books/*.py`"
    assert [p for p in named_paths(text) if not resolves(p)] == ["speech/audio/stitch.py", "facade/job_request.Nope"]
