"""speech/audio/files.py: a book file written block by block, and MP3/m4b written in segments on
separate encoders and joined, decode to exactly the samples given, at the right places."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pytest

from speech.audio import (
    FILE_FORMATS,
    AudioFormat,
    SegmentEncoder,
    SegmentJoiner,
    frame_size,
    join_skip,
    open_file_encoder,
)

RATE = 24000


def _decoded(path: Path) -> np.ndarray:
    with av.open(str(path)) as container:
        return np.concatenate([f.to_ndarray().reshape(-1) for f in container.decode(audio=0)]).astype(np.float32)


def _tone(seconds: float) -> np.ndarray:
    t = np.arange(int(RATE * seconds)) / RATE
    return (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


@pytest.mark.parametrize("name", sorted(FILE_FORMATS))
def test_a_file_written_in_blocks_decodes_to_its_length(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"book.{name}"
    encoder = open_file_encoder(name, RATE if name != "opus" else 48000, path)
    rate = encoder.sample_rate
    for _ in range(3):
        encoder.write(np.zeros(rate // 2, np.float32))
    encoder.finish()
    assert abs(len(_decoded(path)) - 3 * (rate // 2)) <= 2 * 1152  # codecs pad to whole frames at most


@pytest.mark.parametrize("fmt", [AudioFormat.MP3, AudioFormat.M4B])
def test_segments_join_with_every_sample_in_place(fmt: AudioFormat, tmp_path: Path) -> None:
    frame, skip = frame_size(fmt, RATE), join_skip(fmt, RATE)
    silence = np.zeros(20 * frame, np.float32)
    first = np.concatenate([_tone(0.5), silence])[: 40 * frame]  # a whole number of frames
    second = np.concatenate([silence, _tone(0.5)])
    path = tmp_path / f"joined.{fmt.value}"
    joiner = SegmentJoiner(fmt, RATE, path, metadata=None)
    for samples in (first, second[skip:]):  # each join leaves out what the next encoder adds
        encoder = SegmentEncoder(fmt, RATE)
        encoder.write(samples)
        joiner.add(encoder.finish())
    joiner.finish()
    decoded = _decoded(path)
    assert abs(len(decoded) - (len(first) + len(second))) <= frame
    onset = len(first) + len(silence)  # the second tone starts here on the book's timeline
    assert np.abs(decoded[onset - frame : onset - frame // 2]).max() < 0.01
    assert np.abs(decoded[onset + frame : onset + 2 * frame]).max() > 0.1


def test_formats_not_made_for_segments_are_refused() -> None:
    with pytest.raises(ValueError):
        SegmentEncoder(AudioFormat.WAV, RATE)
