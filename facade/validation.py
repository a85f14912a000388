"""Parsing and checking a synthesis request body, with the vendor API contract's exact 400 messages.

Hand-written rather than a pydantic model: the vendor API contract fixes the order of checks and the wording of
each message, and clients branch on them. The same parser serves HTTP synthesis (JSON body),
WebSockets (query string, booleans as the strings ``true``/``false``) and book jobs (no
1,000-character limit, a job limit instead).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from facade import errors as e
from speech.text.ssml import looks_like_ssml

MAX_TEXT_CHARS = 1000
TIME_SCALE_MIN, TIME_SCALE_MAX = 0.4, 2.5
SPEED_MIN, SPEED_MAX = 0.1, 10.0
RATE_MIN, RATE_MAX = 4000, 96000
RATE_RANGE = f"samplingRate must be between {RATE_MIN} and {RATE_MAX}"
SSML_MARKUP_FACTOR = 10
"""An SSML document may be this many times the text limit: the limit applies to what is spoken
(``facade.request_resolution.resolve`` checks it), and markup must not eat it."""
TEXT_TYPES = ("text", "ssml")


@dataclass(frozen=True, slots=True)
class SynthesisRequest:
    text: str
    speaker: str
    model_id: str | None = None
    lang: str | None = None
    sampling_rate: int | None = None
    time_scale: float = 1.0
    speed_alpha: float | None = None
    audio_format: str | None = None
    no_text_normalization: bool = False
    pause_between_brackets: bool = False
    phonemize_between_brackets: bool = False
    inline_speed_alpha: str | None = None
    ssml: bool = False
    """``text`` is a ``<speak>`` document (``textType: "ssml"``, or text starting ``<speak``)."""
    lexicons: tuple[str, ...] | None = None
    """The lexicons named by the request, in order; ``None``: the account's defaults."""
    extra: dict[str, Any] = field(default_factory=dict)


def parse_json_body(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object, or the vendor API contract's 400 for a missing or non-object body."""
    if not raw or not raw.strip():
        raise e.ApiError(400, e.BODY_REQUIRED)
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        # Malformed JSON is "not a JSON object" as far as the client can act on it.
        raise e.ApiError(400, e.NOT_AN_OBJECT) from None
    if not isinstance(payload, dict):
        raise e.ApiError(400, e.NOT_AN_OBJECT)
    return payload


def _bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"true", "1", "yes"}
    return bool(value)


def _number(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise e.ApiError(400, f"{name} must be a number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise e.ApiError(400, f"{name} must be a number") from None
    if not math.isfinite(number):
        raise e.ApiError(400, f"{name} must be a number")
    return number


def checked_rate(value: Any) -> int | None:
    """A sample rate from ``samplingRate`` or an ``Accept`` range's ``rate=`` parameter: one rule
    and one message for both, so neither door streams audio at 1 Hz or 1 MHz."""
    rate = _number(value, "samplingRate")
    if rate is not None and not (RATE_MIN <= rate <= RATE_MAX):
        raise e.ApiError(400, RATE_RANGE)
    return int(rate) if rate is not None else None


def parse_request(
    payload: Mapping[str, Any], *, max_chars: int | None = MAX_TEXT_CHARS
) -> SynthesisRequest:
    """Check fields in the vendor API contract's order and build a request; ``max_chars=None`` skips the limit."""
    if "text" not in payload:  # null is "must be a string", per the vendor API contract
        raise e.ApiError(400, e.TEXT_REQUIRED)
    text = payload["text"]
    if not isinstance(text, str):
        raise e.ApiError(400, e.TEXT_NOT_STRING)
    if not text.strip():  # only whitespace has nothing to say either
        raise e.ApiError(400, e.TEXT_EMPTY)
    ssml = parse_text_type(payload.get("textType"), text)
    if max_chars is not None and len(text) > max_chars * (SSML_MARKUP_FACTOR if ssml else 1):
        raise e.ApiError(400, e.TEXT_TOO_LONG)
    if "speaker" not in payload or payload["speaker"] is None:
        raise e.ApiError(400, e.SPEAKER_REQUIRED)
    speaker = payload["speaker"]
    if not isinstance(speaker, str) or not speaker.strip():
        raise e.ApiError(400, "speaker must be a non-empty string")
    lang = payload.get("lang")
    if lang is not None and not isinstance(lang, str):
        raise e.ApiError(400, e.LANG_NOT_STRING)
    audio_format = payload.get("audioFormat")
    if audio_format is not None and not isinstance(audio_format, str):
        raise e.ApiError(400, e.AUDIO_FORMAT_NOT_STRING)
    model_id = payload.get("modelId")
    if model_id is not None and not isinstance(model_id, str):
        raise e.ApiError(400, "modelId must be a string")

    rate = checked_rate(payload.get("samplingRate"))
    time_scale = _number(payload.get("timeScaleFactor"), "timeScaleFactor")
    speed = _number(payload.get("speedAlpha"), "speedAlpha")
    inline = payload.get("inlineSpeedAlpha")
    if inline is not None and not isinstance(inline, str):
        raise e.ApiError(400, "inlineSpeedAlpha must be a string")

    return SynthesisRequest(
        text=text,
        speaker=speaker,
        model_id=model_id or None,
        lang=lang or None,
        sampling_rate=rate,
        # The vendor API contract: clamped to 0.4-2.5 with no error.
        time_scale=min(max(time_scale, TIME_SCALE_MIN), TIME_SCALE_MAX) if time_scale is not None else 1.0,
        speed_alpha=min(max(speed, SPEED_MIN), SPEED_MAX) if speed else None,
        audio_format=audio_format,
        no_text_normalization=_bool(payload.get("noTextNormalization"))
        or _bool(payload.get("reduceLatency")),
        pause_between_brackets=_bool(payload.get("pauseBetweenBrackets")),
        phonemize_between_brackets=_bool(payload.get("phonemizeBetweenBrackets")),
        inline_speed_alpha=inline,
        ssml=ssml,
        lexicons=parse_lexicon_names(payload.get("lexicons")),
    )


def parse_text_type(value: Any, text: str) -> bool:
    """Whether the text is SSML: ``textType: "ssml"``, or no ``textType`` and text that starts
    with ``<speak``; ``textType: "text"`` keeps such a text plain."""
    if value is None:
        return looks_like_ssml(text)
    if value not in TEXT_TYPES:
        raise e.ApiError(400, 'textType must be "text" or "ssml"')
    return bool(value == "ssml")


def parse_lexicon_names(value: Any) -> tuple[str, ...] | None:
    """``lexicons``: a list of lexicon names (a comma-separated string on a WebSocket's query)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [name.strip() for name in value.split(",") if name.strip()]
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise e.ApiError(400, "lexicons must be a list of lexicon names")
    return tuple(value)
