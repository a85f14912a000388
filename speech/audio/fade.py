"""Click-free chunk edges.

Each chunk is a separate synthesis, so its first and last samples need not be near zero; butting
such a chunk against silence or another chunk makes an audible click. A few milliseconds of
raised-cosine fade at every chunk edge removes that without touching the speech. The pauses
between chunks and where each chunk lands are the book's timeline (``books.timeline``), the
one stitcher.
"""

from __future__ import annotations

import numpy as np


def ms_to_samples(ms: float, sample_rate: int) -> int:
    return int(round(ms * sample_rate / 1000.0))


def fade_edges(samples: np.ndarray, sample_rate: int, fade_ms: float) -> np.ndarray:
    """A copy of ``samples`` with a raised-cosine fade-in and fade-out of ``fade_ms`` each."""
    x = np.array(samples, dtype=np.float32, copy=True).reshape(-1)
    n = min(ms_to_samples(fade_ms, sample_rate), len(x) // 2)
    if n > 0:
        ramp = (0.5 - 0.5 * np.cos(np.pi * (np.arange(n, dtype=np.float32) + 0.5) / n)).astype(np.float32)
        x[:n] *= ramp
        x[-n:] *= ramp[::-1]
    return x
