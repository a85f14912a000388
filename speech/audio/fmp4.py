"""Fragmented MP4 (ISO BMFF) for HLS and MediaSource: one init segment, then media segments.

Written box by box rather than through FFmpeg's MP4 muxer because what a live playlist needs is
exact control of three things the muxer decides for itself: each fragment's decode time
(``tfdt``: where a segment sits on the book's timeline, whichever process made it and whenever),
each sample's duration (the book's last frame is short, and no priming frame or edit list is
written: a segment's first sample is the timeline's sample at ``tfdt``) and the bytes (the same
packets always give the same segment, so a repeat writes what a listener may already hold).

Layout (ISO/IEC 14496-12 and 14496-14), one audio track, id 1, timescale = the sample rate:

- init: ``ftyp``, ``moov`` (``mvhd``, ``trak`` with an ``mp4a`` sample entry whose ``esds``
  carries the AAC AudioSpecificConfig, empty sample tables, ``mvex``/``trex``).
- media: ``moof`` (``mfhd`` sequence number, ``traf`` with ``tfhd`` default-base-is-moof,
  ``tfdt`` version 1, ``trun`` with data offset, per-sample durations and sizes), then ``mdat``.

A MediaSource takes them as ``audio/mp4; codecs="mp4a.40.2"`` (AAC-LC; the console's live.js).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

TRACK_ID: Final = 1


@dataclass(frozen=True, slots=True)
class Sample:
    """One coded frame and how many samples of the timeline it stands for."""

    data: bytes
    duration: int


def _box(kind: bytes, *parts: bytes) -> bytes:
    body = b"".join(parts)
    return struct.pack(">I4s", 8 + len(body), kind) + body


def _full_box(kind: bytes, version: int, flags: int, *parts: bytes) -> bytes:
    return _box(kind, struct.pack(">I", (version << 24) | flags), *parts)


def _descriptor(tag: int, body: bytes) -> bytes:
    """An MPEG-4 descriptor with its length in the four-byte form every reader accepts."""
    size = len(body)
    if size >= 1 << 28:
        raise ValueError("descriptor too large")
    length = bytes([0x80 | (size >> 21) & 0x7F, 0x80 | (size >> 14) & 0x7F, 0x80 | (size >> 7) & 0x7F, size & 0x7F])
    return bytes([tag]) + length + body


_MATRIX: Final = struct.pack(">9I", 0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000)


def _esds(config: bytes, bit_rate: int) -> bytes:
    decoder_specific = _descriptor(0x05, config)
    # objectTypeIndication 0x40 (MPEG-4 audio); streamType 5 (audio) << 2 | reserved bit
    decoder_config = _descriptor(
        0x04, struct.pack(">BB", 0x40, 0x15) + (0).to_bytes(3, "big") + struct.pack(">II", bit_rate, bit_rate)
        + decoder_specific,
    )
    sl_config = _descriptor(0x06, b"\x02")
    es = _descriptor(0x03, struct.pack(">HB", TRACK_ID, 0) + decoder_config + sl_config)
    return _full_box(b"esds", 0, 0, es)


def init_segment(sample_rate: int, config: bytes, *, channels: int = 1, bit_rate: int = 0) -> bytes:
    """The init segment for AAC at ``sample_rate`` whose AudioSpecificConfig is ``config``
    (the encoder's extradata)."""
    if not 0 < sample_rate < 1 << 16:
        raise ValueError(f"sample rate {sample_rate} does not fit an mp4a sample entry")
    ftyp = _box(b"ftyp", b"iso6", struct.pack(">I", 0), b"iso6", b"mp41", b"cmfc")
    mvhd = _full_box(
        b"mvhd", 0, 0, struct.pack(">IIII", 0, 0, sample_rate, 0), struct.pack(">IH", 0x00010000, 0x0100),
        bytes(10), _MATRIX, bytes(24), struct.pack(">I", TRACK_ID + 1),
    )
    tkhd = _full_box(
        b"tkhd", 0, 0x3, struct.pack(">IIIII", 0, 0, TRACK_ID, 0, 0), bytes(8),
        struct.pack(">hhHH", 0, 0, 0x0100, 0), _MATRIX, struct.pack(">II", 0, 0),
    )
    mdhd = _full_box(b"mdhd", 0, 0, struct.pack(">IIII", 0, 0, sample_rate, 0), struct.pack(">HH", 0x55C4, 0))  # und
    hdlr = _full_box(b"hdlr", 0, 0, struct.pack(">I", 0), b"soun", bytes(12), b"SoundHandler\x00")
    mp4a = _box(
        b"mp4a", bytes(6), struct.pack(">H", 1), bytes(8), struct.pack(">HHHH", channels, 16, 0, 0),
        struct.pack(">I", sample_rate << 16), _esds(config, bit_rate),
    )
    stbl = _box(
        b"stbl",
        _full_box(b"stsd", 0, 0, struct.pack(">I", 1), mp4a),
        _full_box(b"stts", 0, 0, struct.pack(">I", 0)),
        _full_box(b"stsc", 0, 0, struct.pack(">I", 0)),
        _full_box(b"stsz", 0, 0, struct.pack(">II", 0, 0)),
        _full_box(b"stco", 0, 0, struct.pack(">I", 0)),
    )
    dinf = _box(b"dinf", _full_box(b"dref", 0, 0, struct.pack(">I", 1), _full_box(b"url ", 0, 1)))
    minf = _box(b"minf", _full_box(b"smhd", 0, 0, struct.pack(">hH", 0, 0)), dinf, stbl)
    trak = _box(b"trak", tkhd, _box(b"mdia", mdhd, hdlr, minf))
    trex = _full_box(b"trex", 0, 0, struct.pack(">IIIII", TRACK_ID, 1, 0, 0, 0))
    return ftyp + _box(b"moov", mvhd, trak, _box(b"mvex", trex))


_TRUN_FLAGS: Final = 0x000001 | 0x000100 | 0x000200  # data offset, sample durations, sample sizes
_TFHD_DEFAULT_BASE_IS_MOOF: Final = 0x020000


def media_segment(sequence: int, decode_time: int, samples: Sequence[Sample]) -> bytes:
    """One fragment: ``samples`` in order, the first at ``decode_time`` (in samples of the
    timeline). ``sequence`` is the fragment's number, from 1."""
    if not samples:
        raise ValueError("a media segment needs at least one sample")
    entries = b"".join(struct.pack(">II", s.duration, len(s.data)) for s in samples)

    def moof(data_offset: int) -> bytes:
        trun = _full_box(b"trun", 0, _TRUN_FLAGS, struct.pack(">Ii", len(samples), data_offset), entries)
        traf = _box(
            b"traf",
            _full_box(b"tfhd", 0, _TFHD_DEFAULT_BASE_IS_MOOF, struct.pack(">I", TRACK_ID)),
            _full_box(b"tfdt", 1, 0, struct.pack(">Q", decode_time)),
            trun,
        )
        return _box(b"moof", _full_box(b"mfhd", 0, 0, struct.pack(">I", sequence)), traf)

    size = len(moof(0))  # the offset's value does not change the box's size
    return moof(size + 8) + _box(b"mdat", *(s.data for s in samples))
