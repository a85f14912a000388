"""Whole-file encoding (the batch path): every format, tags, MP4 chapters, error translation."""

from __future__ import annotations

import io

import av
import numpy as np
import pytest

from speech.audio.encoders import encode_whole
from speech.audio.encoders_pyav import _av_errors
from speech.audio.formats import AudioFormat
from speech.audio.metadata import Chapter, Metadata, chapter_dicts
from speech.errors import EncodeError

F = AudioFormat
RATE = 24000
SECONDS = 3.0
BOOK = Metadata(
    title="The Test Book",
    author="Ada Author",
    chapters=(Chapter("Opening", 0.0), Chapter("Middle", 1.0), Chapter("Ending", 2.25)),
)


@pytest.fixture(scope="module")
def signal() -> np.ndarray:
    rng = np.random.default_rng(7)
    t = np.arange(int(RATE * SECONDS)) / RATE
    tone = 0.2 * np.sin(2 * np.pi * (150 * t + 300 * t * t))
    bursts = (0.1 * rng.standard_normal(len(t))) * (np.sin(2 * np.pi * 2 * t) > 0.7)
    return (tone + bursts).astype(np.float32)


def _tags(data: bytes) -> dict[str, str]:
    with av.open(io.BytesIO(data)) as c:
        tags = {k.lower(): v for k, v in c.metadata.items()}
        tags.update({k.lower(): v for k, v in c.streams.audio[0].metadata.items()})
    return tags


@pytest.mark.parametrize("fmt", list(AudioFormat), ids=lambda f: f.value)
def test_every_format_decodes_to_the_right_length(fmt: AudioFormat, signal, decode) -> None:
    data = encode_whole(fmt, signal, RATE, metadata=BOOK)
    rate, decoded = decode(data, fmt, RATE)
    assert rate == (48000 if fmt in (F.WEBM_OPUS, F.OGG_OPUS) else RATE)
    # raw ADTS carries no gapless information: decoders keep the encoder's 1,024 priming samples
    # and the last frame's padding (up to two frames more than the input)
    slack = 2 * 1024 / RATE + 0.01 if fmt is F.AAC else 0.05
    assert abs(len(decoded) / rate - SECONDS) <= slack


def test_batch_mp3_carries_its_encoder_delay(signal, decode) -> None:
    """Written seekably, the MP3 gets a LAME header, so decoders trim the priming exactly."""
    rate, decoded = decode(encode_whole(F.MP3, signal, RATE), F.MP3, RATE)
    assert abs(len(decoded) - len(signal)) <= 1
    n = len(signal)
    r = np.dot(decoded[:n], signal) / (np.linalg.norm(decoded[:n]) * np.linalg.norm(signal))
    assert r > 0.95


def test_mp3_id3_title_and_artist(signal) -> None:
    data = encode_whole(F.MP3, signal, RATE, metadata=BOOK)
    assert data[:3] == b"ID3"
    tags = _tags(data)
    assert tags["title"] == "The Test Book" and tags["artist"] == "Ada Author"


@pytest.mark.parametrize("fmt", [F.M4B, F.M4A])
def test_mp4_tags_and_chapters(fmt: AudioFormat, signal) -> None:
    data = encode_whole(fmt, signal, RATE, metadata=BOOK, bitrate=48000)
    with av.open(io.BytesIO(data)) as c:
        tags = dict(c.metadata)
        chapters = c.chapters()
        assert c.streams.audio[0].codec_context.name == "aac"
    assert tags["title"] == "The Test Book" and tags["artist"] == "Ada Author"
    assert tags["album"] == "The Test Book"
    assert tags["major_brand"].strip() == ("M4B" if fmt is F.M4B else "M4A")
    assert [ch["metadata"]["title"] for ch in chapters] == ["Opening", "Middle", "Ending"]
    starts = [float(ch["start"] * ch["time_base"]) for ch in chapters]
    ends = [float(ch["end"] * ch["time_base"]) for ch in chapters]
    assert starts == pytest.approx([0.0, 1.0, 2.25], abs=0.01)
    assert ends == pytest.approx([1.0, 2.25, SECONDS], abs=0.01)
    # faststart: the index (moov) precedes the audio (mdat)
    assert data.index(b"moov") < data.index(b"mdat")


@pytest.mark.parametrize("fmt", [F.FLAC, F.OGG_OPUS, F.WEBM_OPUS])
def test_other_containers_carry_title_and_artist(fmt: AudioFormat, signal) -> None:
    tags = _tags(encode_whole(fmt, signal, RATE, metadata=BOOK))
    assert tags["title"] == "The Test Book" and tags["artist"] == "Ada Author"


def test_flac_is_lossless_at_16_bits(signal, decode) -> None:
    _, decoded = decode(encode_whole(F.FLAC, signal, RATE), F.FLAC, RATE)
    expected = np.rint(np.clip(signal, -1, 1) * 32767) / 32768.0
    assert np.max(np.abs(decoded - expected)) < 2e-4


def test_odd_rate_input_is_resampled_for_opus_and_mp3(decode) -> None:
    x = (0.2 * np.sin(2 * np.pi * 440 * np.arange(44000) / 22000)).astype(np.float32)  # 2 s at 22 kHz
    for fmt, expected_rate in ((F.OGG_OPUS, 48000), (F.MP3, 22050)):
        rate, decoded = decode(encode_whole(fmt, x, 22000), fmt, 22000)
        assert rate == expected_rate
        assert abs(len(decoded) / rate - 2.0) <= 0.05


def test_chapter_dicts_fill_open_ends_and_reject_disorder() -> None:
    dicts = chapter_dicts([Chapter("a", 0.0), Chapter("b", 1.5, 2.0)], total_seconds=9.0)
    assert [(d["start"], d["end"]) for d in dicts] == [(0, 1500), (1500, 2000)]
    with pytest.raises(ValueError):
        chapter_dicts([Chapter("a", 2.0), Chapter("b", 1.0)], total_seconds=3.0)


def test_pyav_errors_become_encode_errors() -> None:
    with pytest.raises(EncodeError) as info, _av_errors("muxing"):
        raise av.error.InvalidDataError(1094995529, "Invalid data found when processing input")
    assert isinstance(info.value.__cause__, av.FFmpegError)


def test_plain_tag_mapping_is_accepted(signal) -> None:
    data = encode_whole(F.MP3, signal, RATE, metadata={"title": "Plain", "artist": "Someone"})
    tags = _tags(data)
    assert tags["title"] == "Plain" and tags["artist"] == "Someone"
