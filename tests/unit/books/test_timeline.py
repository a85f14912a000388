"""Where every chunk lands, from the plan's pauses and the chunks' lengths alone."""

from __future__ import annotations

import pytest

from books.timeline import Timeline, meta_length


def test_offsets_follow_pauses_and_lengths() -> None:
    t = Timeline.build(1000, [0, 250, 2000], [100, 300, 50])
    assert t.pauses == [0, 250, 2000]
    assert t.offsets == [0, 350, 2650]
    assert t.end == 2700
    assert [t.length(i) for i in range(3)] == [100, 300, 50]


def test_a_plan_and_lengths_that_disagree_are_refused() -> None:
    with pytest.raises(ValueError, match="2 chunk lengths for a plan of 3 chunks"):
        Timeline.build(1000, [0, 250, 700], [1, 2])


@pytest.mark.parametrize("length", [1, 22049, 22050 * 41 + 7, 9_999_991])
def test_a_length_comes_back_exactly_from_its_duration(length: int) -> None:
    assert meta_length({"sample_rate": 22050, "duration_s": length / 22050}) == length
    assert meta_length({"sample_rate": 22050, "samples": length, "duration_s": 0.0}) == length
