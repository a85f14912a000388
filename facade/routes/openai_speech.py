"""``POST /v1/audio/speech``: OpenAI's speech API on lector's keys, billing, voices and engines.

The request is translated by ``facade.openai_compat`` into the same ``SynthesisRequest`` and
``ResolvedRequest`` that ``/v1/service-tts`` uses, so a key, a voice and a bill mean the same on both
routes (usage rows are ``http`` rows of the requested lector model). mp3, opus, wav and pcm
stream sentence by sentence; flac and aac are encoded whole. Errors on this route alone follow
OpenAI's JSON shape, because OpenAI's clients parse them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np
from fastapi import APIRouter, Request
from fastapi.responses import Response

from facade import errors as e
from facade.deps import Services, ServicesDep, current_principal
from facade.errors import OpenAIError
from facade.metered import MeteredSynthesis
from facade.openai_compat import (
    OUTPUT_FORMATS,
    SAMPLE_RATE,
    lector_model,
    lector_speaker,
    parse_speech,
    time_scale,
)
from facade.request_resolution import resolve
from facade.routes.tts import audio_stream
from facade.validation import SynthesisRequest, parse_lexicon_names
from speech.audio import AudioFormat, encode_whole
from speech.errors import SpeechError
from speech.types import AudioChunk

router = APIRouter(route_class=e.OpenAIRoute)
ENDPOINT = "audio-speech"  # the name accounts' allowedEndpoints use for this route


@router.post("/v1/audio/speech", response_model=None)
async def audio_speech(request: Request, services: ServicesDep) -> Response:
    """OpenAI's ``client.audio.speech.create(...)``, answered by lector. Errors take OpenAI's
    shape through the router's ``OpenAIRoute``, from the one table in ``facade.errors``."""
    principal = await current_principal(request, services)
    try:
        payload = await request.json()
    except ValueError:
        raise OpenAIError(400, "the body must be a JSON object") from None
    if not isinstance(payload, dict):
        raise OpenAIError(400, "the body must be a JSON object")
    model, text, voice, speed, fmt_name = parse_speech(payload)
    model_id = lector_model(model)
    speaker = lector_speaker(voice, model_id)
    req = SynthesisRequest(text=text, speaker=speaker, model_id=model_id, lang=_voice_lang(services, model_id, speaker),
                           time_scale=time_scale(speed), lexicons=parse_lexicon_names(payload.get("lexicons")))
    resolved = await services.offload(resolve, services, req, principal, endpoint=ENDPOINT)
    output = OUTPUT_FORMATS[fmt_name]
    if output.streamed:
        response = await audio_stream(services, principal, req, resolved, output.audio, SAMPLE_RATE, transport="http")
        if output.media_type:
            response.headers["content-type"] = output.media_type
        return response
    metered = MeteredSynthesis(services, principal, req, resolved, rate=SAMPLE_RATE, transport="http")
    audio = await metered.whole(functools.partial(_whole, output.audio))
    return Response(audio, media_type=output.media_type or output.audio.content_type(SAMPLE_RATE),
                    headers={"Cache-Control": "no-store"})


def _voice_lang(services: Services, model_id: str, speaker: str) -> str | None:
    """The language of the voice asked for: OpenAI requests carry none, lector voices have one.
    ``None`` (the default, English) when the voice is unknown, so ``resolve`` names the error."""
    try:
        return str(services.speech.catalog.voice(model_id, speaker).lang)
    except SpeechError:
        return None


def _whole(fmt: AudioFormat, pcm: Iterator[AudioChunk]) -> bytes:
    """The whole file for formats that cannot stream (``MeteredSynthesis.whole`` bills it)."""
    chunks = [c.samples for c in pcm]
    samples = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)
    return encode_whole(fmt, samples, SAMPLE_RATE)
