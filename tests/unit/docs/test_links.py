"""No document or comment points outside the repository.

A reader of a clone has the repository and nothing else: a link to a sibling folder of the
checkout, to the machine the code was written on, or to a file the repository does not contain
(a "seed" file of the project's history) is a dead end. The vendor's interface is named "the vendor API contract" and
summarised in ``docs/vendor-api.md``; Markdown links resolve to files that exist in the tree.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SKIP_DIRS = {"var", "node_modules", "__pycache__"}
TEXT_SUFFIXES = {".md", ".py", ".sh", ".yaml", ".yml", ".toml", ".js", ".html", ".css", ".ini", ".cfg", ".txt"}
TEXT_NAMES = {"Makefile", "Dockerfile"}
# Written in pieces so that this file does not match itself.
OUTSIDE = re.compile("|".join([re.escape(".." + "/shared"), re.escape("/work" + "/shared"), re.escape("shared" + "/reference"),
                               re.escape("shared" + "/seed"), r"\bthe " + r"seed\b", r"\bseed" + r"'s\b"]),
                     re.IGNORECASE)
MD_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|<img [^>]*src=\"([^\"]+)\"|<(https?://[^>]+)>")
LOCAL_HOSTS = ("http://127.0.0.1", "http://localhost")


def _files() -> list[Path]:
    found = []
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts
        if any(p.startswith(".") or p in SKIP_DIRS or p.endswith(".egg-info") for p in parts):
            continue
        if path.is_file() and (path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES
                               or path.name.startswith("Dockerfile")):
            found.append(path)
    return sorted(found)


FILES = _files()
MARKDOWN = [p for p in FILES if p.suffix == ".md"]


def test_the_scan_sees_the_tree() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in FILES}
    assert {"README.md", "docs/architecture.md", "lector/settings.py", "docker-compose.yml"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_nothing_points_outside_the_repository(path: Path) -> None:
    hits = [f"{n}: {line.strip()}" for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
            if OUTSIDE.search(line)]
    assert hits == [], "name the vendor API contract (docs/vendor-api.md), not a file outside the repository"


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_markdown_links_resolve_inside_the_repository(path: Path) -> None:
    for match in MD_LINK.finditer(path.read_text()):
        target = next(g for g in match.groups() if g)
        if target.startswith("#") or target.startswith(LOCAL_HOSTS):
            continue  # an anchor on the page, or the local lector `make run` starts
        assert "://" not in target and not target.startswith("mailto:"), f"{path.name}: {target} leaves the repository"
        resolved = (path.parent / target.split("#", 1)[0]).resolve()
        assert resolved.is_relative_to(ROOT), f"{path.name}: {target} resolves outside the repository"
        assert resolved.exists(), f"{path.name}: {target} does not exist"
