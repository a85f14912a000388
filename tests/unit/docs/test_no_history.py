"""README.md and docs/*.md describe lector as it is, for the people who use and run it; they
are not a development log.

Issue 25 asked for documentation written for users and operators: the current figure of each
bench with its command and machine, no dated history of how a figure came to be. That history
is in git (``git log -p docs/benchmarks.md``), where it stays true; in a document it goes stale,
buries the figure a reader came for, and speaks of things a reader of a clone cannot see (the
sessions that worked on the code, the issue tracker, the machines lent to them). Once removed it
came back, so this test names the wording a development log uses and fails on it. It matches
phrases, not bare words, where a word has an ordinary meaning in these documents: "a WebSocket
session", "the database session", "session storage", "a helper function" pass.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])

# What each pattern catches, and the pattern (case-insensitive).
HISTORY: dict[str, str] = {
    "a session of work (this, the last, a second...)": (
        r"\b(this|that|last|next|previous|earlier|later|first|second|third|fourth|fifth|sixth|seventh|another)"
        r" sessions?\b"
    ),
    "other sessions on a shared machine": r"\b(beside|from|with|by) other sessions\b",
    "session notes": r"\bsession (notes?|logs?)\b",
    "an issue by its number": r"\bissues? #?\d+",
    "the issue tracker": r"\bthe issue\b|\bissue notes?\b",
    "a figure it replaced": r"\bwas \d",
    "work undone": r"\breverted\b",
    "a day or a round of the log": (
        r"\byesterday\b|\bthe day before\b|\b(this|last|next) week\b|\b(this|last|next|previous) round\b"
    ),
    # "a leased Redis database" (a test's own) and a Kubernetes Lease are ordinary.
    "a machine lent to a session": r"\blent\b|\b(one|two|three|four|\d+) leases\b|\blease (ran|ended|expired)\b",
    "who did the work": r"\bhelpers?\b(?!\s+(function|module|class|script|method|process|thread)s?\b)",
    "other engineers' work": r"\bother engineers\b",
    "a before/after story": r"\*\*(before|after)\*\*",
    "a draft of the work": r"\b(its|a|the) first draft\b",
    "a commit of the log": r"`?main`? at [0-9a-f]{7,40}\b",
}
PATTERNS = {why: re.compile(pattern, re.IGNORECASE) for why, pattern in HISTORY.items()}

# Phrases the documents once held, each of which the test must catch.
LOG = [
    "the same on Zen 4, a second session (3,953 tests)",
    "that file 327 s, was 434",
    "left no bytecode; reverted.",
    "The final state was not timed in this session",
    "Intel Xeon, third session",
    "## Intelligibility per voice (issue 24, item 5)",
    "(within issue 24's 0.05 / 0.10)",
    "see the issue notes",
    "on a 2-vCPU AVX2-only AMD EPYC the day before",
    "one lent H100 ... two leases",
    "three other engineers' benchmarks",
    "load average 14-20 from other sessions",
    "**Before**: `auto` on CPU was `int8`",
    "**After**: `auto` was float32",
    '"before" is `main` at 51fac60',
    "Eight helpers worked in parallel",
    "its first draft, which warmed eager with one call",
    "not measured this round",
]
# Ordinary uses of the same words, which it must let pass.
PROSE = [
    "every WebSocket session of the account",
    "the dead host's session, holding the job's assembly lock",
    "keys stay in the tab's session storage",
    "`store/db/session.py` gives every connection keepalives",
    "a helper function in tests/support",
    "the release of a lock",
    "each test takes a leased Redis database",
    "the leader holds a Kubernetes lease",
    "usage this month to date",
    "rounds alternating, best of three rounds",
    "an issue with the certificate",
]


def history(text: str) -> list[str]:
    """Each line that reads as a development log, with its number and what gave it away."""
    return [
        f"{n}: {why}: {line.strip()}"
        for n, line in enumerate(text.splitlines(), 1)
        for why, pattern in PATTERNS.items()
        if pattern.search(line)
    ]


@pytest.mark.parametrize("document", DOCUMENTS, ids=[d.relative_to(ROOT).as_posix() for d in DOCUMENTS])
def test_the_documents_hold_no_development_log(document: Path) -> None:
    assert history(document.read_text()) == [], (
        "docs are for users and operators: give the current figure, command and machine; history belongs to git"
    )


@pytest.mark.parametrize("phrase", LOG)
def test_a_development_log_phrase_is_caught(phrase: str) -> None:
    assert history(phrase) != []


@pytest.mark.parametrize("phrase", PROSE)
def test_ordinary_prose_passes(phrase: str) -> None:
    assert history(phrase) == []


def test_the_scan_sees_the_documents() -> None:
    names = {d.relative_to(ROOT).as_posix() for d in DOCUMENTS}
    assert {"README.md", "docs/benchmarks.md", "docs/voices.md"} <= names
