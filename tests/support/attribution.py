"""Attribution measured on the hand-annotated chapters of Pride and Prejudice.

``tests/data/attribution_pride_and_prejudice.json`` names the speaker of every paragraph with
quoted speech in the chapters it lists, in reading order. Run ``python -m tests.support.attribution``
for the figures (and the misses); the unit test holds them above the target.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from books.attribution import Characters, attribute

DATA = Path(__file__).resolve().parents[1] / "data"
_CHAPTER = re.compile(r"^\s*Chapter (\d+)\s*$", re.MULTILINE)


@dataclass
class Score:
    correct: int = 0
    attributed: int = 0  # quotes given a speaker at all (the rest get the default dialogue voice)
    quotes: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.correct / self.attributed if self.attributed else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.quotes if self.quotes else 0.0


def chapter_paragraphs(number: int) -> list[str]:
    """A chapter of the book's body (the contents list at the front names each chapter first)."""
    text = (DATA / "pride_and_prejudice.txt").read_text(encoding="utf-8")
    heads = [m.end() for m in _CHAPTER.finditer(text)]
    body = heads[len(heads) // 2 :]
    chapter = text[body[number - 1] : body[number] if number < len(body) else len(text)]
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", chapter) if p.strip()]


def measure(part: str = "all") -> Score:
    """``part``: ``tuned`` (chapters 1-3, which the rules were written against, and the ``dev``
    chapters annotated later to tune them on), ``held_out`` (chapter 56, annotated after the
    first rules and never tuned on), or ``all``."""
    annotated = json.loads((DATA / "attribution_pride_and_prejudice.json").read_text(encoding="utf-8"))
    dev = [annotated, *annotated.get("dev", [])]
    sets = {"tuned": dev, "held_out": [annotated["held_out"]], "all": [*dev, annotated["held_out"]]}[part]
    score = Score()
    for annotation in sets:
        _score(annotation, score)
    return score


def _score(annotated: dict[str, Any], score: Score) -> None:
    characters = Characters.of(annotated["cast"])
    for number, gold in annotated["chapters"].items():
        paragraphs = chapter_paragraphs(int(number))
        found = [
            (paragraph, next(s.speaker for s in stretches if s.speaker is not None))
            for paragraph, stretches in zip(paragraphs, attribute(paragraphs, characters), strict=True)
            if any(s.speaker is not None for s in stretches)
        ]
        if len(found) != len(gold):
            raise ValueError(f"chapter {number}: {len(found)} quoted paragraphs, {len(gold)} annotated")
        for (paragraph, speaker), truth in zip(found, gold, strict=True):
            score.quotes += 1
            score.attributed += bool(speaker)
            score.correct += speaker == truth
            if speaker != truth:
                score.misses.append(f"ch. {number}: {speaker or '(none)'} for {truth}: {paragraph[:70]}")


if __name__ == "__main__":
    for part in ("tuned", "held_out", "all"):
        result = measure(part)
        for miss in result.misses if part != "all" else []:
            print("miss:", miss)
        print(f"{part}: quotes {result.quotes} attributed {result.attributed} correct {result.correct} "
              f"precision {result.precision:.3f} recall {result.recall:.3f}")
