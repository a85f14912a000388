"""Accepting a book job: store the text, write the job row, and say what to enqueue.

The caller commits and only then enqueues (``Dispatcher.send``): a task that starts before the
row is visible would find nothing, and a rollback must not leave a task behind.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, replace
from typing import Final, TypedDict

from sqlalchemy.orm import Session

from books.job_ssml import spoken_text
from scheduler.errors import TooManyJobs
from scheduler.job_params import JobParams
from scheduler.objects import cover_key, source_key
from scheduler.webhooks import check_url
from speech.audio.m4b import cover_type
from speech.billing import billed_characters
from store.db import jobs as job_repo
from store.db.models import Job
from store.objects.base import ObjectStore

FORMATS: Final[dict[str, str]] = {
    "mp3": "audio/mpeg",
    "wav": "audio/wav",
    "opus": "audio/ogg",
    "flac": "audio/flac",
    "m4b": "audio/mp4",
}

class _Master(TypedDict):
    format: str
    sampling_rate: int
    loudness_scope: str
    loudness_lufs: float


#: What a delivery's master is rendered as: lossless, at the retailer's rate, each chapter at a
#: loudness that puts its file's RMS in the retailer's range (``books.acx``).
DELIVERY_MASTERS: Final[dict[str, _Master]] = {
    "acx": {"format": "wav", "sampling_rate": 44100, "loudness_scope": "chapter", "loudness_lufs": -20.0},
}


def with_delivery_master(spec: JobSpec) -> JobSpec:
    """The request with its delivery's master options in place of those asked for (the package
    is cut from that master); a request without a delivery, as it is."""
    if spec.delivery not in DELIVERY_MASTERS:
        return spec
    return replace(spec, **DELIVERY_MASTERS[spec.delivery])


@dataclass(frozen=True, slots=True, kw_only=True)
class JobSpec(JobParams):
    """A validated job request: its options (``JobParams``, the row's ``params``) and its text."""

    text: str
    cover_image: bytes | None = None  # the m4b's cover (JPEG or PNG): stored beside the text, in params by digest

    def request_hash(self) -> str:
        params = self.to_stored()
        if self.lexicons:  # the names asked for, not the versions they had: a retry after a
            params["lexicons"] = [entry["name"] for entry in self.lexicons]  # PUT is the same request
        canonical = json.dumps({"text": self.text, **params}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode()).hexdigest()


def submit_job(
    *,
    session: Session,
    objects: ObjectStore,
    account_id: uuid.UUID,
    spec: JobSpec,
    idempotency_key: str | None = None,
    allow_private_webhooks: bool = False,
    max_active: int = 0,
) -> tuple[Job, bool]:
    """Create the job (or return the one this Idempotency-Key made); ``True`` when newly created.
    ``max_active`` (0: no limit): a new job that would give the account more unfinished jobs than
    that raises ``TooManyJobs`` (the caller rolls back); a repeat of an earlier request does not."""
    if spec.webhook_url:
        check_url(spec.webhook_url, allow_private=allow_private_webhooks)
    spec = with_delivery_master(spec)
    if spec.cover_image:
        spec = replace(spec, cover={"type": cover_type(spec.cover_image), "sha256": hashlib.sha256(spec.cover_image).hexdigest()})
    request_hash = spec.request_hash()
    job_id = uuid.uuid4()
    # The text goes to the object store first: a row must never point at a missing object.
    key = source_key(job_id)
    objects.put_bytes(key, spec.text.encode("utf-8"), content_type="text/plain; charset=utf-8")
    if spec.cover_image:
        objects.put_bytes(cover_key(job_id), spec.cover_image, content_type=cover_type(spec.cover_image) or "")
    try:
        job, created = job_repo.create_job(
            session=session,
            job_id=job_id,
            account_id=account_id,
            params=spec.to_stored(),
            request_hash=request_hash,
            idempotency_key=idempotency_key,
            text_key=key,
            characters=billed_characters(spoken_text(spec.text, spec.lang) if spec.ssml else spec.text),  # what
            # reading it whole bills (speech.billing): an SSML document's spoken text, never its markup
            webhook_url=spec.webhook_url,
        )
        if created and max_active and job_repo.unfinished_jobs(session=session, account_id=account_id) > max_active:
            raise TooManyJobs(max_active)
    except Exception:
        objects.delete(key)  # no row will point at it (a 409 conflict, the database gone)
        if spec.cover_image:
            objects.delete(cover_key(job_id))
        raise
    if not created:
        objects.delete(key)  # the Idempotency-Key named an earlier job: this upload is surplus
        if spec.cover_image:
            objects.delete(cover_key(job_id))
    return job, created
