"""``bench.first_piece``: every stream of a round gets its first sentence, and the result line
names each stream count."""

from __future__ import annotations

import re

import pytest

from bench import first_piece


def test_the_first_piece_is_timed_at_each_stream_count(capsys: pytest.CaptureFixture[str]) -> None:
    first_piece.main(["--model", "mistv3", "--speaker", "walter", "--streams", "1,3", "--repeats", "2"])
    out = capsys.readouterr().out
    assert out.startswith("MACHINE device=cpu")
    assert re.search(r"^3 streams: rounds \d+, \d+ ms$", out, re.M)
    result = re.search(r"^RESULT first_piece_1_ms=(\d+) first_piece_3_ms=(\d+)$", out, re.M)
    assert result and all(int(v) > 0 for v in result.groups())
