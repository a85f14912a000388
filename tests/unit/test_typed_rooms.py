"""mypy (strict, ``[tool.mypy]`` in pyproject.toml) is run on every folder of Python but ``tests/``.

Why a test: mypy checks only the files its configuration names, and a folder left out is not an
error, just silence. The benches were left out, and two of them passed a dict where
``scheduler.assembly.render`` and ``books.chapters.sections_for`` take typed options: both
failed only when someone ran them. A new room or script folder must be named, or this fails.
``tests/`` is typed where it helps but not strict: fixtures and fakes stand in for the rooms.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOT_STRICT = {"tests"}
SKIP_DIRS = {".venv", "var", "node_modules", "__pycache__", ".git", ".lector", ".mypy_cache"}


def _python_folders() -> set[str]:
    return {
        top.name for top in ROOT.iterdir()
        if top.is_dir() and top.name not in SKIP_DIRS and not top.name.startswith(".")
        and any(path.suffix == ".py" for path in top.rglob("*.py"))
    }


def _checked() -> set[str]:
    files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["files"]
    return {Path(name).parts[0] for name in files}


def test_mypy_is_strict() -> None:
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["strict"] is True


def test_every_folder_of_python_is_checked() -> None:
    assert {"speech", "scheduler", "bench", "migrations"} <= _python_folders()  # the scan sees the tree
    assert sorted(_python_folders() - NOT_STRICT - _checked()) == []


def test_no_room_is_loosened_by_an_override() -> None:
    """An override may turn off one check for a module (torch's untyped ``__call__``), never the
    strictness of a whole room: ``ignore_errors`` or ``disallow_untyped_defs = false`` would."""
    overrides = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"].get("overrides", [])
    for override in overrides:
        assert not override.get("ignore_errors", False), override["module"]
        assert override.get("disallow_untyped_defs", True), override["module"]
