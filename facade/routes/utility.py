"""``/oov``, ``/textnorm`` and ``/phonemize``: what the voice will do with a text, without audio.

``/textnorm`` and ``/phonemize`` fail with JSON ``{"error": ...}`` bodies, as the vendor API contract says, and
``/oov`` with plain text like the synthesis endpoint: ``facade.errors`` chooses by path. A failure inside the normaliser itself
is the vendor API contract's 502 ``text normalization engine error``.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from facade import errors as e
from facade.deps import PrincipalDep, ServicesDep
from facade.validation import parse_json_body
from speech.synthesizer import clean
from speech.text import canonical, normalize, oov_words

log = logging.getLogger("lector.utility")
router = APIRouter()
MAX_CHARS = 10_000


def _text_and_lang(payload: dict[str, Any]) -> tuple[str, str]:
    if "text" not in payload:
        raise e.ApiError(400, e.TEXT_REQUIRED)
    text = payload["text"]
    if not isinstance(text, str):
        raise e.ApiError(400, e.TEXT_NOT_STRING)
    if not clean(text).strip():  # only spaces or control characters: nothing to say
        raise e.ApiError(400, e.TEXT_EMPTY)
    if len(text) > MAX_CHARS:
        raise e.ApiError(400, e.TEXT_TOO_LONG)
    lang = payload.get("lang", "en")
    if not isinstance(lang, str):
        raise e.ApiError(400, e.LANG_NOT_STRING)
    code = canonical(lang)
    if code is None:
        raise e.ApiError(400, f"Language {e.cut(lang)} is not supported")
    return clean(text), code


@router.post("/oov")
async def oov(request: Request, services: ServicesDep, principal: PrincipalDep) -> JSONResponse:
    """The words the voice will pronounce by rule rather than from its dictionary."""
    text, lang = _text_and_lang(parse_json_body(await request.body()))
    return JSONResponse(await services.offload(oov_words, text, lang))


@router.post("/textnorm")
async def textnorm(request: Request, services: ServicesDep, principal: PrincipalDep) -> JSONResponse:
    """``{"normalized": ...}``: numbers, dates, money, units and abbreviations written out."""
    text, lang = _text_and_lang(parse_json_body(await request.body()))
    with e.unhandled_as(502, e.TEXTNORM_ENGINE, what="text normalization failed", logger=log):
        normalized = await services.offload(normalize, text, lang)
    return JSONResponse({"normalized": normalized})


@router.post("/phonemize")
async def phonemize(request: Request, services: ServicesDep, principal: PrincipalDep) -> JSONResponse:
    """``{"phonemes": ...}``: the IPA lector's engine will speak for the text."""
    payload = parse_json_body(await request.body())
    text, lang = _text_and_lang(payload)
    speaker = payload.get("speaker")
    model_id = payload.get("modelId")
    if model_id is not None and not isinstance(model_id, str):
        raise e.ApiError(400, "modelId must be a string")
    if isinstance(speaker, str):
        voice = services.catalog.resolve(model_id, speaker, lang)
    else:
        voice = next(iter(services.catalog.voices_of(None, lang)))
    normalized = await services.offload(normalize, text, voice.lang)
    phonemes = await services.offload(services.synthesizer.phonemize, voice, normalized)
    return JSONResponse({"phonemes": phonemes, "lang": voice.lang, "speaker": voice.speaker})
