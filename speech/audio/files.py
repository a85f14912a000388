"""Encoding a whole book incrementally into a file on disk, a block at a time, or in segments.

The batch encoders (``encode_whole``) take the whole work as one array; a ten-hour book is
1.7 GB of float32 at 24 kHz, so assembly feeds a file encoder block by block instead. The file is
seekable, which is what the batch path wants: MP3 gets its Xing/LAME header (exact length,
gapless), MP4 its index moved to the front (``faststart``) and its chapter list, WAV its real
sizes patched in at the end.

The PyAV recipes (codec, bitrate, muxer options) are the batch encoders' own recipes, used
through their writer so the two paths cannot drift apart; no codec detail leaves ``speech.audio``.
"""

from __future__ import annotations

import functools
import json
import struct
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import BinaryIO, Final, Protocol, cast

import av
import numpy as np
from av.audio.codeccontext import AudioCodecContext
from av.audio.stream import AudioStream
from av.packet import PacketSideData

from speech.audio.encoders_pyav import _BATCH_RECIPES, CHAPTER_FORMATS, _AvWriter
from speech.audio.formats import AudioFormat
from speech.audio.metadata import Metadata, chapter_dicts
from speech.audio.pcm import float_to_int16, patch_wav_sizes, wav_header

#: The formats a book file is written in, by the name a job gives.
FILE_FORMATS: Final[dict[str, AudioFormat]] = {
    "mp3": AudioFormat.MP3,
    "opus": AudioFormat.OGG_OPUS,
    "wav": AudioFormat.WAV,
    "flac": AudioFormat.FLAC,
    "m4b": AudioFormat.M4B,
}
_PIECE_SECONDS: Final = 1.0


class FileEncoder(Protocol):
    sample_rate: int

    def write(self, samples: np.ndarray) -> None: ...

    def finish(self) -> None: ...

    def abort(self) -> None: ...


class _WavFile:
    def __init__(self, sample_rate: int, path: Path) -> None:
        self.sample_rate = sample_rate
        self._file: BinaryIO = open(path, "wb")  # noqa: SIM115 - closed in finish/abort
        self._file.write(wav_header(sample_rate))

    def write(self, samples: np.ndarray) -> None:
        self._file.write(float_to_int16(samples).tobytes())

    def finish(self) -> None:
        patch_wav_sizes(self._file)
        self._file.close()

    def abort(self) -> None:
        self._file.close()


class _AvFile:
    def __init__(
        self, fmt: AudioFormat, sample_rate: int, path: Path, metadata: Metadata | None, total_seconds: float,
        bitrate: int | None = None,
    ) -> None:
        self.sample_rate = sample_rate
        self._step = max(1, int(sample_rate * _PIECE_SECONDS))
        self._writer = _AvWriter(
            fmt, _BATCH_RECIPES[fmt], sample_rate, str(path), metadata=metadata, total_seconds=total_seconds,
            bitrate=bitrate,
        )

    def write(self, samples: np.ndarray) -> None:
        for start in range(0, len(samples), self._step):
            self._writer.write(samples[start : start + self._step])

    def finish(self) -> None:
        self._writer.finish()

    def abort(self) -> None:
        self._writer.abort()


def open_file_encoder(
    name: str, sample_rate: int, path: Path, *, metadata: Metadata | None = None, total_seconds: float = 0.0,
    bitrate: int | None = None,
) -> FileEncoder:
    """An incremental encoder writing ``path`` in the format ``FILE_FORMATS[name]``;
    ``total_seconds`` closes the last chapter (MP4); ``bitrate`` (bits/s, constant) overrides the
    recipe's for the lossy codecs (a retailer's 192 kb/s MP3)."""
    fmt = FILE_FORMATS[name]
    if fmt is AudioFormat.WAV:
        return _WavFile(sample_rate, path)
    return _AvFile(fmt, sample_rate, path, metadata, total_seconds, bitrate)


