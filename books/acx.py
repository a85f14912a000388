"""Delivery to ACX's specification (``"delivery": "acx"``): the book as one MP3 per chapter, a
retail sample, and a compliance report, all in one zip.

The job renders a lossless master first (WAV, 44.1 kHz, each chapter at the loudness target,
true peak under the ceiling: ``scheduler.assembly`` with the parameters ``intake`` sets for a
delivery). Each file is cut from it, trimmed to its speech, given :data:`HEAD_S` of room tone
before and :data:`TAIL_S` after (``speech.audio.retail``: a pink-noise bed that also lies under
the pauses, since ACX refuses digital silence), set to :data:`TARGET_RMS_DBFS` RMS over the whole
file (ACX measures RMS unweighted, room tone included), peak limited with the codec's headroom
and encoded as 192 kb/s CBR MP3 at 44.1 kHz. Every file is then decoded and measured; a file
that misses a level rule is made again with a corrected gain and a lower limiter ceiling.

Chapters longer than :data:`MAX_FILE_S` are split at the paragraph pause nearest under the limit.
The retail sample is the start of the first chapter after the opening credits, 1 to 5 minutes
long, cut in a pause.
"""

from __future__ import annotations

import json
import math
import re
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import av
import numpy as np

from books.rendering import limit_peaks
from speech.audio import Chapter, Metadata, decoded_blocks, open_file_encoder
from speech.audio.retail import ROOM_TONE_DBFS, RoomTone, Rule, RuleMeter

RATE: Final = 44100
BITRATE: Final = 192_000
TARGET_LUFS: Final = -20.0  # the master's chapters: lands the files' RMS near TARGET_RMS_DBFS
TARGET_RMS_DBFS: Final = -20.5  # the middle of ACX's -23 to -18 dB
RMS_RANGE: Final = (-23.0, -18.0)
PEAK_DBFS: Final = -3.0
NOISE_FLOOR_DBFS: Final = -60.0
HEAD_S: Final = 0.75  # ACX: 0.5 to 1 s
HEAD_RANGE: Final = (0.5, 1.0)
TAIL_S: Final = 2.5  # ACX: 1 to 5 s
TAIL_RANGE: Final = (1.0, 5.0)
MAX_FILE_S: Final = 120 * 60.0
SAMPLE_RANGE_S: Final = (60.0, 300.0)
SAMPLE_S: Final = 180.0  # the retail sample aims at three minutes
CODEC_HEADROOM_DB: Final = 0.5
MAX_TRIES: Final = 3
_EDGE_DBFS: Final = -50.0  # trimming: the first and last samples this loud are the speech's edges
_BLOCK: Final = RATE * 10
_QUIET: Final = 1e-4  # a master sample this small is a pause's digital silence
OPENING, CLOSING = "Opening Credits", "Closing Credits"


@dataclass(frozen=True, slots=True)
class Piece:
    """One delivered file: a stretch of the master, in samples."""

    name: str
    title: str
    start: int
    end: int
    sample: bool = False


@dataclass
class Package:
    zip_path: Path
    report: dict[str, Any]
    files: list[Path] = field(default_factory=list)


def _file_name(number: int, title: str) -> str:
    safe = re.sub(r"[^\w\-() ]+", "", title).strip()[:80] or "Chapter"
    return f"{number:02d} {safe}.mp3"


def pieces(chapters: Sequence[Chapter], cuts_s: Sequence[float], total: int, *, max_file_s: float = MAX_FILE_S) -> list[Piece]:
    """One piece per chapter, a chapter longer than ``max_file_s`` (less the room tone) split at
    the latest paragraph pause (``cuts_s``) that keeps the part under it."""
    limit = int((max_file_s - HEAD_S - TAIL_S) * RATE)
    cuts = sorted(int(c * RATE) for c in cuts_s)
    out: list[tuple[str, int, int]] = []
    marks = list(chapters) or [Chapter("Book", 0.0, total / RATE)]
    for chapter in marks:
        start = int(round(chapter.start * RATE))
        end = min(total, int(round((chapter.end if chapter.end is not None else total / RATE) * RATE)))
        part = 1
        while end - start > limit:
            inside = [c for c in cuts if start < c <= start + limit]
            cut = inside[-1] if inside else start + limit  # no pause at all: cut at the limit
            out.append((chapter.title if part == 1 else f"{chapter.title} (part {part})", start, cut))
            start, part = cut, part + 1
        out.append((chapter.title if part == 1 else f"{chapter.title} (part {part})", start, end))
    return [Piece(_file_name(i, title), title, a, b) for i, (title, a, b) in enumerate(out)]


