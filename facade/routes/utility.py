"""``/oov``, ``/textnorm`` and ``/phonemize``: what the voice will do with a text, without audio.

``/textnorm`` and ``/phonemize`` fail with JSON ``{"error": ...}`` bodies, as the seed says;
``/oov`` answers plain text like the synthesis endpoint. A failure inside the normaliser itself
is the seed's 502 ``text normalization engine error``.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from facade import errors as e
from facade.deps import PrincipalDep, Services, ServicesDep, current_principal
from facade.validation import parse_json_body
from speech.errors import SpeechError
from speech.synthesizer import clean
from speech.text import canonical, normalize, oov_words

log = logging.getLogger("lector.utility")
router = APIRouter()
MAX_CHARS = 10_000


def _text_and_lang(payload: dict[str, Any], *, json_errors: bool) -> tuple[str, str]:
    def fail(message: str) -> e.ApiError:
        return e.ApiError(400, message, json_body=json_errors)

    if "text" not in payload:
        raise fail(e.TEXT_REQUIRED)
    text = payload["text"]
    if not isinstance(text, str):
        raise fail(e.TEXT_NOT_STRING)
    if not clean(text).strip():  # only spaces or control characters: nothing to say
        raise fail(e.TEXT_EMPTY)
    if len(text) > MAX_CHARS:
        raise fail(e.TEXT_TOO_LONG)
    lang = payload.get("lang", "en")
    if not isinstance(lang, str):
        raise fail(e.LANG_NOT_STRING)
    code = canonical(lang)
    if code is None:
        raise fail(f"Language {e.cut(lang)} is not supported")
    return clean(text), code


async def _authenticate_json(request: Request, services: Services) -> None:
    """Auth for the JSON-error endpoints: the same checks, failures as ``{"error": ...}``."""
    try:
        await run_in_threadpool(current_principal, request, services)
    except e.ApiError as exc:
        raise e.ApiError(exc.status, exc.message, json_body=True) from None
    except Exception as exc:  # noqa: BLE001 - domain auth errors, mapped to the same statuses
        mapped = e.lookup(exc)
        if mapped is None:
            raise
        raise e.ApiError(*mapped, json_body=True) from None


async def _payload(request: Request, *, json_errors: bool) -> dict[str, Any]:
    try:
        return parse_json_body(await request.body())
    except e.ApiError as exc:
        raise e.ApiError(exc.status, exc.message, json_body=json_errors) from None


@router.post("/oov")
async def oov(request: Request, principal: PrincipalDep) -> JSONResponse:
    """The words the voice will pronounce by rule rather than from its dictionary."""
    text, lang = _text_and_lang(await _payload(request, json_errors=False), json_errors=False)
    return JSONResponse(await run_in_threadpool(oov_words, text, lang))


@router.post("/textnorm")
async def textnorm(request: Request, services: ServicesDep) -> JSONResponse:
    """``{"normalized": ...}``: numbers, dates, money, units and abbreviations written out."""
    await _authenticate_json(request, services)
    text, lang = _text_and_lang(await _payload(request, json_errors=True), json_errors=True)
    try:
        normalized = await run_in_threadpool(normalize, text, lang)
    except Exception as exc:  # noqa: BLE001 - the seed's 502 for a failing engine
        log.exception("text normalization failed", exc_info=exc)
        raise e.ApiError(502, e.TEXTNORM_ENGINE, json_body=True) from exc
    return JSONResponse({"normalized": normalized})


@router.post("/phonemize")
async def phonemize(request: Request, services: ServicesDep) -> JSONResponse:
    """``{"phonemes": ...}``: the IPA lector's engine will speak for the text."""
    await _authenticate_json(request, services)
    payload = await _payload(request, json_errors=True)
    text, lang = _text_and_lang(payload, json_errors=True)
    speaker = payload.get("speaker")
    model_id = payload.get("modelId")
    if model_id is not None and not isinstance(model_id, str):
        raise e.ApiError(400, "modelId must be a string", json_body=True)
    try:
        if isinstance(speaker, str):
            voice = services.catalog.resolve(model_id, speaker, lang)
        else:
            voice = next(iter(services.catalog.voices_of(None, lang)))
        normalized = await run_in_threadpool(normalize, text, voice.lang)
        phonemes = await run_in_threadpool(services.synthesizer.phonemize, voice, normalized)
    except SpeechError as exc:
        mapped = e.lookup(exc)
        raise e.ApiError(mapped[0] if mapped else 500, mapped[1] if mapped else e.INTERNAL, json_body=True) from exc
    return JSONResponse({"phonemes": phonemes, "lang": voice.lang, "speaker": voice.speaker})
