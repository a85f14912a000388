"""Audio formats, ``Accept`` negotiation and the codec rate rules.

The vendor API contract fixes six streamable formats and the three deprecated aliases; everything a caller needs
to answer a request (the Content-Type, the 406 text, the WebSocket ``audioFormat`` mapping) is
derived from the one table ``_SPECS`` so that the list in the 406 message can never drift from
what :func:`negotiate` accepts. The batch-only formats (FLAC, M4A, M4B) share the enum because the
batch engine stores their mime type and file extension the same way, but they are never offered
through ``Accept`` (``streamable`` is False).

Negotiation follows RFC 9110 section 12.5.1 closely enough for real clients: media ranges with
q-values, the most specific range wins at equal q, ``q=0`` excludes. ``application/json`` and
``text/event-stream`` are *not* audio: they are reported as their own representation so the
facade can route the JSON and SSE variants that only ``mist``/``mistv2`` have (the vendor API
contract's Accept rule 3).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from speech.errors import UnsupportedFormat


@dataclass(frozen=True, slots=True)
class _Spec:
    mime: str  # canonical media type (what we answer with)
    accept: str | None  # the vendor API contract's Accept value; None for batch-only formats
    extension: str
    codec_params: tuple[tuple[str, str], ...] = ()  # e.g. (("codecs", "opus"),)
    aliases: tuple[str, ...] = ()  # deprecated or common media-type aliases, lower case
    headerless: bool = False  # raw samples: the Content-Type must carry the rate


class AudioFormat(enum.Enum):
    """Every audio format lector can produce. Values are the short names used in job requests."""

    WEBM_OPUS = "webm"
    OGG_OPUS = "ogg"
    MP3 = "mp3"
    WAV = "wav"
    PCM = "pcm"  # audio/L16: headerless 16-bit little-endian linear PCM
    MULAW = "mulaw"  # audio/PCMU: headerless G.711 mu-law bytes
    FLAC = "flac"  # batch only
    M4A = "m4a"  # batch only: AAC in MP4
    M4B = "m4b"  # batch only: AAC in MP4 with the audiobook brand and chapters
    AAC = "aac"  # AAC in ADTS frames: streams (OpenAI's response_format "aac"), never offered by Accept

    @property
    def mime_type(self) -> str:
        return _SPECS[self].mime

    @property
    def accept_value(self) -> str | None:
        """The exact value the vendor API contract's table lists for ``Accept`` (None for batch-only formats)."""
        return _SPECS[self].accept

    @property
    def extension(self) -> str:
        return _SPECS[self].extension

    @property
    def streamable(self) -> bool:
        return _SPECS[self].accept is not None

    @property
    def headerless(self) -> bool:
        return _SPECS[self].headerless

    def content_type(self, sample_rate: int | None = None) -> str:
        """The ``Content-Type`` to answer with.

        Headerless formats carry their rate and channel count as parameters (RFC 2586 for L16,
        RFC 3551 for PCMU) because a client has no other way to learn them.
        """
        spec = _SPECS[self]
        if spec.headerless and sample_rate is not None:
            return f"{spec.mime};rate={sample_rate};channels=1"
        return spec.accept or spec.mime


_SPECS: Final[dict[AudioFormat, _Spec]] = {
    AudioFormat.WEBM_OPUS: _Spec("audio/webm", "audio/webm;codecs=opus", "webm", (("codecs", "opus"),)),
    AudioFormat.OGG_OPUS: _Spec(
        "audio/ogg", "audio/ogg;codecs=opus", "ogg", (("codecs", "opus"),), aliases=("audio/opus",)
    ),
    AudioFormat.MP3: _Spec("audio/mpeg", "audio/mpeg", "mp3", aliases=("audio/mp3",)),
    AudioFormat.WAV: _Spec("audio/wav", "audio/wav", "wav", aliases=("audio/wave", "audio/x-wav")),
    AudioFormat.PCM: _Spec("audio/L16", "audio/L16", "pcm", aliases=("audio/pcm",), headerless=True),
    AudioFormat.MULAW: _Spec("audio/PCMU", "audio/PCMU", "ulaw", aliases=("audio/x-mulaw",), headerless=True),
    AudioFormat.FLAC: _Spec("audio/flac", None, "flac"),
    AudioFormat.M4A: _Spec("audio/mp4", None, "m4a"),
    AudioFormat.M4B: _Spec("audio/mp4", None, "m4b"),
    AudioFormat.AAC: _Spec("audio/aac", None, "aac"),
}

#: The six formats of the vendor API contract's table, in its order (also the order of the 406 list).
STREAMING_FORMATS: Final[tuple[AudioFormat, ...]] = tuple(f for f in AudioFormat if f.streamable)

#: The vendor API contract's deprecated aliases, still accepted.
DEPRECATED_ALIASES: Final[dict[str, AudioFormat]] = {
    "audio/mp3": AudioFormat.MP3,
    "audio/pcm": AudioFormat.PCM,
    "audio/x-mulaw": AudioFormat.MULAW,
}

