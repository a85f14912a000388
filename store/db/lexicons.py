"""Pronunciation lexicons: versions of an account's named PLS documents. Nothing here commits.

The store keeps the document as sent and a few facts the API lists (language, lexeme count,
size); reading PLS is ``speech.text.pls``'s job, called by the scheduler before ``add_version``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from store.db.models import Lexicon
from store.errors import LexiconNotFound


def latest_versions(*, session: Session, account_id: uuid.UUID) -> list[Lexicon]:
    """The newest version of each of the account's lexicons, by name."""
    newest = (
        select(Lexicon.name, func.max(Lexicon.version).label("version"))
        .where(Lexicon.account_id == account_id)
        .group_by(Lexicon.name)
        .subquery()
    )
    rows = session.scalars(
        select(Lexicon)
        .join(newest, (Lexicon.name == newest.c.name) & (Lexicon.version == newest.c.version))
        .where(Lexicon.account_id == account_id)
        .order_by(Lexicon.name)
    )
    return list(rows)


def get_version(*, session: Session, account_id: uuid.UUID, name: str, version: int | None = None) -> Lexicon:
    """One version of a lexicon (the newest when ``version`` is None); ``LexiconNotFound``."""
    query = select(Lexicon).where(Lexicon.account_id == account_id, Lexicon.name == name)
    query = query.where(Lexicon.version == version) if version is not None else query.order_by(Lexicon.version.desc())
    row = session.scalars(query.limit(1)).first()
    if row is None:
        raise LexiconNotFound(name)
    return row


def add_version(
    *, session: Session, account_id: uuid.UUID, name: str, content: str, lang: str, lexemes: int,
    is_default: bool | None = None,
) -> Lexicon:
    """Store ``content`` as the lexicon's next version. ``is_default=None`` keeps the previous
    version's flag. Versions are numbered under a lock on the account's row of lexicons, so two
    concurrent ``PUT``s get two numbers (the unique constraint is the backstop)."""
    session.execute(select(func.pg_advisory_xact_lock(func.hashtext(f"lexicon:{account_id}:{name}"))))
    previous = session.scalars(
        select(Lexicon).where(Lexicon.account_id == account_id, Lexicon.name == name)
        .order_by(Lexicon.version.desc()).limit(1)
    ).first()
    row = Lexicon(
        account_id=account_id, name=name, version=(previous.version + 1) if previous else 1, lang=lang,
        lexemes=lexemes, size_bytes=len(content.encode()), content=content,
        is_default=is_default if is_default is not None else bool(previous and previous.is_default),
    )
    session.add(row)
    session.flush()
    return row


def delete_lexicon(*, session: Session, account_id: uuid.UUID, name: str) -> int:
    """Remove every version of the lexicon; ``LexiconNotFound`` when it has none."""
    result = session.execute(delete(Lexicon).where(Lexicon.account_id == account_id, Lexicon.name == name))
    count = int(getattr(result, "rowcount", 0) or 0)
    if count == 0:
        raise LexiconNotFound(name)
    return count


def for_request(
    *, session: Session, account_id: uuid.UUID, names: Sequence[str] | None, versions: dict[str, int] | None = None
) -> list[Lexicon]:
    """The lexicons a request uses, in the order named: ``names``, or the account's defaults
    (by name) when it names none. ``versions`` pins names to versions (a job's rerun)."""
    if names is None:
        return [row for row in latest_versions(session=session, account_id=account_id) if row.is_default]
    pinned = versions or {}
    return [get_version(session=session, account_id=account_id, name=name, version=pinned.get(name)) for name in names]
