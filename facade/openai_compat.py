"""OpenAI's speech API vocabulary mapped onto lector's: models, voices, formats, errors.

Most TTS front ends and agent frameworks speak OpenAI's ``POST /v1/audio/speech``; this module
turns such a request into lector's own ``SynthesisRequest`` (so keys, billing, voices and
engines are the same as ``/v1/service-tts``); ``facade.errors`` gives its errors OpenAI's shape.
The tables are the documented mapping (docs/api.md, "OpenAI-compatible speech"):

- ``model``: ``tts-1`` -> ``mistv3`` (the default lineup), ``tts-1-hd`` and ``gpt-4o-mini-tts``
  -> ``coda`` (the flagship). lector's own model ids are accepted as they are.
- ``voice``: OpenAI's names map to coda's English voices (``OPENAI_VOICES``); mistv3 has one
  neural English voice, ``joe``, which speaks every OpenAI voice there. lector's speaker names
  (any language; the voice decides the language) are accepted as they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from facade.errors import OpenAIError
from facade.validation import TIME_SCALE_MAX, TIME_SCALE_MIN
from speech.audio import AudioFormat

MAX_INPUT_CHARS = 4096  # OpenAI's own limit for ``input``
SPEED_MIN, SPEED_MAX = 0.25, 4.0  # OpenAI's range for ``speed``
SAMPLE_RATE = 24000  # OpenAI's pcm is 24 kHz 16-bit little-endian mono; every format uses it here

OPENAI_MODELS: dict[str, str] = {"tts-1": "mistv3", "tts-1-hd": "coda", "gpt-4o-mini-tts": "coda"}

# OpenAI voice -> coda speaker (English). Chosen by timbre: the female names go to ivy/nora,
# the male ones to joe/owen/miles.
OPENAI_VOICES: dict[str, str] = {
    "alloy": "ivy", "ash": "owen", "ballad": "miles", "cedar": "joe", "coral": "nora", "echo": "joe",
    "fable": "miles", "marin": "nora", "nova": "nora", "onyx": "owen", "sage": "ivy", "shimmer": "ivy",
    "verse": "owen",
}
# Lineups without coda's voices: every OpenAI voice is this lineup's neural English voice.
SINGLE_VOICE_MODELS: dict[str, str] = {"mistv3": "joe", "mistv2": "joe", "mist": "joe"}


@dataclass(frozen=True, slots=True)
class OutputFormat:
    """How one ``response_format`` is produced: streamed as it is made, or encoded whole."""

    audio: AudioFormat
    streamed: bool
    media_type: str | None = None  # None: the format's own Content-Type


OUTPUT_FORMATS: dict[str, OutputFormat] = {
    "mp3": OutputFormat(AudioFormat.MP3, streamed=True),
    "opus": OutputFormat(AudioFormat.OGG_OPUS, streamed=True, media_type="audio/opus"),
    "wav": OutputFormat(AudioFormat.WAV, streamed=True),
    "pcm": OutputFormat(AudioFormat.PCM, streamed=True, media_type="audio/pcm"),
    "aac": OutputFormat(AudioFormat.AAC, streamed=True),  # ADTS frames, as OpenAI sends them
    # FLAC is encoded whole: its header wants the length.
    "flac": OutputFormat(AudioFormat.FLAC, streamed=False),
}


def lector_model(model: str) -> str:
    return OPENAI_MODELS.get(model, model)


def lector_speaker(voice: str, model_id: str) -> str:
    """A lector speaker for an OpenAI voice name (or a lector speaker, passed through)."""
    if voice not in OPENAI_VOICES:
        return voice
    return SINGLE_VOICE_MODELS.get(model_id, OPENAI_VOICES[voice])


def parse_speech(payload: dict[str, Any]) -> tuple[str, str, str, float, str]:
    """``(model, input, voice, speed, response_format)`` checked as OpenAI checks them."""
    model = payload.get("model")
    if not isinstance(model, str) or not model.strip():
        raise OpenAIError(400, "model is required and must be a string", param="model")
    text = payload.get("input")
    if not isinstance(text, str) or not text.strip():
        raise OpenAIError(400, "input is required and must be a non-empty string", param="input")
    if len(text) > MAX_INPUT_CHARS:
        raise OpenAIError(400, f"input must be at most {MAX_INPUT_CHARS} characters", param="input",
                          code="string_above_max_length")
    voice = payload.get("voice")
    if isinstance(voice, dict):  # newer clients may send {"id": "<voice>"}
        voice = voice.get("id")
    if not isinstance(voice, str) or not voice.strip():
        raise OpenAIError(400, "voice is required and must be a string", param="voice")
    fmt = payload.get("response_format") or "mp3"
    if fmt not in OUTPUT_FORMATS:
        raise OpenAIError(400, f"response_format must be one of {', '.join(OUTPUT_FORMATS)}",
                          param="response_format")
    speed = payload.get("speed", 1.0)
    if speed is None:
        speed = 1.0
    if isinstance(speed, bool) or not isinstance(speed, int | float) or not math.isfinite(speed):
        raise OpenAIError(400, "speed must be a number", param="speed")
    if not SPEED_MIN <= speed <= SPEED_MAX:
        raise OpenAIError(400, f"speed must be between {SPEED_MIN} and {SPEED_MAX}", param="speed")
    stream_format = payload.get("stream_format")
    if stream_format not in (None, "audio"):
        raise OpenAIError(400, "stream_format must be audio (server-sent events are not served)",
                          param="stream_format")
    instructions = payload.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise OpenAIError(400, "instructions must be a string", param="instructions")
    return model.strip(), text, voice.strip(), float(speed), fmt


def time_scale(speed: float) -> float:
    """OpenAI's ``speed`` (2.0: twice as fast) as lector's time scale (0.5: half as long),
    within the range lector's engines honour."""
    return min(max(1.0 / speed, TIME_SCALE_MIN), TIME_SCALE_MAX)