_BY_MEDIA_TYPE: Final[dict[str, AudioFormat]] = {
    name.lower(): fmt for fmt in STREAMING_FORMATS for name in (_SPECS[fmt].mime, *_SPECS[fmt].aliases)
}


# --- Accept negotiation --------------------------------------------------------------------------


class Representation(enum.Enum):
    """What kind of body the negotiated response has."""

    AUDIO = "audio"
    JSON = "json"  # application/json: the JSON-wrapped variant (mist, mistv2)
    EVENT_STREAM = "event-stream"  # text/event-stream: the SSE variant (mistv2)
    NOT_ACCEPTABLE = "not-acceptable"  # answer 406 with :func:`not_acceptable_message`


@dataclass(frozen=True, slots=True)
class NegotiationResult:
    """The outcome of :func:`negotiate`.

    ``defaulted`` is True when no concrete type was asked for (missing, empty or wildcard Accept):
    cloud answers headerless PCM then, while the self-hosted API answers its JSON body instead.
    ``rate`` is the ``rate=`` parameter of an ``audio/L16``/``audio/PCMU`` range, if one was given;
    ``rate_param`` is that parameter as written, for callers that check it against their bounds.
    """

    representation: Representation
    format: AudioFormat | None = None
    defaulted: bool = False
    rate: int | None = None
    rate_param: str | None = None

    @property
    def acceptable(self) -> bool:
        return self.representation is not Representation.NOT_ACCEPTABLE


@dataclass(frozen=True, slots=True)
class _MediaRange:
    type: str
    subtype: str
    params: dict[str, str]
    q: float
    position: int

    @property
    def specificity(self) -> int:
        if self.type == "*":
            return 0
        if self.subtype == "*":
            return 1
        return 2 + len(self.params)


def _parse_accept(accept: str) -> list[_MediaRange]:
    """Split an Accept header into media ranges; malformed ranges are skipped, not fatal."""
    ranges: list[_MediaRange] = []
    for position, part in enumerate(accept.split(",")):
        pieces = [p.strip() for p in part.split(";")]
        media = pieces[0].lower()
        if media.count("/") != 1:
            continue
        type_, subtype = (s.strip() for s in media.split("/"))
        if not type_ or not subtype or (type_ == "*" and subtype != "*"):
            continue
        params: dict[str, str] = {}
        q = 1.0
        valid = True
        for piece in pieces[1:]:
            if not piece:
                continue
            key, _, value = piece.partition("=")
            key, value = key.strip().lower(), value.strip().strip('"')
            if key == "q":
                try:
                    q = min(max(float(value), 0.0), 1.0)
                except ValueError:
                    valid = False
            else:
                params[key] = value.lower()
        if valid:
            ranges.append(_MediaRange(type_, subtype, params, q, position))
    return ranges


def _match_audio(rng: _MediaRange) -> AudioFormat | None:
    """The streamable format a concrete range names, honouring a ``codecs`` parameter."""
    fmt = _BY_MEDIA_TYPE.get(f"{rng.type}/{rng.subtype}")
    if fmt is None:
        return None
    codecs = rng.params.get("codecs")
    if codecs is not None:
        wanted = dict(_SPECS[fmt].codec_params).get("codecs")
        if wanted is None or codecs != wanted:
            return None  # e.g. audio/ogg;codecs=vorbis: a type we cannot stream
    return fmt


def _rate_param(rng: _MediaRange) -> int | None:
    try:
        rate = int(rng.params["rate"])
    except (KeyError, ValueError):
        return None
    return rate if rate > 0 else None


def negotiate(accept: str | None, *, allow_json: bool = True, allow_sse: bool = True) -> NegotiationResult:
    """Choose the response representation for an ``Accept`` header.

    Rules (the vendor API contract, Accept rules 1-3):
    - missing, empty or only wildcards (``*/*``, ``audio/*``) -> PCM (``audio/L16``), ``defaulted``;
    - the best-ranked concrete audio type we can stream wins (q-value, then specificity, then order);
    - ``application/json`` / ``text/event-stream`` -> ``JSON`` / ``EVENT_STREAM`` when allowed. The
      facade passes ``allow_json=False``/``allow_sse=False`` for models without those variants, and
      then they count as types we cannot produce;
    - nothing acceptable -> ``NOT_ACCEPTABLE`` (answer 406 with :func:`not_acceptable_message`).

    A header with no parseable media range at all is treated as missing.
    """
    if accept is None or not accept.strip():
        return NegotiationResult(Representation.AUDIO, AudioFormat.PCM, defaulted=True)
    ranges = _parse_accept(accept)
    if not ranges:
        return NegotiationResult(Representation.AUDIO, AudioFormat.PCM, defaulted=True)

    excluded = {fmt for rng in ranges if rng.q == 0.0 and (fmt := _match_audio(rng)) is not None}
    for rng in sorted(ranges, key=lambda r: (-r.q, -r.specificity, r.position)):
        if rng.q == 0.0:
            break
        media = f"{rng.type}/{rng.subtype}"
        if media in ("*/*", "audio/*"):
            fmt = next((f for f in (AudioFormat.PCM, *STREAMING_FORMATS) if f not in excluded), None)
            if fmt is not None:
                return NegotiationResult(Representation.AUDIO, fmt, defaulted=True)
            continue
        if media in ("application/json", "application/*") and allow_json:
            return NegotiationResult(Representation.JSON)
        if media in ("text/event-stream", "text/*") and allow_sse:
            return NegotiationResult(Representation.EVENT_STREAM)
        fmt = _match_audio(rng)
        if fmt is not None and fmt not in excluded:
            return NegotiationResult(Representation.AUDIO, fmt, rate=_rate_param(rng), rate_param=rng.params.get("rate"))
    return NegotiationResult(Representation.NOT_ACCEPTABLE)


