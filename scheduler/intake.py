"""Accepting a book job: store the text, write the job row, and say what to enqueue.

The caller commits and only then enqueues (``Dispatcher.send``): a task that starts before the
row is visible would find nothing, and a rollback must not leave a task behind.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import asdict, dataclass
from typing import Any, Final

from sqlalchemy.orm import Session

from scheduler.objects import source_key
from scheduler.webhooks import check_url
from speech.billing import billed_characters
from store.db import jobs as job_repo
from store.db.models import Job

FORMATS: Final[dict[str, str]] = {
    "mp3": "audio/mpeg",
    "wav": "audio/wav",
    "opus": "audio/ogg",
    "flac": "audio/flac",
    "m4b": "audio/mp4",
}


@dataclass(frozen=True, slots=True)
class JobSpec:
    """A validated job request; everything but the text goes into the row's ``params``."""

    text: str
    speaker: str
    model_id: str
    lang: str
    sampling_rate: int | None = None
    time_scale: float = 1.0
    speed_alpha: float | None = None
    format: str = "wav"
    webhook_url: str | None = None
    title: str | None = None
    author: str | None = None
    normalize: bool = True
    skip_front_matter: bool = False  # Project Gutenberg header/footer, title page, contents
    chapters: list[dict[str, Any]] | None = None  # given as [{"title", "start"}]; else detected
    pauses: dict[str, int] | None = None  # {"sentence", "paragraph", "chapter"}: milliseconds
    loudness_lufs: float | None = None  # integrated loudness of the book; None: assembly.TARGET_LUFS
    loudness_scope: str | None = None  # "chapter": each chapter at the target (scheduler.ahead); None: the book
    qa: bool = False  # the speech-recognition check of every chunk before assembly (scheduler.qa)

    def params(self) -> dict[str, Any]:
        params = asdict(self)
        params.pop("text")
        for name in ("skip_front_matter", "chapters", "pauses", "loudness_lufs", "loudness_scope", "qa"):
            if not params[name]:  # left out at their defaults: earlier jobs' request hashes still match
                params.pop(name)
        return params

    def request_hash(self) -> str:
        canonical = json.dumps({"text": self.text, **self.params()}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode()).hexdigest()


def submit_job(
    *,
    session: Session,
    objects: Any,
    account_id: uuid.UUID,
    spec: JobSpec,
    idempotency_key: str | None = None,
    allow_private_webhooks: bool = False,
) -> tuple[Job, bool]:
    """Create the job (or return the one this Idempotency-Key made); ``True`` when newly created."""
    if spec.webhook_url:
        check_url(spec.webhook_url, allow_private=allow_private_webhooks)
    request_hash = spec.request_hash()
    job_id = uuid.uuid4()
    # The text goes to the object store first: a row must never point at a missing object.
    key = source_key(job_id)
    objects.put_bytes(key, spec.text.encode("utf-8"), content_type="text/plain; charset=utf-8")
    try:
        job, created = job_repo.create_job(
            session=session,
            job_id=job_id,
            account_id=account_id,
            params=spec.params(),
            request_hash=request_hash,
            idempotency_key=idempotency_key,
            text_key=key,
            characters=billed_characters(spec.text),  # what reading it whole bills (speech.billing)
            webhook_url=spec.webhook_url,
        )
    except Exception:
        objects.delete(key)  # no row will point at it (a 409 conflict, the database gone)
        raise
    if not created:
        objects.delete(key)  # the Idempotency-Key named an earlier job: this upload is surplus
    return job, created
