"""Names that needed a glossary stay gone.

``docs/architecture.md`` once had a "Names" section explaining that ``ahead`` meant assembly
done while synthesis runs, that the facade's "plan" was not the scheduler's planning, that
``units`` held ``StreamStep`` and ``wire`` an HTTP format. The modules were renamed and the
section dropped; this keeps a newcomer from meeting the old names again, in a file or in an
identifier (the facade's resolved request was still called ``plan`` in six modules).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Old module -> where it went.
RENAMED = {
    "scheduler/ahead.py": "scheduler/progressive_assembly.py",
    "facade/plans.py": "facade/request_resolution.py",
    "speech/units.py": "speech/stream_steps.py",
    "speech/wire.py": "facade/invocations_format.py",
}

#: Identifiers a room must not use again: (room, name) -> what to say instead.
RETIRED = {
    ("facade", "plan"): "resolved (a ResolvedRequest; planning is the scheduler's word for a job)",
    ("facade/routes/ws.py", "session"): "state (a SocketState; a session is the database's)",
}


@pytest.mark.parametrize("old", sorted(RENAMED))
def test_a_renamed_module_is_not_back(old: str) -> None:
    assert not (ROOT / old).exists(), f"{old} is {RENAMED[old]}"
    assert (ROOT / RENAMED[old]).exists()


def _identifiers(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            names.add(node.arg)
    return names


@pytest.mark.parametrize(("where", "name"), sorted(RETIRED))
def test_a_retired_identifier_is_not_used(where: str, name: str) -> None:
    path = ROOT / where
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    assert files
    using = [f.relative_to(ROOT).as_posix() for f in files if name in _identifiers(ast.parse(f.read_text()))]
    assert using == [], f"{name}: say {RETIRED[(where, name)]}"


def test_the_architecture_needs_no_glossary() -> None:
    headings = [line for line in (ROOT / "docs/architecture.md").read_text().splitlines() if line.startswith("#")]
    assert not [h for h in headings if h.lstrip("#").strip().lower() in {"names", "glossary"}]
