"""Aligning per-word phonemes with the sentence's phonemes, and durations to word times."""

from __future__ import annotations

import numpy as np

from speech.engines.timing import char_owners, word_timings


def test_merged_words_are_split_between_their_letters() -> None:
    sentence = "aɪɐm hˈɪɹ."
    owners = char_owners(sentence, ["ˈaɪ", "æm", "hˈɪɹ"])
    assert owners[:2] == [0, 0] and owners[3] == 1  # a ɪ -> "I", m -> "am"
    assert owners[sentence.index("h")] == 2 and owners[sentence.index("ˈ")] == 2  # stress joins its syllable
    assert owners[sentence.index(" ")] == -1 and owners[-1] == -1  # gaps belong to no word
    owned = [o for o in owners if o >= 0]
    assert owned == sorted(owned)


def test_word_times_follow_the_durations() -> None:
    sentence = "ab cd"
    # ids: ^ _ a _ b _ ' ' _ c _ d _ $  -> char positions 2, 4, 6, 8, 10; 13 ids
    positions = [2, 4, 6, 8, 10]
    durations = np.array([1, 1, 2, 1, 2, 1, 5, 1, 3, 1, 3, 1, 1], dtype=np.float32)
    timings = word_timings([("AB", "ab"), ("CD", "cd")], sentence, positions, 13, durations, 0.5)
    assert [t.word for t in timings] == ["AB", "CD"]
    # AB covers ids 2..5 (frames 2..8), the space ids 6..7, CD ids 8..11 (frames 14..22).
    assert (timings[0].start, timings[0].end) == (1.0, 4.0)
    assert (timings[1].start, timings[1].end) == (7.0, 11.0)


def test_unmatched_word_gets_zero_length_in_order() -> None:
    positions = [2, 4, 6, 8, 10]
    durations = np.ones(13, dtype=np.float32)
    timings = word_timings([("AB", "ab"), ("--", ""), ("CD", "cd")], "ab cd", positions, 13, durations, 1.0)
    assert timings[1].start == timings[1].end == timings[0].end
    assert timings[2].start >= timings[1].end
