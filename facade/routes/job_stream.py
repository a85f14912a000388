"""Listening while a book renders: a job's live HLS playlist and its segments.

``GET /v1/jobs/{id}/stream.m3u8`` is the playlist (``scheduler.hls_playlist``), which grows as
the segment maker lists segments; ``GET /v1/jobs/{id}/stream/init.mp4`` and
``GET /v1/jobs/{id}/stream/{n}.m4s`` are its init and media segments (AAC in fragmented MP4),
addressed relative to the playlist. Each is authenticated and account-scoped like the other job
routes (another account's job is 404 ``job not found``); a segment not listed is 404
``segment not found``; a job whose audio expired is 410.
"""

from __future__ import annotations

import uuid
from typing import Final

from fastapi import APIRouter
from fastapi.responses import Response

from facade import errors as e
from facade.deps import Principal, PrincipalDep, Services, ServicesDep, configured, session_for
from facade.parts import Part
from facade.routes.jobs import EXPIRED, parse_job_id
from scheduler import hls_playlist, retention
from store.db import jobs as job_repo
from store.db.models import Job

router = APIRouter()
NEEDS: Final = frozenset({Part.AUTHENTICATOR, Part.DATABASE, Part.OBJECTS})  # facade.parts: checked before serving
SEGMENT_CONTENT_TYPE = "audio/mp4"


def _job(services: Services, principal: Principal, jid: uuid.UUID) -> Job:
    with session_for(services) as session:
        job = job_repo.get_job(session=session, job_id=jid, account_id=principal.account_id)
        if retention.is_expired(job):
            raise e.ApiError(410, EXPIRED)
        return job


def _playlist(services: Services, principal: Principal, jid: uuid.UUID) -> str:
    return hls_playlist.playlist(configured(services.storage.objects), _job(services, principal, jid))


def _segment(services: Services, principal: Principal, jid: uuid.UUID, name: str) -> bytes:
    _job(services, principal, jid)
    objects = configured(services.storage.objects)
    return objects.get_bytes(hls_playlist.segment_key(objects, jid, name))


@router.get("/v1/jobs/{job_id}/stream.m3u8")
async def stream_playlist(job_id: str, services: ServicesDep, principal: PrincipalDep) -> Response:
    """The job's live HLS playlist: EVENT while it renders, ended when its last segment is listed.
    Not cached: it grows."""
    text = await services.offload(_playlist, services, principal, parse_job_id(job_id))
    return Response(text, media_type=hls_playlist.CONTENT_TYPE, headers={"Cache-Control": "no-store"})


@router.get("/v1/jobs/{job_id}/stream/{name}")
async def stream_segment(job_id: str, name: str, services: ServicesDep, principal: PrincipalDep) -> Response:
    """A listed segment (``init.mp4`` or ``{n}.m4s``); its bytes never change once listed."""
    data = await services.offload(_segment, services, principal, parse_job_id(job_id), name)
    return Response(data, media_type=SEGMENT_CONTENT_TYPE, headers={"Cache-Control": "private, max-age=86400, immutable"})
