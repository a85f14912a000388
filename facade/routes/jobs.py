"""Book jobs: submit, inspect, list, cancel, download. Account-scoped: another account's job is 404.

A job is submitted as JSON (``text``, or ``chapters`` with their texts) or as a multipart form
with the book in the ``file`` field (``.txt``, ``.md`` or ``.epub``) and every other option as a
form field of the same name (``chapters`` and ``pauses`` as JSON strings). ``loudness`` sets the
book's integrated loudness in LUFS (default -19, true peak at most -3 dBFS either way);
``loudnessScope`` whether that is the whole book's (``book``, the default: one gain) or each
chapter's (``chapter``: each chapter at the target, as ACX-style delivery measures chapter
files; such a book is assembled while it is synthesized, so it is done sooner). ``delivery``
(``acx``) makes the result a zip of retail-ready chapter files with a compliance report
(``books.acx``), also in the job's ``compliance`` once it has succeeded.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import replace
from typing import Any, Final

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from books import chapters as chapter_rules
from books.casting import Cast, check_cast
from books.job_ssml import Speakers, phoneme_voices, spoken_text, voice_names
from facade import errors as e
from facade.deps import Principal, PrincipalDep, Services, ServicesDep, configured, session_for
from facade.job_form import form_payload
from facade.job_request import parse_job_request
from facade.parts import Part
from facade.request_resolution import DEFAULT_MODEL
from facade.validation import parse_json_body, parse_request
from facade.vendor_controls import speed_rate
from scheduler import intake, lifecycle, qa, retention
from scheduler.job_params import JobParams
from scheduler.lexicons import for_request
from scheduler.objects import compliance_key, source_key, srt_key, timestamps_key, vtt_key
from scheduler.queue import Message
from speech.errors import PhonemesNotSupported
from speech.synthesizer import prepare
from store.db import jobs as job_repo
from store.db import usage as usage_repo
from store.db.models import Job
from store.db.session import retrying_conflicts
from store.errors import JobNotFound
from store.status import JobStatus

router = APIRouter()
NEEDS: Final = frozenset({Part.AUTHENTICATOR, Part.DATABASE, Part.OBJECTS, Part.DISPATCHER, Part.JOB_LIMIT})
EXPIRED: Final = "job audio has expired"


def job_view(job: Job, *, audio_seconds_done: float | None = None) -> dict[str, Any]:
    params = JobParams.from_stored(job.params)
    return {
        "id": str(job.id),
        "status": job.status,
        "createdAt": job.created_at.isoformat() if job.created_at else None,
        "startedAt": job.started_at.isoformat() if job.started_at else None,
        "finishedAt": job.finished_at.isoformat() if job.finished_at else None,
        "characters": job.characters,
        "progress": {
            "chunksDone": job.chunks_done,
            "chunksTotal": job.chunks_total,
            "audioSeconds": audio_seconds_done if audio_seconds_done is not None else job.audio_seconds,
        },
        "durationSeconds": job.audio_seconds,
        "format": params.format,
        "samplingRate": params.sampling_rate,
        "speaker": params.speaker,
        "modelId": params.model_id,
        "title": params.title,
        "author": params.author,
        "lexicons": params.lexicons or [],
        "delivery": params.delivery,
        "cast": params.cast,
        "expired": retention.is_expired(job),
        "error": job.error,
    }


def parse_job_id(raw: str) -> uuid.UUID:
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise JobNotFound(f"no job {e.cut(raw)}") from None  # not an id: no such job


def _max_chars(services: Services) -> int:
    """The longest book a job may be (``LECTOR_MAX_JOB_CHARS``), from the app's settings."""
    if services.jobs.max_job_chars is None:
        raise e.ApiError(500, e.INTERNAL)
    return services.jobs.max_job_chars


# C0/C1 control characters but tab, newline and carriage return. PostgreSQL refuses NUL in text
# and JSON, and none of them is speech: in free text each becomes a space (so chapter offsets
# still point where the client counted), in names they are refused.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_FREE_TEXT_FIELDS: Final = ("text", "title", "author")
_NAME_FIELDS: Final = ("speaker", "modelId", "lang", "format", "webhookUrl", "audioFormat")