# --- MP3 and AAC in parallel segments -----------------------------------------------------------
#
# LAME runs at about 60-130x real time on one core: a twelve-hour novel is minutes of encoding.
# MP3 and AAC frames are independent enough to be encoded in segments on several cores and
# concatenated, provided the joins are placed so the timeline stays exact:
#
# - an encoder given n samples, n a multiple of the frame size, emits n / frame + E frames (E = 2
#   with the bundled LAME, 1 with FFmpeg's AAC: its priming frame; measured, not assumed, by
#   ``_extra_frames``), its content starting at the same offset D (encoder delay + decoder delay)
#   in its own frames;
# - the file makes decoders skip D once, at the start (MP3: the LAME tag; MP4: the edit list).
#   So segment k's content lands at ``sum(frames of the segments before) * frame``: each join
#   adds exactly E * frame samples.
#
# So every segment but the last gets a multiple of the frame size, and every segment but the first
# starts ``E * frame`` samples later than the timeline would put it: those samples (48 ms at
# 24 kHz for MP3, 43 ms for AAC) are dropped from the silence at the join, and the joined file
# decodes with every sample in place. Joins sit inside long pauses, where both sides are digital
# silence, so the frames that meet there overlap-add nothing audible.

#: Formats encoded in segments, and their codec options beyond the batch recipe's.
SEGMENTED: Final[frozenset[AudioFormat]] = frozenset({AudioFormat.MP3, AudioFormat.M4B})


def frame_size(fmt: AudioFormat, sample_rate: int) -> int:
    """AAC frames carry 1024 samples. MPEG-1 Layer III frames 1152 (32 kHz and up), MPEG-2 and
    2.5 frames 576."""
    if fmt is AudioFormat.M4B:
        return 1024
    return 1152 if sample_rate >= 32000 else 576


@functools.cache
def _extra_frames(fmt: AudioFormat, sample_rate: int) -> int:
    frame = frame_size(fmt, sample_rate)
    encoder = SegmentEncoder(fmt, sample_rate)
    encoder.write(np.zeros(10 * frame, dtype=np.float32))
    return len(encoder.finish().frames) - 10


def join_skip(fmt: AudioFormat, sample_rate: int) -> int:
    """Samples each segment after the first must leave out at its start (see above)."""
    return _extra_frames(fmt, sample_rate) * frame_size(fmt, sample_rate)


@dataclass(frozen=True, slots=True)
class EncodedSegment:
    """A segment's frames as bytes, so they cross from a worker process to the joiner, with
    what the muxer reads besides the bytes: the first packet's timestamp (AAC's starts at minus
    its priming, which the MP4 edit list trims), each packet's duration, and the *skip samples*
    side data of the first and last packets (MP3's encoder delay and end padding, which the
    muxer writes into the LAME tag that makes the decoded length exact)."""

    frames: list[bytes]
    durations: list[int]
    skips: list[tuple[int, bytes]]  # (packet index, side data)
    first_pts: int = 0

    def to_bytes(self) -> bytes:
        """One object for the store (a segment encoded ahead waits there for the join): a
        length-prefixed JSON header, then the frames back to back."""
        header = json.dumps({
            "sizes": [len(f) for f in self.frames], "durations": self.durations,
            "skips": [[i, data.hex()] for i, data in self.skips], "first_pts": self.first_pts,
        }).encode()
        return struct.pack("<I", len(header)) + header + b"".join(self.frames)

    @classmethod
    def from_bytes(cls, raw: bytes) -> EncodedSegment:
        (length,) = struct.unpack_from("<I", raw)
        header = json.loads(raw[4 : 4 + length])
        frames, at = [], 4 + length
        for size in header["sizes"]:
            frames.append(raw[at : at + size])
            at += size
        if at != len(raw):
            raise ValueError(f"an encoded segment of {len(raw)} bytes whose header accounts for {at}")
        skips = [(int(i), bytes.fromhex(data)) for i, data in header["skips"]]
        return cls(frames, [int(d) for d in header["durations"]], skips, int(header["first_pts"]))

    @classmethod
    def of(cls, packets: list[av.Packet[AudioStream]]) -> EncodedSegment:
        skips = [
            (i, bytes(p.get_sidedata("skip_samples"))) for i, p in enumerate(packets) if p.has_sidedata("skip_samples")
        ]
        first = int(packets[0].pts or 0) if packets else 0
        return cls([bytes(p) for p in packets], [int(p.duration or 0) for p in packets], skips, first)


