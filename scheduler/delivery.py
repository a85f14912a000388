"""Announcing a finished job to the customer's webhook, once per attempt, every attempt recorded."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NotRequired, TypedDict

from scheduler import webhooks
from scheduler.errors import InvalidWebhookUrl
from store.db import accounts as account_repo
from store.db import jobs as job_repo
from store.db.models import Job
from store.db.session import SessionFactory
from store.objects.base import ObjectStore


@dataclass(frozen=True, slots=True)
class DeliveryOutcome:
    delivered: bool
    retry_in_s: float | None  # None: stop (delivered, no webhook, refused target, or the day is over)


#: The QA check's report (``scheduler.qa``) as JSON.
QaReport = dict[str, object]


class WebhookEvent(TypedDict):
    """The callback's JSON body (signed as sent)."""

    event: str
    jobId: str
    status: str
    audioUrl: str | None
    characters: int
    durationSeconds: float | None
    chunks: int
    error: str | None
    finishedAt: str | None
    qa: NotRequired[QaReport]  # the speech-recognition check's report, for a job that asked for it


def result_link(objects: ObjectStore, job: Job, *, expires_s: int, public_base: str | None = None) -> str | None:
    """The callback's link to the audio: a presigned URL where the store can make one, else the
    API's own download path."""
    if not job.result_key:
        return None
    url: str | None = objects.presigned_url(job.result_key, expires_s=expires_s)
    if url is None and public_base:
        url = f"{public_base.rstrip('/')}/v1/jobs/{job.id}/audio"
    return url


def event_payload(job: Job, *, audio_url: str | None, qa: QaReport | None = None) -> WebhookEvent:
    """The callback's body; ``qa`` (the speech-recognition check's report) only for a job that
    asked for it."""
    payload: WebhookEvent = {
        "event": f"job.{job.status}",
        "jobId": str(job.id),
        "status": job.status,
        "audioUrl": audio_url,
        "characters": job.characters,
        "durationSeconds": job.audio_seconds,
        "chunks": job.chunks_total,
        "error": job.error,
        "finishedAt": job.finished_at.isoformat() if job.finished_at else None,
    }
    if qa is not None:
        payload["qa"] = qa
    return payload


def deliver(
    *,
    sessions: SessionFactory,
    job_id: uuid.UUID,
    attempt: int,
    audio_url: Callable[[Job], str | None],
    allow_private: bool,
    timeout_s: float,
    max_delay_s: float = webhooks.MAX_DELAY_S,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    qa_report: Callable[[Job], QaReport | None] = lambda job: None,
) -> DeliveryOutcome:
    """One attempt; the outcome says whether and when to try again. Retries stop once the next
    attempt would fall outside ``webhooks.RETRY_WINDOW_S`` after the job finished."""
    with sessions() as session:
        job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
        if not job.webhook_url or not job.is_terminal:
            return DeliveryOutcome(False, None)
        if any(a.delivered for a in job_repo.list_webhook_attempts(session=session, job_id=job_id)):
            return DeliveryOutcome(True, None)  # a redelivered task: the customer already has it
        secret = account_repo.get_account(session=session, account_id=job.account_id).webhook_secret
        payload = event_payload(job, audio_url=audio_url(job), qa=qa_report(job))
        url = job.webhook_url
        finished_at = job.finished_at or now()
    try:
        webhooks.check_url(url, allow_private=allow_private)
        result = webhooks.post(url, payload, secret=secret, timeout_s=timeout_s)
    except InvalidWebhookUrl as exc:
        result = webhooks.Attempt(None, str(exc))
        refused = True
    else:
        refused = False
    with sessions() as session:
        job_repo.record_webhook_attempt(
            session=session, job_id=job_id, attempt=attempt, url=url, event=payload["event"],
            delivered=result.delivered, status_code=result.status_code, error=result.error,
        )
    if result.delivered:
        return DeliveryOutcome(True, None)
    delay = webhooks.backoff_seconds(attempt, cap_s=max_delay_s)
    if refused or (now() - finished_at).total_seconds() + delay > webhooks.RETRY_WINDOW_S:
        return DeliveryOutcome(False, None)
    return DeliveryOutcome(False, delay)
