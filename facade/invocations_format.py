"""The ``/invocations`` request and response format: lector's own, shared by the model service
(``facade.model_service``) and its client (``facade.remote_engine``), both HTTP adapters, so it
lives beside them and not in the synthesis core. It needs only numpy and ``speech.types``.

Request (``POST /invocations``, ``Content-Type: application/json``)::

    {"sentences": ["Hello there.", "Second one."],   # required, 1..MAX_SENTENCES strings
     "voice": "joe",                                   # optional; checked against the served voice
     "lengthScale": 1.0,                               # optional; null = the voice's default
     "noiseScale": null, "noiseW": null,               # optional; null = the voice's default
     "encoding": "f32",                                # optional; "f32" (default) or "s16"
     "input": "text"}                                  # optional; "text" (default) or "ipa":
                                                       #   the strings are phonemes, spoken as written

Response (``200``, ``Content-Type: application/x-lector-frames``): a stream of frames, each

    kind      1 byte, ASCII
    length    4 bytes, unsigned big-endian: the payload size
    payload   ``length`` bytes

in this order::

    H  {"sampleRate": 22050, "encoding": "f32", "sentences": 2, "voice": "joe"}      JSON, once
    S  {"index": 0, "text": "...", "samples": 42770,                                 JSON
        "words": [["Hello", 0.035, 0.29], ...]}        (seconds from the sentence start)
    P  little-endian PCM of that sentence, float32 or int16 as the header says       bytes
    ... one S + P pair per sentence, in order ...
    D  {"batches": [3]}                   JSON, last: the batch sizes the sentences ran in
    E  {"error": "message"}               JSON, instead of the rest when inference fails

A stream that ends without ``D`` or ``E`` was cut (the service died): the client treats it as an
error. Errors found before the first frame (bad request, not ready, inference failed on the
first sentence) are plain HTTP answers instead: ``400``/``503``/``500`` with ``{"error": ...}``.

Why length-prefixed frames and not JSON with base64: PCM is most of the bytes, and a frame per
sentence lets the client hand the first sentence on while later ones are still being decoded.
Why float32 by default: the engine's native sample type, so nothing is lost before the caller
resamples; ``s16`` halves the bytes for callers that only re-encode to 16-bit anyway.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from speech.errors import SpeechError
from speech.types import AudioChunk, WordTiming

MEDIA_TYPE: Final = "application/x-lector-frames"
MAX_SENTENCES: Final = 256
MAX_FRAME: Final = 64 * 1024 * 1024  # a guard against a corrupt length, far above one sentence
ENCODINGS: Final = {"f32": "<f4", "s16": "<i2"}
INPUTS: Final = ("text", "ipa")

HEADER, SENTENCE, PCM, DONE, ERROR = b"H", b"S", b"P", b"D", b"E"
_PREFIX = struct.Struct(">cI")


class WireError(SpeechError, ValueError):
    """A request or a frame stream that does not follow this format. Also a ``ValueError``: the
    model service answers it as it answers a body that is not JSON."""


class InvalidInvocation(WireError):
    """A request body the model service refuses (400): the caller's mistake, where any other
    ``WireError`` is a reply the API could not read (a server failure)."""


@dataclass(frozen=True, slots=True)
class InvocationRequest:
    sentences: list[str]
    voice: str | None = None
    length_scale: float | None = None
    noise_scale: float | None = None
    noise_w: float | None = None
    encoding: str = "f32"
    input: str = "text"

    def to_json(self) -> dict[str, object]:
        return {
            "sentences": self.sentences, "voice": self.voice, "lengthScale": self.length_scale,
            "noiseScale": self.noise_scale, "noiseW": self.noise_w, "encoding": self.encoding,
            "input": self.input,
        }


def _optional_number(payload: Mapping[str, Any], name: str) -> float | None:
    value = payload.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInvocation(f"{name} must be a number")
    number = float(value)
    if not np.isfinite(number) or number < 0 or (name == "lengthScale" and number == 0):
        raise InvalidInvocation(f"{name} is out of range")
    return number


def parse_request(payload: object) -> InvocationRequest:
    """Check a decoded JSON body; ``InvalidInvocation`` carries the message for the 400."""
    if not isinstance(payload, dict):
        raise InvalidInvocation("body must be a JSON object")
    sentences = payload.get("sentences")
    if not isinstance(sentences, list) or not sentences or not all(isinstance(s, str) for s in sentences):
        raise InvalidInvocation("sentences must be a non-empty list of strings")
    if len(sentences) > MAX_SENTENCES:
        raise InvalidInvocation(f"at most {MAX_SENTENCES} sentences per request")
    voice = payload.get("voice")
    if voice is not None and not isinstance(voice, str):
        raise InvalidInvocation("voice must be a string")
    encoding = payload.get("encoding") or "f32"
    if encoding not in ENCODINGS:
        raise InvalidInvocation(f"encoding must be one of {sorted(ENCODINGS)}")
    kind = payload.get("input") or "text"
    if kind not in INPUTS:
        raise InvalidInvocation(f"input must be one of {list(INPUTS)}")
    return InvocationRequest(
        sentences=list(sentences), voice=voice or None,
        length_scale=_optional_number(payload, "lengthScale"),
        noise_scale=_optional_number(payload, "noiseScale"),
        noise_w=_optional_number(payload, "noiseW"),
        encoding=encoding,
        input=kind,
    )


# --- encoding (the service) ----------------------------------------------------------------------


def frame(kind: bytes, payload: bytes) -> bytes:
    return _PREFIX.pack(kind, len(payload)) + payload


def json_frame(kind: bytes, obj: object) -> bytes:
    return frame(kind, json.dumps(obj, separators=(",", ":")).encode())


def header_frame(*, sample_rate: int, encoding: str, sentences: int, voice: str | None) -> bytes:
    return json_frame(HEADER, {"sampleRate": sample_rate, "encoding": encoding, "sentences": sentences, "voice": voice})


def chunk_frames(index: int, chunk: AudioChunk, encoding: str) -> bytes:
    """The ``S`` + ``P`` pair for one sentence."""
    if encoding == "s16":
        pcm = chunk.to_int16().tobytes()
    else:
        pcm = np.ascontiguousarray(chunk.samples, dtype="<f4").tobytes()
    meta = {
        "index": index, "text": chunk.text, "samples": len(chunk.samples),
        "words": [[w.word, round(w.start, 4), round(w.end, 4)] for w in chunk.words],
    }
    return json_frame(SENTENCE, meta) + frame(PCM, pcm)


# --- decoding (the client) -----------------------------------------------------------------------


@dataclass(slots=True)
class Decoded:
    """What a complete frame stream carried."""

    sample_rate: int = 0
    encoding: str = "f32"
    voice: str | None = None
    chunks: list[AudioChunk] = field(default_factory=list)
    batches: list[int] = field(default_factory=list)


def iter_frames(pieces: Iterable[bytes]) -> Iterator[tuple[bytes, bytes]]:
    """(kind, payload) from a byte stream cut anywhere; ``WireError`` if it ends mid-frame."""
    buffer = bytearray()
    for piece in pieces:
        buffer += piece
        while len(buffer) >= _PREFIX.size:
            kind, length = _PREFIX.unpack_from(buffer)
            if length > MAX_FRAME:
                raise WireError(f"frame of {length} bytes is over the limit")
            end = _PREFIX.size + length
            if len(buffer) < end:
                break
            yield kind, bytes(buffer[_PREFIX.size:end])
            del buffer[:end]
    if buffer:
        raise WireError("stream ended in the middle of a frame")


def decode(pieces: Iterable[bytes]) -> Decoded:
    """Every sentence of a response; ``WireError`` for an ``E`` frame or a stream cut short."""
    out = Decoded()
    pending: dict[str, Any] | None = None
    for kind, payload in iter_frames(pieces):
        if kind == HEADER:
            head = json.loads(payload)
            out.sample_rate, out.encoding, out.voice = int(head["sampleRate"]), head["encoding"], head.get("voice")
        elif kind == SENTENCE:
            pending = json.loads(payload)
        elif kind == PCM:
            if pending is None or not out.sample_rate:
                raise WireError("PCM frame without its header")
            samples = np.frombuffer(payload, dtype=ENCODINGS[out.encoding])
            if out.encoding == "s16":
                samples = samples.astype(np.float32) / 32767.0
            else:
                samples = samples.astype(np.float32)
            words = [WordTiming(str(w), float(s), float(e)) for w, s, e in pending["words"]]
            out.chunks.append(AudioChunk(samples, out.sample_rate, pending["text"], words))
            pending = None
        elif kind == ERROR:
            raise WireError(json.loads(payload).get("error", "model service error"))
        elif kind == DONE:
            out.batches = list(json.loads(payload).get("batches", []))
            return out
        else:
            raise WireError(f"unknown frame kind {kind!r}")
    raise WireError("stream ended before its last frame")
