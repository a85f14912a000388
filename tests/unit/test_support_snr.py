"""``tests.support.snr``: the engine tests' measure of two renderings being the same speech."""

from __future__ import annotations

import numpy as np

from tests.support.snr import snr_db


def test_snr_reads_the_noise_energy_in_db_and_an_exact_match_as_finite() -> None:
    tone = np.sin(np.linspace(0, 200, 4000)).astype(np.float32)
    assert abs(snr_db(tone, 0.5 * tone) - 20 * np.log10(2)) < 1e-6  # half the signal left over: 6.02 dB
    assert abs(snr_db(tone, tone + 0.01 * tone) - 40.0) < 1e-4
    assert 200.0 < snr_db(tone, tone) < float("inf")