class SegmentEncoder:
    """One segment's frames, encoded on whatever thread or process calls it."""

    def __init__(self, fmt: AudioFormat, sample_rate: int) -> None:
        if fmt not in SEGMENTED:
            raise ValueError(f"{fmt.value} is not encoded in segments")
        recipe = _BATCH_RECIPES[fmt]
        self.sample_rate = sample_rate
        self._context = cast(AudioCodecContext, av.CodecContext.create(recipe.codec, "w"))
        self._context.sample_rate = sample_rate
        self._context.layout = "mono"
        self._context.format = "fltp"
        self._context.bit_rate = int(recipe.default_bitrate or 64000)
        self._context.time_base = Fraction(1, sample_rate)
        if recipe.codec_options:
            self._context.options = dict(recipe.codec_options)
        self._context.open()
        self._packets: list[av.Packet[AudioStream]] = []
        self._pts = 0

    def write(self, samples: np.ndarray) -> None:
        step = max(1, int(self.sample_rate * _PIECE_SECONDS))
        for start in range(0, len(samples), step):
            piece = np.ascontiguousarray(samples[start : start + step], dtype=np.float32)
            frame = av.AudioFrame.from_ndarray(piece.reshape(1, -1), format="fltp", layout="mono")
            frame.sample_rate = self.sample_rate
            frame.time_base = Fraction(1, self.sample_rate)
            frame.pts = self._pts
            self._pts += len(piece)
            self._packets.extend(self._context.encode(frame))

    def finish_packets(self) -> list[av.Packet[AudioStream]]:
        self._packets.extend(self._context.encode(None))
        packets, self._packets = self._packets, []
        return packets

    def finish(self) -> EncodedSegment:
        return EncodedSegment.of(self.finish_packets())


class SegmentJoiner:
    """The output file with the segments' frames in order. MP3: ID3 tags and a Xing/LAME header
    (FFmpeg's muxer counts the frames and takes delay and end padding from the packets' side
    data). MP4 (m4b): tags, chapters, and an edit list that trims the first segment's priming."""

    def __init__(
        self, fmt: AudioFormat, sample_rate: int, path: Path, *, metadata: Metadata | None, total_seconds: float = 0.0
    ) -> None:
        recipe = _BATCH_RECIPES[fmt]
        self._fmt = fmt
        self._frame = frame_size(fmt, sample_rate)
        self._rate = sample_rate
        self._skip_side: PacketSideData | None = None
        self._time_base = Fraction(1, sample_rate)
        self._container = av.open(str(path), mode="w", format=recipe.container, options=dict(recipe.options))
        try:
            self._stream = cast(AudioStream, self._container.add_stream(
                recipe.codec, rate=sample_rate, layout="mono", options=dict(recipe.codec_options)
            ))
            self._stream.bit_rate = int(recipe.default_bitrate or 64000)
            if metadata is not None:
                self._container.metadata.update(metadata.tags())
                if fmt in CHAPTER_FORMATS and metadata.chapters:
                    self._container.set_chapters(chapter_dicts(metadata.chapters, total_seconds))
            self._container.start_encoding()  # the muxer reads the codec's delay and extradata here
        except BaseException:
            self._container.close()
            raise
        self._pts: int | None = None

    def add(self, segment: EncodedSegment) -> None:
        packets = [av.Packet(frame) for frame in segment.frames]
        for packet, duration in zip(packets, segment.durations, strict=True):
            packet.duration = duration
        for index, data in segment.skips:
            packets[index].set_sidedata(self._skip_samples(data))  # copied into the packet
        if self._pts is None:  # MP3's muxer wants 0; AAC's first packet is its priming, before 0
            self._pts = segment.first_pts if self._fmt is AudioFormat.M4B else 0
        for packet in packets:
            packet.stream = self._stream
            packet.time_base = self._time_base
            packet.pts = packet.dts = self._pts
            self._pts += self._frame
            self._container.mux(packet)

    def _skip_samples(self, data: bytes) -> PacketSideData:
        """PyAV copies side data but cannot make it from bytes: this one comes from a real encode,
        and its bytes are overwritten before each copy."""
        if self._skip_side is None:
            encoder = SegmentEncoder(AudioFormat.MP3, self._rate)
            encoder.write(np.zeros(frame_size(AudioFormat.MP3, self._rate), dtype=np.float32))
            self._skip_side = encoder.finish_packets()[-1].get_sidedata("skip_samples")
        self._skip_side.update(data)
        return self._skip_side

    def finish(self) -> None:
        self._container.close()

    def abort(self) -> None:
        try:
            self._container.close()
        except (av.FFmpegError, ValueError, OSError):
            pass

