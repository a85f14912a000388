"""Pronunciation lexicons of an account: storing a version, and the ones a request uses.

A ``PUT`` is read (``speech.text.pls``) before it is stored, so a stored lexicon always
parses; what is stored is the document as sent. Limits are the cloud services' kind, set by
the operator (``LexiconLimits`` from ``lector/settings.py``): lexicons per account, bytes per
lexicon, lexicons per request.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from sqlalchemy.orm import Session

from scheduler.errors import LexiconRefused
from speech.text.pls import PronunciationLexicon, parse_pls
from store.db import lexicons as repo
from store.db.models import Lexicon

NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True, slots=True)
class LexiconLimits:
    per_account: int = 100
    max_bytes: int = 100_000
    per_request: int = 5


@dataclass(frozen=True, slots=True)
class UsedLexicon:
    """A lexicon as a request uses it: the version is what a job records to be rerun as it was."""

    name: str
    version: int
    lexicon: PronunciationLexicon


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise LexiconRefused("a lexicon name is 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit")
    return name


def store_version(
    *, session: Session, account_id: uuid.UUID, name: str, content: str, limits: LexiconLimits,
    is_default: bool | None = None,
) -> Lexicon:
    check_name(name)
    if len(content.encode("utf-8", "surrogatepass")) > limits.max_bytes:
        raise LexiconRefused(f"a lexicon is at most {limits.max_bytes} bytes")
    parsed = parse_pls(content)  # LexiconError: a 400 naming the line
    latest = repo.latest_versions(session=session, account_id=account_id)
    if name not in {row.name for row in latest} and len(latest) >= limits.per_account:
        raise LexiconRefused(f"an account has at most {limits.per_account} lexicons")
    defaults = {row.name for row in latest if row.is_default} - {name}
    if is_default and len(defaults) >= limits.per_request:
        # requests that name none use every default: more than a request may name is refused here
        raise LexiconRefused(f"an account has at most {limits.per_request} default lexicons")
    return repo.add_version(
        session=session, account_id=account_id, name=name, content=content, lang=parsed.lang,
        lexemes=len(parsed.lexemes), is_default=is_default,
    )


def for_request(
    *, session: Session, account_id: uuid.UUID, names: Sequence[str] | None, limits: LexiconLimits,
    versions: dict[str, int] | None = None,
) -> list[UsedLexicon]:
    """The lexicons a request names (in its order: the first named wins a shared grapheme), or
    the account's defaults; ``versions`` pins a job's rerun to the versions it first used."""
    if names is not None:
        if len(names) > limits.per_request:
            raise LexiconRefused(f"a request names at most {limits.per_request} lexicons")
        for name in names:
            check_name(name)
        if len(set(names)) != len(names):
            raise LexiconRefused("a request names each lexicon once")
    rows = repo.for_request(session=session, account_id=account_id, names=names, versions=versions)
    return [UsedLexicon(row.name, row.version, parse_pls(row.content)) for row in rows]


def describe(row: Lexicon, *, with_content: bool = False) -> dict[str, object]:
    """A lexicon version as the API shows it."""
    body: dict[str, object] = {
        "name": row.name, "version": row.version, "lang": row.lang, "lexemes": row.lexemes,
        "sizeBytes": row.size_bytes, "default": row.is_default, "createdAt": row.created_at.isoformat(),
    }
    if with_content:
        body["content"] = row.content
    return body
