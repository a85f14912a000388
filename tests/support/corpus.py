"""The test corpus, shipped in the repository (``tests/data/README.md`` says what it is)."""

from __future__ import annotations

from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "data" / "pride_and_prejudice.txt"
