"""scheduler/synthesis.py: chunks go to the engine in calls of at most ``group_chars`` characters."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lector.settings import Settings
from scheduler.synthesis import _groups

GROUP_CHARS = Settings.model_fields["synth_group_chars"].default  # the CPU default


@given(sizes=st.lists(st.integers(min_value=1, max_value=1000), max_size=60),
       group_chars=st.sampled_from([GROUP_CHARS, 4000, 20000]))
def test_groups_keep_order_cover_everything_and_respect_the_size(sizes: list[int], group_chars: int) -> None:
    todo = [(i, "x" * n) for i, n in enumerate(sizes)]
    groups = _groups(todo, group_chars)
    assert [item for group in groups for item in group] == todo
    assert all(group for group in groups)
    for group in groups:
        assert sum(len(text) for _, text in group) <= group_chars or len(group) == 1


def test_larger_groups_mean_fewer_engine_calls() -> None:
    todo = [(i, "y" * 900) for i in range(40)]
    assert len(_groups(todo, GROUP_CHARS)) == 40  # 1,500 characters: one 900-character chunk a call
    assert len(_groups(todo, 20000)) == 2
