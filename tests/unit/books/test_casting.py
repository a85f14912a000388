"""A cast: its checks, the turns a book is cut into, and voices brought to one rate and level."""

from __future__ import annotations

import numpy as np
import pytest

from books.casting import CHUNK_LUFS, Cast, check_cast, matched, turns
from books.errors import InvalidCast
from scheduler.job_params import JobParams
from speech.audio.loudness import integrated_loudness

CAST = Cast.from_params(JobParams(speaker="joe", model_id="coda", lang="en", cast=check_cast({"characters": {"Elizabeth": "nora", "Mr. Darcy": {"voice": "owen",
                                                            "aliases": ["Darcy"]}}, "dialogue": "ivy"}, "joe")))


def test_the_narrator_defaults_to_the_speaker_and_dialogue_to_the_narrator() -> None:
    assert check_cast({}, "joe") == {"narrator": "joe", "characters": {}, "dialogue": "joe"}
    assert CAST is not None and CAST.voices() == ["joe", "nora", "owen", "ivy"]


@pytest.mark.parametrize(
    "given",
    [[], {"narrator": 3}, {"characters": {"A": 1}}, {"characters": {"A": {"voice": "x", "aliases": "B"}}}, {"cast": 1},
     {"characters": {"A": {"voice": "x", "extra": 1}}}, {"characters": {f"n{i}": "x" for i in range(101)}}],
)
def test_a_malformed_cast_is_refused(given: object) -> None:
    with pytest.raises(InvalidCast):
        check_cast(given, "joe")


def test_turns_cut_a_paragraph_where_the_voice_changes() -> None:
    assert CAST is not None
    found = turns(["“Well,” said Elizabeth, “we shall see.”", "“We shall,” Darcy said.", "“Who is that?” asked Lydia."], CAST)
    assert [(t.text, t.voice, t.speaker, t.paragraph_start) for t in found] == [
        ("“Well,”", "nora", "Elizabeth", True),
        ("said Elizabeth,", "joe", None, False),
        ("“we shall see.”", "nora", "Elizabeth", False),
        ("“We shall,”", "owen", "Mr. Darcy", True),
        ("Darcy said.", "joe", None, False),
        ("“Who is that?”", "ivy", "Lydia", True),  # outside the cast: the dialogue voice
        ("asked Lydia.", "joe", None, False),
    ]


def test_a_voice_is_brought_to_the_books_rate_and_the_common_level() -> None:
    rate = 24000
    t = np.arange(rate * 2) / rate
    quiet = (0.02 * np.sin(2 * np.pi * 300 * t)).astype(np.float32)
    out = matched(quiet, rate, 22050)
    assert abs(len(out) - 2 * 22050) <= 2
    assert integrated_loudness(out, 22050) == pytest.approx(CHUNK_LUFS, abs=0.2)
    short = np.full(100, 0.1, dtype=np.float32)  # too short to measure: level kept
    assert np.allclose(matched(short, 22050, 22050), short)
