"""scheduler/lexicons.py and store/db/lexicons.py against a real PostgreSQL (each test rolled back)."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy.orm import Session

from scheduler.errors import LexiconRefused
from scheduler.lexicons import LexiconLimits, for_request, store_version
from speech.errors import LexiconError
from store.db import create_account
from store.db import lexicons as repo
from store.errors import LexiconNotFound

DOC = ('<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="{lang}">'
       "<lexeme><grapheme>{g}</grapheme><alias>{a}</alias></lexeme></lexicon>")


def _account(session: Session) -> uuid.UUID:
    return create_account(session=session, name=f"lex-{uuid.uuid4().hex[:8]}").id


def _doc(g: str = "NYC", a: str = "New York", lang: str = "en-US") -> str:
    return DOC.format(g=g, a=a, lang=lang)


def test_versions_count_up_and_keep_the_default_mark(db_session: Session) -> None:
    account = _account(db_session)
    limits = LexiconLimits()
    first = store_version(session=db_session, account_id=account, name="places", content=_doc(), limits=limits, is_default=True)
    second = store_version(session=db_session, account_id=account, name="places", content=_doc(a="Gotham"), limits=limits)
    assert (first.version, second.version, second.is_default, second.lang, second.lexemes) == (1, 2, True, "en", 1)
    assert [r.version for r in repo.latest_versions(session=db_session, account_id=account)] == [2]
    used = for_request(session=db_session, account_id=account, names=None, limits=limits)
    assert [(u.name, u.version, u.lexicon.lexemes[0].alias) for u in used] == [("places", 2, "Gotham")]
    pinned = for_request(session=db_session, account_id=account, names=["places"], limits=limits, versions={"places": 1})
    assert pinned[0].lexicon.lexemes[0].alias == "New York"
    third = store_version(session=db_session, account_id=account, name="places", content=_doc(), limits=limits, is_default=False)
    assert for_request(session=db_session, account_id=account, names=None, limits=limits) == []
    assert third.version == 3


def test_limits_names_and_malformed_documents(db_session: Session) -> None:
    account = _account(db_session)
    limits = LexiconLimits(per_account=2, max_bytes=400, per_request=1)
    store_version(session=db_session, account_id=account, name="a", content=_doc(), limits=limits)
    store_version(session=db_session, account_id=account, name="b", content=_doc(), limits=limits)
    store_version(session=db_session, account_id=account, name="b", content=_doc(a="again"), limits=limits)  # a new version is fine
    with pytest.raises(LexiconRefused, match="at most 2 lexicons"):
        store_version(session=db_session, account_id=account, name="c", content=_doc(), limits=limits)
    with pytest.raises(LexiconRefused, match="at most 400 bytes"):
        store_version(session=db_session, account_id=account, name="a", content=_doc(a="x" * 400), limits=limits)
    with pytest.raises(LexiconRefused, match="a lexicon name is"):
        store_version(session=db_session, account_id=account, name="../etc", content=_doc(), limits=limits)
    with pytest.raises(LexiconError, match="lexicon line 1"):
        store_version(session=db_session, account_id=account, name="a", content=_doc(g=""), limits=limits)
    with pytest.raises(LexiconRefused, match="at most 1 lexicons"):
        for_request(session=db_session, account_id=account, names=["a", "b"], limits=limits)
    store_version(session=db_session, account_id=account, name="a", content=_doc(), limits=limits, is_default=True)
    with pytest.raises(LexiconRefused, match="at most 1 default lexicons"):
        store_version(session=db_session, account_id=account, name="b", content=_doc(), limits=limits, is_default=True)


def test_delete_removes_every_version_and_accounts_are_apart(db_session: Session) -> None:
    mine, theirs = _account(db_session), _account(db_session)
    limits = LexiconLimits()
    for _ in range(2):
        store_version(session=db_session, account_id=mine, name="x", content=_doc(), limits=limits)
    with pytest.raises(LexiconNotFound):
        repo.get_version(session=db_session, account_id=theirs, name="x")
    assert repo.delete_lexicon(session=db_session, account_id=mine, name="x") == 2
    with pytest.raises(LexiconNotFound):
        for_request(session=db_session, account_id=mine, names=["x"], limits=limits)
    with pytest.raises(LexiconNotFound):
        repo.delete_lexicon(session=db_session, account_id=mine, name="x")
