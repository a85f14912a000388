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
from facade.deps import PrincipalDep, Services, ServicesDep
from facade.request_resolution import request_lexicons
from facade.validation import SynthesisRequest, parse_json_body, parse_lexicon_names
from scheduler.lexicons import UsedLexicon
from speech.synthesizer import clean
from speech.text import PhonemeSegment, TextSegment, canonical, normalize, oov_words
from speech.text.pls import apply_lexicons, lexicon_matches

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
        voice = services.speech.catalog.resolve(model_id, speaker, lang)
    else:
        voice = next(iter(services.speech.catalog.voices_of(None, lang)))
    req = SynthesisRequest(text=text, speaker=voice.speaker, lexicons=parse_lexicon_names(payload.get("lexicons")))
    used = await services.offload(request_lexicons, services, req, principal)
    phonemes = await services.offload(_phonemes, services, voice, text, used)
    body: dict[str, Any] = {"phonemes": phonemes, "lang": voice.lang, "speaker": voice.speaker}
    if used:
        body["lexicons"] = [{"name": u.name, "version": u.version} for u in used]
        body["changes"] = _changes(text, voice.lang, used)
    return JSONResponse(body)


def _phonemes(services: Services, voice: Any, text: str, used: list[UsedLexicon]) -> str:
    """The voice's IPA for the text; stretches a lexicon gives phonemes for are those phonemes."""
    pieces = []
    for segment in apply_lexicons([TextSegment(text)], [u.lexicon for u in used], voice.lang):
        if isinstance(segment, PhonemeSegment):
            pieces.append(segment.phonemes)
        elif isinstance(segment, TextSegment) and segment.text.strip():
            pieces.append(services.speech.synthesizer.phonemize(voice, normalize(segment.text, voice.lang)))
    return " ".join(piece.strip() for piece in pieces if piece.strip())


def _changes(text: str, lang: str, used: list[UsedLexicon]) -> list[dict[str, str]]:
    """What each lexicon changed: the word as written, and its phonemes or alias."""
    owner = {id(lexeme): u.name for u in used for lexeme in u.lexicon.lexemes}
    changes = []
    for written, lexeme in lexicon_matches(text, [u.lexicon for u in used], lang):
        change = {"word": written, "lexicon": owner.get(id(lexeme), "")}
        change.update({"phonemes": lexeme.phoneme} if lexeme.phoneme is not None else {"alias": lexeme.alias or ""})
        changes.append(change)
    return changes
