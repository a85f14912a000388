"""The suite's timeline (``tests/support/timeline.py``): wall and CPU seconds per file, per worker."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.timeline import main


def test_a_files_wall_and_cpu_seconds_are_what_its_tests_added(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "gw0.log").write_text(
        "100.00 5.00 tests/a.py::test_one\n"
        "110.00 12.00 tests/a.py::test_two[with a space]\n"
        "130.00 13.50 tests/b.py::test_three\n"
    )
    main(tmp_path)
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "gw0: 3 tests, last ended at 0.5 min, 0.2 CPU min"
    assert printed[1].split() == ["20.0", "s", "1.5", "CPU", "s", "tests/b.py"]
    assert printed[2].split() == ["10.0", "s", "12.0", "CPU", "s", "tests/a.py"]


def test_the_suite_ranks_files_by_cpu_over_every_worker(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "gw0.log").write_text("100.00 5.00 tests/a.py::test_one\n101.00 9.00 tests/b.py::test_two\n")
    (tmp_path / "gw1.log").write_text("100.00 1.00 tests/c.py::test_three\n150.00 3.00 tests/b.py::test_four\n")
    main(tmp_path)
    printed = capsys.readouterr().out.splitlines()
    at = printed.index("all: 0.2 CPU min; the most:")
    assert [line.split() for line in printed[at + 1:]] == [
        ["6.0", "CPU", "s", "tests/b.py"], ["5.0", "CPU", "s", "tests/a.py"], ["1.0", "CPU", "s", "tests/c.py"],
    ]