def _clean_controls(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with control characters blanked in its free text; a control character in a
    name (speaker, URL, ...) is a 400, since a name with one cut out would be another name."""
    out = dict(payload)
    for name in _FREE_TEXT_FIELDS:
        if isinstance(out.get(name), str):
            out[name] = _CONTROL.sub(" ", out[name])
    for name in _NAME_FIELDS:
        if isinstance(out.get(name), str) and _CONTROL.search(out[name]):
            raise e.ApiError(400, f"{name} must not contain control characters")
    chapters = out.get("chapters")
    if isinstance(chapters, list):
        out["chapters"] = [
            {k: _CONTROL.sub(" ", v) if k in ("title", "text") and isinstance(v, str) else v for k, v in c.items()}
            if isinstance(c, dict) else c
            for c in chapters
        ]
    return out


_SPEECH_WINDOW: Final = 5000
SSML_CHAPTERS: Final = (
    'an SSML job takes no chapters field: mark each chapter in the document with <mark name="chapter:Title"/>'
)


def _has_speech(text: str, lang: str, *, normalize: bool, ssml: bool = False) -> bool:
    """Whether any of the text is left to say once normalised (``* * *`` alone is not): a window
    at a time, so a book answers after its first few thousand characters. An SSML document's
    spoken text, not its markup."""
    if ssml:
        text = spoken_text(text, lang)
    return any(
        prepare(text[at : at + _SPEECH_WINDOW], lang, normalize_text=normalize)
        for at in range(0, len(text), _SPEECH_WINDOW)
    )


def _spec(services: Services, payload: dict[str, Any], *, qa_default: bool = False) -> intake.JobSpec:
    payload = _clean_controls(payload)
    given = payload.get("chapters")
    if "text" not in payload and isinstance(given, list) and given and all(isinstance(c, dict) and "text" in c for c in given):
        payload = {**payload}
        payload["text"], payload["chapters"] = chapter_rules.join_given(given)  # InvalidChapters: 400
    req = parse_request(payload, max_chars=_max_chars(services))  # the vendor's fields, its messages
    job = parse_job_request(payload)  # the job's own options (facade.job_request)
    chapters = None
    if job.chapters is not None:
        chapters = chapter_rules.check_given(job.chapters, len(req.text))
    requested = req.model_id or DEFAULT_MODEL
    model_id = services.speech.catalog.resolve_model(requested, now=services.now(), self_hosted=services.self_hosted)
    voice = services.speech.catalog.resolve(model_id, req.speaker, req.lang or "en")
    if req.ssml and job.chapters is not None:  # offsets into markup would cut inside its elements
        raise e.ApiError(400, SSML_CHAPTERS)
    cast = None
    if job.cast is not None:
        cast = check_cast(job.cast, req.speaker)  # InvalidCast: the table's 400
        for name in {cast["narrator"], cast["dialogue"], *(c["voice"] for c in cast["characters"].values())}:
            services.speech.catalog.resolve(model_id, name, voice.lang)  # VoiceNotFound: the contract's 400
    if req.ssml:  # SsmlError (an element, attribute or value lector does not take): the table's 400 with its position
        characters = {n for c, m in (cast or {"characters": {}})["characters"].items() for n in (c, *m["aliases"])}
        for name in voice_names(req.text, voice.lang):
            if name not in characters:
                services.speech.catalog.resolve(model_id, name, voice.lang)  # a <voice> another voice of the model
        speakers = Speakers(cast["narrator"], Cast.from_stored(cast)) if cast else Speakers(req.speaker)
        for name in phoneme_voices(req.text, voice.lang, speakers):  # as /v1/service-tts: a formant voice is a 400
            if not services.speech.synthesizer.speaks_phonemes(services.speech.catalog.resolve(model_id, name, voice.lang)):
                raise PhonemesNotSupported(name)
    return intake.JobSpec(
        text=req.text, ssml=req.ssml, speaker=req.speaker, model_id=model_id, lang=voice.lang, sampling_rate=req.sampling_rate,
        time_scale=req.time_scale, speed_alpha=speed_rate(model_id, req.speed_alpha), format=job.format, webhook_url=job.webhook_url,
        title=job.title, author=job.author, normalize=not req.no_text_normalization,
        skip_front_matter=job.skip_front_matter, chapters=chapters, pauses=job.given_pauses,
        loudness_lufs=job.loudness, loudness_scope=job.scope,
        lexicons=[{"name": name} for name in req.lexicons] if req.lexicons is not None else None,
        delivery=job.delivery, cast=cast, cover_image=job.cover,
        qa=qa_default if job.qa is None else job.qa,  # the account's default where the job does not say
    )


def _submit(services: Services, principal: Principal, spec: intake.JobSpec, key: str | None) -> tuple[Any, bool]:
    with session_for(services) as session:
        # The lexicons named (or the account's defaults) at their versions now: the job records
        # them, so its chunks, a redelivery and a rerun all read the book the same way.
        names = [entry["name"] for entry in spec.lexicons] if spec.lexicons is not None else None
        used = for_request(session=session, account_id=configured(principal.account_id), names=names,
                           limits=services.speech.lexicon_limits)
        spec = replace(spec, lexicons=[{"name": u.name, "version": u.version} for u in used] or None)
        job, created, messages = lifecycle.submit(  # InvalidWebhookUrl: the table's 400
            session=session, objects=configured(services.storage.objects), account_id=configured(principal.account_id),
            spec=spec,
            idempotency_key=key, allow_private_webhooks=services.jobs.webhook_allow_private,
            max_active=services.jobs.max_active_jobs,
        )
        view = job_view(job)
        if JobParams.from_stored(job.params).qa:
            view["qa"] = {"status": "pending"}  # what GET shows until the check ends
    configured(services.brokers.dispatcher).send_all(messages)  # only after the commit above
    return view, created


@router.post("/v1/jobs", status_code=202)
async def submit(
    request: Request, services: ServicesDep, principal: PrincipalDep,
    idempotency_key: str | None = Header(None, alias="Idempotency-Key"),
) -> JSONResponse:
    """Queue a long-form job. The same Idempotency-Key and body return the same job."""
    if request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        payload = await form_payload(request, services, max_chars=_max_chars(services))
    else:
        payload = parse_json_body(await request.body())
    if not principal.may_use(endpoint="jobs"):
        raise e.ApiError(403, e.FORBIDDEN)
    spec = _spec(services, payload, qa_default=principal.qa_default)
    if not principal.may_use(model=spec.model_id):
        raise e.ApiError(403, e.FORBIDDEN)
    if not await services.offload(_has_speech, spec.text, spec.lang, normalize=spec.normalize, ssml=spec.ssml):
        raise e.ApiError(400, e.TEXT_EMPTY)  # else a job that "succeeds" with no chunks
    view, created = await services.offload(retrying_conflicts, lambda: _submit(services, principal, spec, idempotency_key))
    # A replay answers as the first submission did (202), flagged the way Stripe flags replays.
    return JSONResponse(view, status_code=202, headers={} if created else {"Idempotent-Replayed": "true"})


def _get(services: Services, principal: Principal, job_id: uuid.UUID) -> dict[str, Any]:
    with session_for(services) as session:
        job = job_repo.get_job(session=session, job_id=job_id, account_id=principal.account_id)
        done = None if job.is_terminal else job_repo.audio_seconds_done(session=session, job_id=job_id)
        view = job_view(job, audio_seconds_done=done)
        # ``characters``: what the submitted text bills when read whole; ``billedCharacters``: what
        # its chunks billed so far, by the same rule (speech.billing; docs/api.md, "Billed characters").
        view["billedCharacters"] = usage_repo.job_billed_characters(session=session, job_id=job_id)
        # ``reusedCharacters``: chunks whose audio the account had rendered before (scheduler.chunk_cache),
        # copied and not billed again; once the job has succeeded the two add up to ``characters``.
        view["reusedCharacters"] = job_repo.job_reused_characters(session=session, job_id=job_id)
        if job.status == JobStatus.SUCCEEDED and JobParams.from_stored(job.params).delivery and not retention.is_expired(job):
            # the package's compliance report, one small object (books.acx)
            view["compliance"] = json.loads(configured(services.storage.objects).get_bytes(compliance_key(job_id)))
        # The speech-recognition check's report (scheduler.qa): only for a job that asked for it.
        checked = qa.report(configured(services.storage.objects), job)
        if checked is not None:
            view["qa"] = checked
        return view


@router.get("/v1/jobs/{job_id}")
async def get(job_id: str, services: ServicesDep, principal: PrincipalDep) -> JSONResponse:
    return JSONResponse(await services.offload(_get, services, principal, parse_job_id(job_id)))


@router.get("/v1/jobs")
async def list_(
    services: ServicesDep, principal: PrincipalDep,
    limit: int = Query(50, ge=1, le=200), offset: int = Query(0, ge=0), status: str | None = Query(None),
) -> JSONResponse:
    """The account's jobs, newest first; ``hasMore`` says whether ``offset + limit`` finds more."""

    def run() -> list[dict[str, Any]]:
        with session_for(services) as session:
            rows = job_repo.list_jobs(
                session=session, account_id=configured(principal.account_id), limit=limit + 1, offset=offset,
                status=status,
            )
            return [job_view(j) for j in rows]

    jobs = await services.offload(run)
    return JSONResponse({"jobs": jobs[:limit], "limit": limit, "offset": offset, "hasMore": len(jobs) > limit})


@router.delete("/v1/jobs/{job_id}")
async def cancel(job_id: str, services: ServicesDep, principal: PrincipalDep) -> JSONResponse:
    """Cancel (``scheduler.lifecycle.cancel``): synthesis stops at its next check, within one engine call."""
    jid = parse_job_id(job_id)

    def run() -> tuple[dict[str, Any], list[Message]]:
        with session_for(services) as session:
            job, messages = lifecycle.cancel(
                session=session, job_id=jid, account_id=configured(principal.account_id), window=services.jobs.account_batch_window
            )
            return job_view(job), messages

    view, messages = await services.offload(retrying_conflicts, run)  # a deadlock with a worker's step
    # only after the commit above; a Redis publish blocks, so off the event loop
    await services.offload(configured(services.brokers.dispatcher).send_all, messages)
    return JSONResponse(view)


def _result(services: Services, principal: Principal, jid: uuid.UUID) -> Any:
    with session_for(services) as session:
        job = job_repo.get_job(session=session, job_id=jid, account_id=principal.account_id)
        if retention.is_expired(job):
            raise e.ApiError(410, EXPIRED)
        if job.status != JobStatus.SUCCEEDED or not job.result_key:
            raise e.ApiError(409, f"job is {job.status}; audio is available once it has succeeded")
        return job.result_key, job.result_content_type


@router.get("/v1/jobs/{job_id}/audio", response_model=None)
async def audio(job_id: str, request: Request, services: ServicesDep, principal: PrincipalDep) -> Response:
    """A redirect to a presigned, expiring URL; the bytes themselves when the store cannot presign.

    With ``Accept: application/json``: ``{"url", "downloadUrl", "expiresIn"}`` (``null`` URLs when
    the store cannot presign). A browser cannot follow the redirect with its key and read the
    answer from another origin; the console plays ``url`` and saves ``downloadUrl`` (served as an
    attachment) instead."""
    key, content_type = await services.offload(_result, services, principal, parse_job_id(job_id))
    if request.headers.get("accept", "").split(";")[0].strip().lower() == "application/json":
        name = f"{job_id}.{key.rsplit('.', 1)[-1]}" if "." in key.rsplit("/", 1)[-1] else job_id
        url = await services.offload(configured(services.storage.objects).presigned_url, key, expires_s=services.storage.presign_seconds)
        download = await services.offload(
            lambda: configured(services.storage.objects).presigned_url(key, expires_s=services.storage.presign_seconds, download_name=name)
        )
        return JSONResponse({"url": url, "downloadUrl": download, "expiresIn": services.storage.presign_seconds})
    url = await services.offload(configured(services.storage.objects).presigned_url, key, expires_s=services.storage.presign_seconds)
    if url:
        return RedirectResponse(url, status_code=307)
    # Deleted under us (retention, an operator): ObjectNotFound, answered as a missing job.
    data = await services.offload(configured(services.storage.objects).get_bytes, key)
    return Response(data, media_type=content_type or "application/octet-stream")


async def _artefact(services: Services, principal: Principal, raw_id: str, key_of: Any, media_type: str) -> Response:
    jid = parse_job_id(raw_id)
    await services.offload(_result, services, principal, jid)
    data = await services.offload(configured(services.storage.objects).get_bytes, key_of(jid))
    return Response(data, media_type=media_type)


@router.get("/v1/jobs/{job_id}/timestamps.json")
async def timestamps(job_id: str, services: ServicesDep, principal: PrincipalDep) -> Response:
    """``{"chapters", "sentences", "words"}``, each with start and end in seconds."""
    return await _artefact(services, principal, job_id, timestamps_key, "application/json")


@router.get("/v1/jobs/{job_id}/text")
async def job_text(job_id: str, services: ServicesDep, principal: PrincipalDep) -> Response:
    """The job's text as it was read (an upload's extracted text, an SSML document's words): what
    the ``textOffset`` of its timestamps and WebVTT cues count in."""
    return await _artefact(services, principal, job_id, source_key, "text/plain; charset=utf-8")


@router.get("/v1/jobs/{job_id}/compliance.json")
async def compliance(job_id: str, services: ServicesDep, principal: PrincipalDep) -> Response:
    """A delivery job's compliance report: each file's rules, measured value, limit, pass or fail."""
    return await _artefact(services, principal, job_id, compliance_key, "application/json")


@router.get("/v1/jobs/{job_id}/subtitles.srt")
async def subtitles_srt(job_id: str, services: ServicesDep, principal: PrincipalDep) -> Response:
    return await _artefact(services, principal, job_id, srt_key, "application/x-subrip; charset=utf-8")


@router.get("/v1/jobs/{job_id}/subtitles.vtt")
async def subtitles_vtt(job_id: str, services: ServicesDep, principal: PrincipalDep) -> Response:
    return await _artefact(services, principal, job_id, vtt_key, "text/vtt; charset=utf-8")
