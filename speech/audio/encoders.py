"""Encoders: streaming (one call per synthesized chunk) and whole-file (the batch path).

A streaming encoder turns each float32 chunk into the bytes that are ready *now*, so the first
sentence can be on the wire while the second is synthesized; ``finish`` returns the tail (codec
delay, last page or cluster). The headerless formats and WAV are plain numpy
(:mod:`speech.audio.pcm`); Opus and MP3 go through PyAV (:mod:`speech.audio.encoders_pyav`).

Rates: every encoder takes samples at the ``sample_rate`` it was opened with. Where the codec
cannot run at that rate (Opus: 48/24/16/12/8 kHz; MP3: the MPEG rates) the encoder resamples
internally and seamlessly to the nearest rate it can (``encode_rate``); callers never need to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

import numpy as np

from speech.audio.encoders_pyav import PyAVStreamEncoder, encode_whole_pyav
from speech.audio.formats import AudioFormat
from speech.audio.metadata import Metadata
from speech.audio.pcm import (
    MulawStreamEncoder,
    PcmStreamEncoder,
    WavStreamEncoder,
    encode_wav,
    float_to_int16,
    lin2ulaw,
)
from speech.errors import UnsupportedFormat


@runtime_checkable
class StreamEncoder(Protocol):
    """Incremental encoder for one response stream (one mono stream, fixed rate)."""

    format: AudioFormat
    sample_rate: int  # the rate ``encode`` expects
    encode_rate: int  # the rate the bytes carry (differs for Opus/MP3 at odd input rates)
    priming_samples: int  # decoder output before the first input sample (streamed MP3: 1105)

    def encode(self, samples: np.ndarray) -> bytes:
        """Feed float32 mono samples in [-1, 1]; return whatever encoded bytes are ready now."""
        ...

    def finish(self) -> bytes:
        """End the stream and return the remaining bytes; the encoder is done afterwards."""
        ...

    def close(self) -> None:
        """Abandon the stream (client gone) and free codec resources; idempotent."""
        ...


def open_encoder(fmt: AudioFormat, sample_rate: int, *, bitrate: int | None = None) -> StreamEncoder:
    """A streaming encoder for one of the six streamable formats, or AAC in ADTS frames.

    ``bitrate`` (bits/s) applies to Opus, MP3 and AAC; defaults are 32 kb/s Opus, 64 kb/s MP3 and AAC.
    Raises :class:`UnsupportedFormat` for batch-only formats, :class:`EncodeError` if the codec
    library refuses the settings.
    """
    if sample_rate <= 0:
        raise UnsupportedFormat(f"sample rate {sample_rate} is not valid")
    if fmt is AudioFormat.PCM:
        return PcmStreamEncoder(sample_rate)
    if fmt is AudioFormat.MULAW:
        return MulawStreamEncoder(sample_rate)
    if fmt is AudioFormat.WAV:
        return WavStreamEncoder(sample_rate)
    if fmt in (AudioFormat.WEBM_OPUS, AudioFormat.OGG_OPUS, AudioFormat.MP3, AudioFormat.AAC):
        return PyAVStreamEncoder(fmt, sample_rate, bitrate=bitrate)
    raise UnsupportedFormat(f"{fmt.value} cannot be streamed")


def encode_whole(
    fmt: AudioFormat,
    samples: np.ndarray,
    sample_rate: int,
    *,
    metadata: Metadata | Mapping[str, str | None] | None = None,
    bitrate: int | None = None,
) -> bytes:
    """A complete file of ``samples`` in ``fmt`` (every format, batch-only ones included).

    ``metadata`` is a :class:`Metadata` or plain tags (``{"title": ..., "artist": ...}``).

    ``metadata`` tags are written where the container has tags (MP3 ID3v2, FLAC, Ogg, WebM, MP4);
    its ``chapters`` are written only by M4A/M4B (MP4 chapter list, read by Apple Books, VLC and
    FFmpeg). WAV and the headerless formats carry no tags.
    """
    if sample_rate <= 0:
        raise UnsupportedFormat(f"sample rate {sample_rate} is not valid")
    x = np.asarray(samples, dtype=np.float32).reshape(-1)
    if metadata is not None and not isinstance(metadata, Metadata):
        metadata = Metadata.from_mapping(metadata)
    if fmt is AudioFormat.PCM:
        return float_to_int16(x).tobytes()
    if fmt is AudioFormat.MULAW:
        return lin2ulaw(float_to_int16(x)).tobytes()
    if fmt is AudioFormat.WAV:
        return encode_wav(x, sample_rate)
    return encode_whole_pyav(fmt, x, sample_rate, metadata=metadata, bitrate=bitrate)
