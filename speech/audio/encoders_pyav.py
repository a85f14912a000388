"""The codec-backed encoders (Opus in WebM/Ogg, MP3, FLAC, AAC in MP4) through PyAV.

Streaming writes the container into a sink that is deliberately *not* seekable, so FFmpeg's
muxers take their live paths (no seeking back to patch headers), and the sink is drained after
every chunk. Three muxer options make each chunk come out promptly instead of at the end:

- WebM: ``live=1`` (no cues, no seeking) and ``cluster_time_limit=100`` ms: a cluster is written
  when the next packet would make it longer, so all but the last < 100 ms of each chunk leave at
  once; the rest leaves with the next chunk or :meth:`finish`.
- Ogg: ``page_duration=100000`` us, the same rule for pages.
- All: ``flush_packets=1``, so the I/O buffer is flushed per packet instead of every 32 KiB.

Streamed MP3 carries no Xing/LAME header (that needs seeking back at the end), so decoders keep
the encoder's priming delay: about 1105 samples of leading silence (46 ms at 24 kHz). Batch MP3 is
written to a seekable buffer and carries the header, so it decodes to the exact length.

Every PyAV/FFmpeg failure is turned into :class:`EncodeError` in :func:`_av_errors`, the one
boundary where foreign errors are translated.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final, cast

import av
import numpy as np
from av.audio.stream import AudioStream

from speech.audio.formats import AudioFormat, encode_rate
from speech.audio.metadata import Metadata, chapter_dicts
from speech.audio.resample import StreamResampler
from speech.errors import EncodeError, UnsupportedFormat

_FRAME_SECONDS: Final = 1.0  # batch input is fed in frames of this length

#: Leading samples a decoder outputs before the first input sample of a streamed MP3: LAME's
#: encoder delay (576) plus the MP3 decoder's delay (528 + 1). Word timings sent beside a streamed
#: MP3 are early by this much unless shifted; batch MP3 signals it in its LAME header instead.
MP3_PRIMING_SAMPLES: Final = 1105


@dataclass(frozen=True, slots=True)
class _Recipe:
    container: str
    codec: str
    default_bitrate: int | None
    options: dict[str, str] = field(default_factory=dict)  # muxer options
    codec_options: dict[str, str] = field(default_factory=dict)


_STREAM_RECIPES: Final[dict[AudioFormat, _Recipe]] = {
    AudioFormat.WEBM_OPUS: _Recipe(
        "webm", "libopus", 32000, {"live": "1", "cluster_time_limit": "100", "flush_packets": "1"}
    ),
    AudioFormat.OGG_OPUS: _Recipe("ogg", "libopus", 32000, {"page_duration": "100000", "flush_packets": "1"}),
    AudioFormat.MP3: _Recipe("mp3", "libmp3lame", 64000, {"flush_packets": "1"}),
    AudioFormat.AAC: _Recipe("adts", "aac", 64000, {"flush_packets": "1"}, {"aac_coder": "fast"}),
}

_BATCH_RECIPES: Final[dict[AudioFormat, _Recipe]] = {
    AudioFormat.WEBM_OPUS: _Recipe("webm", "libopus", 48000),
    AudioFormat.OGG_OPUS: _Recipe("ogg", "libopus", 48000),
    AudioFormat.MP3: _Recipe("mp3", "libmp3lame", 64000),
    AudioFormat.FLAC: _Recipe("flac", "flac", None),
    AudioFormat.AAC: _Recipe("adts", "aac", 64000, {}, {"aac_coder": "fast"}),
    # faststart moves the index to the front, so players can start before the download ends.
    # FFmpeg's AAC "fast" coder: ~5x the speed of the default "twoloop" on speech (about 200x
    # against 40x real time on one core), and at 64 kb/s mono the quality difference is marginal.
    AudioFormat.M4A: _Recipe("ipod", "aac", 64000, {"movflags": "+faststart"}, {"aac_coder": "fast"}),
    AudioFormat.M4B: _Recipe(
        "ipod", "aac", 64000, {"movflags": "+faststart", "brand": "M4B "}, {"aac_coder": "fast"}
    ),
}

#: Formats whose muxer reads chapter marks (MP4 family). Others ignore ``Metadata.chapters``.
CHAPTER_FORMATS: Final[frozenset[AudioFormat]] = frozenset({AudioFormat.M4A, AudioFormat.M4B})


@contextmanager
def _av_errors(what: str) -> Iterator[None]:
    """Translate PyAV/FFmpeg failures (``FFmpegError``, codec and format lookups) to EncodeError."""
    try:
        yield
    except EncodeError:
        raise
    except (av.FFmpegError, ValueError, OSError) as exc:
        raise EncodeError(f"{what}: {exc}") from exc


class _DrainSink:
    """A write-only, non-seekable byte sink: FFmpeg must stream into it, we empty it per chunk."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def write(self, data: Any) -> int:
        view = memoryview(data)
        self._buffer += view
        return view.nbytes

    def drain(self) -> bytes:
        out = bytes(self._buffer)
        self._buffer.clear()
        return out


