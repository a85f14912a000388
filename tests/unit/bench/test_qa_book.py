"""bench.qa_book's bound on a false-alarm rate: the one-sided 95% Poisson upper limit, which
says how many hours of clean audio a "under one an hour" claim needs (three, with none seen)."""

from __future__ import annotations

import math

import pytest

from bench.qa_book import poisson_upper


@pytest.mark.parametrize(("events", "limit"), [(0, 2.9957), (1, 4.7439), (2, 6.2958), (5, 10.5132)])
def test_the_upper_limit_matches_the_chi_square_table(events: int, limit: float) -> None:
    assert poisson_upper(events, 1.0) == pytest.approx(limit, abs=1e-3)


def test_the_limit_is_a_rate_per_hour_of_exposure() -> None:
    assert poisson_upper(0, 3.0) == pytest.approx(-math.log(0.05) / 3, abs=1e-3)
    assert poisson_upper(0, 3.0) < 1.0 < poisson_upper(0, 2.9)