def _master(path: Path) -> np.ndarray:
    """The master WAV's samples, mapped from disk (a book does not fit in memory as floats)."""
    offset = _data_offset(path)
    return np.memmap(path, dtype="<i2", mode="r", offset=offset)


def _data_offset(path: Path) -> int:
    """Where the samples start: after the RIFF chunks before ``data`` (``fmt ``, and a ``LIST``
    of tags when the master carries a title), each walked by its size."""
    with open(path, "rb") as f:
        if f.read(12)[:4] != b"RIFF":
            raise ValueError(f"{path.name} is not a WAV file")
        while header := f.read(8):
            if len(header) < 8:
                break
            size = int.from_bytes(header[4:], "little")
            if header[:4] == b"data":
                return f.tell()
            f.seek(size + (size & 1), 1)  # chunks are padded to an even size
    raise ValueError(f"{path.name} has no data chunk")


def _blocks(master: np.ndarray, start: int, end: int) -> Iterator[np.ndarray]:
    for a in range(start, end, _BLOCK):
        yield master[a : min(end, a + _BLOCK)].astype(np.float32) / 32767.0


def _speech_edges(master: np.ndarray, start: int, end: int) -> tuple[int, int]:
    """The first and one past the last sample of speech in ``start..end`` (the whole: none)."""
    threshold = 10 ** (_EDGE_DBFS / 20) * 32767
    first = last = None
    for a in range(start, end, _BLOCK):
        loud = np.flatnonzero(np.abs(master[a : min(end, a + _BLOCK)].astype(np.int32)) > threshold)
        if len(loud):
            first = a + int(loud[0]) if first is None else first
            last = a + int(loud[-1]) + 1
    return (start, end) if first is None or last is None else (first, last)


def sample_piece(master: np.ndarray, chapters: Sequence[Chapter], total: int) -> Piece:
    """The retail sample: from the first chapter after the opening credits, about
    :data:`SAMPLE_S` long (at least the minimum where the book has it), ending in a pause."""
    body = [c for c in chapters if c.title not in (OPENING, CLOSING)] or list(chapters)
    start = int(round(body[0].start * RATE)) if body else 0
    ends = [int(round((c.end or total / RATE) * RATE)) for c in body]
    end = min(total, max(ends) if ends else total)
    if body and [c for c in chapters if c.title == CLOSING]:
        end = min(end, int(round(next(c for c in chapters if c.title == CLOSING).start * RATE)))
    start, _ = _speech_edges(master, start, end)
    low, aim = start + int(SAMPLE_RANGE_S[0] * RATE), start + int(SAMPLE_S * RATE)
    if end <= aim:
        return Piece("Retail Sample.mp3", "Retail Sample", start, end, sample=True)
    window = int(0.2 * RATE)
    stretch = np.abs(master[low:aim].astype(np.int32)) <= _QUIET * 32767
    counts = np.concatenate([[0], np.cumsum(stretch, dtype=np.int64)])
    quiet = np.flatnonzero(counts[window:] - counts[:-window] == window)  # 200 ms of silence from here
    cut = low + int(quiet[-1]) + window // 2 if len(quiet) else aim
    return Piece("Retail Sample.mp3", "Retail Sample", start, cut, sample=True)


def _write(master: np.ndarray, piece: Piece, path: Path, gain: float, ceiling_dbfs: float, metadata: Metadata) -> None:
    speech_start, speech_end = _speech_edges(master, piece.start, piece.end)
    tone = RoomTone(RATE, seed=piece.start)
    encoder = open_file_encoder("mp3", RATE, path, metadata=metadata, bitrate=BITRATE)
    ceiling = 10 ** (ceiling_dbfs / 20)
    try:
        encoder.write(tone.take(int(HEAD_S * RATE)))
        for block in _blocks(master, speech_start, speech_end):
            encoder.write(limit_peaks(block * np.float32(gain), RATE, ceiling) + tone.take(len(block)))
        encoder.write(tone.take(int(TAIL_S * RATE)))
        encoder.finish()
    except BaseException:
        encoder.abort()
        raise