def supported_accept_list() -> str:
    """The ``<list>`` of the vendor API contract's 406 message: the six Accept values in its order."""
    return ", ".join(f.accept_value for f in STREAMING_FORMATS if f.accept_value)


def not_acceptable_message(model_id: str) -> str:
    """The vendor API contract's exact 406 text for ``model_id``."""
    return (
        f'modelId "{model_id}" can only be returned as streamed audio; '
        f"set Accept to one of: {supported_accept_list()}"
    )


# --- audioFormat (WebSockets, JSON variant) ------------------------------------------------------

_AUDIO_FORMAT_PARAM: Final[dict[str, AudioFormat]] = {
    "mp3": AudioFormat.MP3,
    "mulaw": AudioFormat.MULAW,
    "pcm": AudioFormat.PCM,
    "ogg": AudioFormat.OGG_OPUS,
    "wav": AudioFormat.WAV,
    "webm": AudioFormat.WEBM_OPUS,
}

#: ``audioFormat`` values per transport, from the vendor's public clients.
JSON_WEBSOCKET_FORMATS: Final[frozenset[AudioFormat]] = frozenset(
    {AudioFormat.MP3, AudioFormat.MULAW, AudioFormat.PCM}
)
RAW_WEBSOCKET_FORMATS: Final[frozenset[AudioFormat]] = JSON_WEBSOCKET_FORMATS | {AudioFormat.OGG_OPUS}
JSON_VARIANT_FORMATS: Final[frozenset[AudioFormat]] = frozenset(
    {AudioFormat.MP3, AudioFormat.WAV, AudioFormat.OGG_OPUS, AudioFormat.MULAW}
)


def from_audio_format_param(value: str, *, allowed: Iterable[AudioFormat] | None = None) -> AudioFormat:
    """Map an ``audioFormat`` value (``mp3``, ``mulaw``, ``pcm``, ``ogg``, ``wav``) to a format.

    Case-insensitive. ``allowed`` restricts the result to one transport's set (for example
    :data:`JSON_WEBSOCKET_FORMATS`). Raises :class:`UnsupportedFormat` otherwise.
    """
    fmt = _AUDIO_FORMAT_PARAM.get(value.strip().lower())
    allowed_set = None if allowed is None else frozenset(allowed)
    if fmt is None or (allowed_set is not None and fmt not in allowed_set):
        raise UnsupportedFormat(f"audioFormat {value} is not supported")
    return fmt


def from_name(value: str) -> AudioFormat:
    """Map a batch job's format name (``mp3``, ``m4b``, ``flac``...) to a format."""
    try:
        return AudioFormat(value.strip().lower())
    except ValueError:
        raise UnsupportedFormat(f"format {value} is not supported") from None


# --- codec rate rules ----------------------------------------------------------------------------

#: libopus encodes only at these rates. Ogg/WebM Opus always *decode* at 48000 Hz; the encode
#: rate only sets the coded bandwidth.
OPUS_RATES: Final[tuple[int, ...]] = (48000, 24000, 16000, 12000, 8000)
#: MPEG-1/2/2.5 Layer III rates (libmp3lame).
MP3_RATES: Final[tuple[int, ...]] = (48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000)


def _nearest(rate: int, valid: tuple[int, ...]) -> int:
    if rate <= 0:
        raise UnsupportedFormat(f"sample rate {rate} is not valid")
    # nearest; on a tie the higher rate, so no bandwidth is lost
    return min(valid, key=lambda v: (abs(v - rate), -v))


def opus_encode_rate(rate: int) -> int:
    """The libopus rate used for input at ``rate``: the nearest of :data:`OPUS_RATES`.

    The nearest rate (ties go up) keeps resampling minimal: 22050 -> 24000, 44100 -> 48000,
    11025 -> 12000. Encoders resample to it internally, so callers feed their native rate.
    """
    return _nearest(rate, OPUS_RATES)


def mp3_encode_rate(rate: int) -> int:
    """The MP3 rate used for input at ``rate``: the nearest of :data:`MP3_RATES` (ties go up)."""
    return _nearest(rate, MP3_RATES)


def encode_rate(fmt: AudioFormat, rate: int) -> int:
    """The rate the bytes of ``fmt`` will carry for input at ``rate``."""
    if fmt in (AudioFormat.WEBM_OPUS, AudioFormat.OGG_OPUS):
        return opus_encode_rate(rate)
    if fmt is AudioFormat.MP3:
        return mp3_encode_rate(rate)
    if rate <= 0:
        raise UnsupportedFormat(f"sample rate {rate} is not valid")
    return rate
