"""Signal-to-noise ratio of one rendering against another: how the engine tests say two waveforms
are the same speech to rounding (tens of dB) or another rendering (a few dB)."""

from __future__ import annotations

import numpy as np


def snr_db(reference: np.ndarray, other: np.ndarray) -> float:
    """``reference``'s energy over the energy of ``reference - other``, in dB (float64 sums; an
    exact match reads a finite figure far above any threshold, not a division by zero)."""
    ref = np.asarray(reference, dtype=np.float64)
    noise = ref - np.asarray(other, dtype=np.float64)
    return float(10 * np.log10(np.sum(ref**2) / max(float(np.sum(noise**2)), 1e-30)))