def _first_gain(master: np.ndarray, piece: Piece) -> float:
    """The gain that puts the file's RMS, room tone included, at :data:`TARGET_RMS_DBFS`."""
    a, b = _speech_edges(master, piece.start, piece.end)
    squares = sum(float(np.dot(x, x)) for x in _blocks(master, a, b))
    n = (b - a) + int(HEAD_S * RATE) + int(TAIL_S * RATE)
    wanted = n * (10 ** (TARGET_RMS_DBFS / 10) - 10 ** (ROOM_TONE_DBFS / 10))
    return math.sqrt(wanted / squares) if squares > 0 else 1.0


def measure(path: Path, *, sample: bool) -> list[Rule]:
    """The file's rules as lector's meter reads them from the decoded MP3."""
    with av.open(str(path)) as container:
        stream = container.streams.audio[0]
        bitrate, rate = float(stream.bit_rate or 0) / 1000, int(stream.codec_context.sample_rate)
    meter = RuleMeter(rate)
    for _, block in decoded_blocks(path):
        meter.add(block)
    head, tail = meter.room_tone_s()
    duration = meter.duration_s
    return [
        Rule("RMS", meter.rms_dbfs(), RMS_RANGE[0], RMS_RANGE[1], "dBFS"),
        Rule("peak", meter.peak_dbfs(), None, PEAK_DBFS, "dBFS"),
        Rule("noise floor", meter.noise_floor_dbfs(), None, NOISE_FLOOR_DBFS, "dBFS"),
        Rule("room tone at the head", head, HEAD_RANGE[0], HEAD_RANGE[1], "s"),
        Rule("room tone at the tail", tail, TAIL_RANGE[0], TAIL_RANGE[1], "s"),
        Rule("duration", duration / 60, SAMPLE_RANGE_S[0] / 60 if sample else None,
             (SAMPLE_RANGE_S[1] if sample else MAX_FILE_S) / 60, "min"),
        Rule("sample rate", float(rate), RATE, RATE, "Hz"),
        Rule("bit rate (CBR)", bitrate, BITRATE / 1000, BITRATE / 1000, "kb/s"),
    ]


def _deliver(master: np.ndarray, piece: Piece, path: Path, metadata: Metadata) -> list[Rule]:
    """Write the file, measure it, and make it again while a level rule misses (at most
    :data:`MAX_TRIES` times): the limiter ceiling drops by a peak's overshoot, the gain follows
    the RMS's miss."""
    gain = _first_gain(master, piece)
    ceiling = PEAK_DBFS - CODEC_HEADROOM_DB
    rules: list[Rule] = []
    for _ in range(MAX_TRIES):
        _write(master, piece, path, gain, ceiling, metadata)
        rules = measure(path, sample=piece.sample)
        by_name = {r.name: r for r in rules}
        peak, rms = by_name["peak"], by_name["RMS"]
        if peak.passed and rms.passed:
            break
        if not peak.passed:
            ceiling -= peak.measured - PEAK_DBFS + 0.2
        if not rms.passed and math.isfinite(rms.measured):
            gain *= 10 ** ((TARGET_RMS_DBFS - rms.measured) / 20)
    return rules


def package(
    master_path: Path, chapters: Sequence[Chapter], cuts_s: Sequence[float], workdir: Path, *,
    title: str | None, author: str | None, max_file_s: float = MAX_FILE_S,
) -> Package:
    """Every file of the delivery, its report, and the zip of both, in ``workdir``."""
    master = _master(master_path)
    total = len(master)
    out = workdir / "acx"
    out.mkdir(exist_ok=True)
    plan = [*pieces(chapters, cuts_s, total, max_file_s=max_file_s), sample_piece(master, chapters, total)]
    files: list[Path] = []
    entries: list[dict[str, Any]] = []
    for piece in plan:
        path = out / piece.name
        tags = Metadata(title=piece.title if piece.sample else f"{title or ''} - {piece.title}".strip(" -"),
                        author=author, genre="Audiobook")
        rules = _deliver(master, piece, path, tags)
        files.append(path)
        entries.append({
            "file": piece.name, "title": piece.title, "retailSample": piece.sample,
            "rules": [r.to_dict() for r in rules], "pass": all(r.passed for r in rules),
        })
    report = {"delivery": "acx", "pass": all(e["pass"] for e in entries), "files": entries}
    zip_path = workdir / "acx.zip"
    with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_STORED) as archive:
        for path in files:
            archive.write(path, arcname=path.name)
        archive.writestr("compliance.json", json.dumps(report, indent=2, ensure_ascii=False))
    return Package(zip_path, report, files)