class _AvWriter:
    """One output container with one mono audio stream, fed float32 samples at ``sample_rate``.

    Input at a rate the codec cannot take (Opus, MP3) is resampled on the fly to the nearest rate
    it can (:func:`speech.audio.formats.encode_rate`), with state carried across chunks.
    """

    def __init__(
        self,
        fmt: AudioFormat,
        recipe: _Recipe,
        sample_rate: int,
        target: Any,
        *,
        bitrate: int | None = None,
        metadata: Metadata | None = None,
        total_seconds: float | None = None,
    ) -> None:
        self.format = fmt
        self.sample_rate = sample_rate
        self.encode_rate = encode_rate(fmt, sample_rate)
        self._resampler = (
            StreamResampler(sample_rate, self.encode_rate) if self.encode_rate != sample_rate else None
        )
        self._pts = 0
        self._closed = False
        with _av_errors(f"cannot open the {fmt.value} encoder"):
            self._container = av.open(target, mode="w", format=recipe.container, options=dict(recipe.options))
            try:
                self._stream = cast(AudioStream, self._container.add_stream(
                    recipe.codec, rate=self.encode_rate, layout="mono", options=dict(recipe.codec_options)
                ))
                rate = bitrate or recipe.default_bitrate
                if rate:
                    self._stream.bit_rate = rate
                if metadata is not None:
                    self._container.metadata.update(metadata.tags())
                    if fmt in CHAPTER_FORMATS and metadata.chapters:
                        total = total_seconds if total_seconds is not None else 0.0
                        self._container.set_chapters(chapter_dicts(metadata.chapters, total))
                # open the codec and write the header now: a refused setting must fail here,
                # before the caller has committed to a 200 response
                self._container.start_encoding()
            except BaseException:
                self._container.close()
                raise

    def _encode_frame(self, x: np.ndarray | None) -> None:
        if x is None:
            packets = self._stream.encode(None)
        else:
            if len(x) == 0:
                return
            frame = av.AudioFrame.from_ndarray(x.reshape(1, -1), format="flt", layout="mono")
            frame.sample_rate = self.encode_rate
            frame.time_base = Fraction(1, self.encode_rate)
            frame.pts = self._pts
            self._pts += len(x)
            packets = self._stream.encode(frame)
        self._container.mux(packets)

    def write(self, samples: np.ndarray) -> None:
        if self._closed:
            raise EncodeError("encoder used after finish()")
        x = np.ascontiguousarray(np.asarray(samples, dtype=np.float32).reshape(-1))
        if self._resampler is not None:
            x = self._resampler.process(x)
        with _av_errors(f"{self.format.value} encoding failed"):
            self._encode_frame(np.ascontiguousarray(x))

    def finish(self) -> None:
        if self._closed:
            return
        with _av_errors(f"{self.format.value} encoding failed"):
            if self._resampler is not None:
                self._encode_frame(np.ascontiguousarray(self._resampler.flush()))
            self._encode_frame(None)
            self._closed = True
            self._container.close()

    def abort(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._container.close()
        except (av.FFmpegError, ValueError, OSError):
            pass  # the stream is being discarded; nothing left to report to


class PyAVStreamEncoder:
    """A :class:`speech.audio.encoders.StreamEncoder` for WebM Opus, Ogg Opus, MP3 and ADTS AAC."""

    def __init__(self, fmt: AudioFormat, sample_rate: int, *, bitrate: int | None = None) -> None:
        recipe = _STREAM_RECIPES.get(fmt)
        if recipe is None:
            raise UnsupportedFormat(f"no PyAV streaming encoder for {fmt.value}")
        self.format = fmt
        self.sample_rate = sample_rate
        self._sink = _DrainSink()
        self._writer = _AvWriter(fmt, recipe, sample_rate, self._sink, bitrate=bitrate)
        self.encode_rate = self._writer.encode_rate
        #: Samples (at ``encode_rate``) of decoder output that precede the first input sample.
        #: Opus signals its pre-skip in the stream header, so decoders trim it: 0.
        self.priming_samples = MP3_PRIMING_SAMPLES if fmt is AudioFormat.MP3 else 0

    def encode(self, samples: np.ndarray) -> bytes:
        self._writer.write(samples)
        return self._sink.drain()

    def finish(self) -> bytes:
        self._writer.finish()
        return self._sink.drain()

    def close(self) -> None:
        """Drop the stream without finishing it (client gone); safe to call more than once."""
        self._writer.abort()
        self._sink.drain()


def _feed(writer: _AvWriter, samples: np.ndarray, sample_rate: int) -> None:
    step = max(1, int(_FRAME_SECONDS * sample_rate))
    try:
        for start in range(0, len(samples), step):
            writer.write(samples[start : start + step])
        writer.finish()
    except BaseException:
        writer.abort()
        raise


def encode_whole_pyav(
    fmt: AudioFormat,
    samples: np.ndarray,
    sample_rate: int,
    *,
    metadata: Metadata | None = None,
    bitrate: int | None = None,
) -> bytes:
    """A complete file in ``fmt``, written seekably so headers (Xing/LAME, cues, moov) are exact.

    MP4 (``m4a``/``m4b``) goes through a temporary file: FFmpeg's faststart pass reopens the output
    by name, which an in-memory buffer does not have.
    """
    recipe = _BATCH_RECIPES.get(fmt)
    if recipe is None:
        raise UnsupportedFormat(f"no PyAV batch encoder for {fmt.value}")
    x = np.asarray(samples, dtype=np.float32).reshape(-1)
    total = len(x) / float(sample_rate)
    if fmt in CHAPTER_FORMATS:
        with tempfile.TemporaryDirectory(prefix="lector-enc-") as tmp:
            path = os.path.join(tmp, f"out.{fmt.extension}")
            writer = _AvWriter(
                fmt, recipe, sample_rate, path, bitrate=bitrate, metadata=metadata, total_seconds=total
            )
            _feed(writer, x, sample_rate)
            with open(path, "rb") as f:
                return f.read()
    buffer = io.BytesIO()
    writer = _AvWriter(
        fmt, recipe, sample_rate, buffer, bitrate=bitrate, metadata=metadata, total_seconds=total
    )
    _feed(writer, x, sample_rate)
    return buffer.getvalue()
