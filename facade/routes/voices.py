"""Public voice lists in the vendor's shapes, straight from the catalog (no auth, as the vendor's)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from facade.deps import ServicesDep
from speech.voices import all_v2, voice_details

router = APIRouter()


@router.get("/data/voices/all-v2.json")
async def list_voices(services: ServicesDep) -> JSONResponse:
    """``{"<modelId>": {"<3-letter lang>": ["speaker", ...]}}``."""
    return JSONResponse(all_v2(services.catalog))


@router.get("/data/voices/voice_details.json")
async def list_voice_details(services: ServicesDep) -> JSONResponse:
    """One object per voice and model: speaker, modelId, lang, gender, age, country, dialect..."""
    return JSONResponse(voice_details(services.catalog))
