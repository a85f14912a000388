"""Public voice lists in the vendor's shapes, straight from the catalog (no auth, as the vendor's).

The catalog does not change while the process runs, so each list is rendered to bytes once per
catalog and served from memory: under load (24 streams on two cores) the list must answer within
50 ms, and the event loop should spend nothing on it but a lookup.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from facade.deps import ServicesDep
from speech.voices import all_v2, voice_details

router = APIRouter()

# (id of the catalog, list) -> (the catalog, kept alive so that its id is not reused; the bytes)
_RENDERED: dict[tuple[int, str], tuple[object, bytes]] = {}


def _rendered(catalog: Any, render: Callable[[Any], object]) -> bytes:
    key = (id(catalog), render.__name__)
    hit = _RENDERED.get(key)
    if hit is None or hit[0] is not catalog:
        body = json.dumps(render(catalog), ensure_ascii=False, separators=(",", ":")).encode()
        hit = _RENDERED[key] = (catalog, body)
    return hit[1]


@router.get("/data/voices/all-v2.json")
async def list_voices(services: ServicesDep) -> Response:
    """``{"<modelId>": {"<3-letter lang>": ["speaker", ...]}}``."""
    return Response(_rendered(services.speech.catalog, all_v2), media_type="application/json")


@router.get("/data/voices/voice_details.json")
async def list_voice_details(services: ServicesDep) -> Response:
    """One object per voice and model: speaker, modelId, lang, gender, age, country, dialect..."""
    return Response(_rendered(services.speech.catalog, voice_details), media_type="application/json")
