"""Book jobs for the end-to-end tests that run real workers: corpus excerpts, the stack's S3
store as the test sees it, and a job submitted the way the API would."""

from __future__ import annotations

import re
import uuid
from typing import Any

from scheduler import intake
from store.db import accounts
from store.db import jobs as job_repo
from store.db.session import session_scope
from store.objects import S3ObjectStore
from tests.support.corpus import CORPUS


def excerpt(chars: int, start_at: str = "It is a truth universally acknowledged") -> str:
    """About ``chars`` characters of the novel from ``start_at``, cut after a full stop."""
    book = CORPUS.read_text(encoding="utf-8")
    start = book.index(start_at)
    piece = book[start : start + chars]
    return piece[: piece.rfind(".") + 1]


def s3_store(env: dict[str, str]) -> S3ObjectStore:
    return S3ObjectStore(
        bucket=env["LECTOR_S3_BUCKET"], endpoint_url=env["LECTOR_S3_ENDPOINT_URL"], region=env["LECTOR_S3_REGION"],
        access_key_id=env["LECTOR_S3_ACCESS_KEY_ID"], secret_access_key=env["LECTOR_S3_SECRET_ACCESS_KEY"],
    )


def submit(
    sessions: Any, objects: S3ObjectStore, text: str, *, fmt: str, account: str, owner: uuid.UUID | None = None,
) -> uuid.UUID:
    """A job of ``text`` for ``owner``, or a new account named ``account-<random>``, spoken by joe."""
    with session_scope(sessions) as session:
        if owner is None:
            owner = accounts.create_account(session=session, name=f"{account}-{uuid.uuid4().hex[:6]}").id
        job, _ = intake.submit_job(
            session=session, objects=objects, account_id=owner,
            spec=intake.JobSpec(text=text, speaker="joe", model_id="mistv3", lang="en", format=fmt),
        )
        return job.id


def job_row(sessions: Any, job_id: uuid.UUID) -> Any:
    """The job's row as it is now, detached (readable after its session closed)."""
    with session_scope(sessions) as session:
        job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        session.expunge(job)
        return job


def revised_book(
    chapters: int = 20, per_chapter: int = 2, edited_chapter: int = 7, paragraph_chars: tuple[int, int] = (120, 300)
) -> tuple[str, str, list[str]]:
    """A book of ``chapters`` chapters of the novel's paragraphs (of ``paragraph_chars`` characters:
    short ones, so that rendering twenty chapters stays a small share of ``make test``), and the
    same book with three sentences of chapter ``edited_chapter`` corrected (a word added near each
    one's end). Returns ``(original, edited, the edited sentences as they now read)``."""
    from speech.text.segment import split_sentences

    book = CORPUS.read_text(encoding="utf-8")
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", book[book.index("It is a truth universally acknowledged") :])]
    shortest, longest = paragraph_chars
    usable = iter(p for p in paragraphs if shortest <= len(p) <= longest and not p.upper().startswith("CHAPTER"))
    layout = [[next(usable) for _ in range(per_chapter)] for _ in range(chapters)]
    edited_layout = [list(c) for c in layout]
    changed: list[str] = []
    for n, paragraph in enumerate(edited_layout[edited_chapter - 1]):
        spans = split_sentences(paragraph, "en")
        pieces, last = [], 0
        for span in spans:
            sentence = paragraph[span.start : span.end]
            if len(changed) < 3 and re.search(r"\w", sentence):
                sentence = re.sub(r"(\w+)(\W*)$", r"\1 again\2", sentence.rstrip(), count=1) + sentence[len(sentence.rstrip()) :]
                changed.append(sentence.strip())
            pieces.append(paragraph[last : span.start] + sentence)
            last = span.end
        edited_layout[edited_chapter - 1][n] = "".join(pieces) + paragraph[last:]
    assert len(changed) == 3, "the edited chapter has three sentences"

    def text(chapters_: list[list[str]]) -> str:
        return "\n\n".join(f"Chapter {i}\n\n" + "\n\n".join(ps) for i, ps in enumerate(chapters_, 1)) + "\n"

    return text(layout), text(edited_layout), changed
