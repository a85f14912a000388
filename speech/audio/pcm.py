"""The headerless and WAV encoders, in numpy: L16, G.711 mu-law and RIFF WAVE.

They are a few lines each and need no codec library (ARCHITECTURE, Decisions: Audio). They are
also the latency floor: every ``encode`` returns exactly the bytes for the samples it was given.
"""

from __future__ import annotations

import struct
from typing import BinaryIO, Final

import numpy as np

from speech.audio.formats import AudioFormat
from speech.errors import EncodeError

#: The size field a streamed WAV carries: the length is not known when the header is sent.
#: Players and ffmpeg read such a file to its end.
STREAMING_SIZE: Final = 0xFFFFFFFF

_WAV_HEADER_BYTES: Final = 44


def float_to_int16(samples: np.ndarray) -> np.ndarray:
    """Float samples in [-1, 1] to little-endian int16, rounded (not truncated) and clipped."""
    x = np.asarray(samples, dtype=np.float32).reshape(-1)
    scaled = np.rint(np.clip(x, -1.0, 1.0) * 32767.0)
    out: np.ndarray = scaled.astype("<i2")
    return out


_SEG_UEND: Final = np.array([0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF], dtype=np.int32)
_ULAW_CLIP: Final = 8159
_ULAW_BIAS: Final = 0x84 >> 2


def lin2ulaw(pcm16: np.ndarray) -> np.ndarray:
    """G.711 mu-law of 16-bit samples: the ITU/Sun ``g711.c`` algorithm that ``audioop`` uses.

    The 16-bit value is reduced to 14 bits by an arithmetic shift, the magnitude clipped to 8159,
    biased by 33, and coded as sign | segment | 4 mantissa bits, all bits inverted.
    """
    v = np.asarray(pcm16, dtype=np.int16).astype(np.int32) >> 2
    negative = v < 0
    mask = np.where(negative, 0x7F, 0xFF).astype(np.int32)
    mag = np.minimum(np.where(negative, -v, v), _ULAW_CLIP) + _ULAW_BIAS
    seg = np.searchsorted(_SEG_UEND, mag, side="left").astype(np.int32)
    in_range = seg < 8
    seg_c = np.minimum(seg, 7)
    uval = (seg_c << 4) | ((mag >> (seg_c + 1)) & 0xF)
    out = np.where(in_range, uval ^ mask, 0x7F ^ mask)
    return out.astype(np.uint8)


def ulaw2lin(ulaw: np.ndarray) -> np.ndarray:
    """Decode G.711 mu-law bytes to int16 (the inverse used by tests and by stitching tools)."""
    u = ~np.asarray(ulaw, dtype=np.uint8).astype(np.int32) & 0xFF
    t = ((u & 0x0F) << 3) + 0x84
    t <<= (u & 0x70) >> 4
    return np.where(u & 0x80, 0x84 - t, t - 0x84).astype(np.int16)


def wav_header(sample_rate: int, num_samples: int | None = None, *, channels: int = 1) -> bytes:
    """A 44-byte RIFF WAVE header for 16-bit little-endian PCM.

    ``num_samples=None`` writes :data:`STREAMING_SIZE` in both size fields, for streams whose
    length is unknown when the header goes out.
    """
    block_align = channels * 2
    if num_samples is None:
        data_size = riff_size = STREAMING_SIZE
    else:
        data_size = num_samples * block_align
        riff_size = 36 + data_size
        if riff_size > 0xFFFFFFFF:
            raise EncodeError("WAV cannot hold more than 4 GiB of audio")
    return struct.pack(
        "<4sI4s4sIHHIIHH4sI",
        b"RIFF",
        riff_size,
        b"WAVE",
        b"fmt ",
        16,
        1,  # PCM
        channels,
        sample_rate,
        sample_rate * block_align,
        block_align,
        16,
        b"data",
        data_size,
    )


def patch_wav_sizes(f: BinaryIO) -> None:
    """Replace the streaming size fields of a WAV written to a seekable file with the real ones.

    For a streamed WAV that was also kept on disk (the batch path, or a recorded stream).
    """
    end = f.seek(0, 2)
    data_size = end - _WAV_HEADER_BYTES
    if data_size < 0:
        raise EncodeError("not a WAV stream: shorter than its header")
    f.seek(4)
    f.write(struct.pack("<I", min(end - 8, 0xFFFFFFFF)))
    f.seek(40)
    f.write(struct.pack("<I", min(data_size, 0xFFFFFFFF)))
    f.seek(end)


class PcmStreamEncoder:
    """``audio/L16``: raw int16 little-endian, no header."""

    format: AudioFormat = AudioFormat.PCM

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        self.encode_rate = sample_rate
        self.priming_samples = 0

    def encode(self, samples: np.ndarray) -> bytes:
        return float_to_int16(samples).tobytes()

    def finish(self) -> bytes:
        return b""

    def close(self) -> None:
        pass


class MulawStreamEncoder(PcmStreamEncoder):
    """``audio/PCMU``: one G.711 mu-law byte per sample, no header."""

    format = AudioFormat.MULAW

    def encode(self, samples: np.ndarray) -> bytes:
        return lin2ulaw(float_to_int16(samples)).tobytes()


class WavStreamEncoder(PcmStreamEncoder):
    """``audio/wav``: the header with streaming sizes comes with the first chunk, then L16 data."""

    format = AudioFormat.WAV

    def __init__(self, sample_rate: int) -> None:
        super().__init__(sample_rate)
        self._header_sent = False

    def _header(self) -> bytes:
        if self._header_sent:
            return b""
        self._header_sent = True
        return wav_header(self.sample_rate)

    def encode(self, samples: np.ndarray) -> bytes:
        return self._header() + float_to_int16(samples).tobytes()

    def finish(self) -> bytes:
        return self._header()  # an empty stream is still a valid WAV


def encode_wav(samples: np.ndarray, sample_rate: int) -> bytes:
    """A whole WAV file with exact size fields."""
    pcm = float_to_int16(samples)
    return wav_header(sample_rate, len(pcm)) + pcm.tobytes()
