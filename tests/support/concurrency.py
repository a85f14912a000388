"""How many calls ran at once: for tests of the pools that bound concurrent steps."""

from __future__ import annotations

import threading
import time


class PeakCounter:
    """``hold(seconds)`` marks one call running for that long; ``peak`` is the most at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self.peak = 0

    def hold(self, seconds: float) -> str:
        """Run ``seconds`` counted as one call; the running thread's name (which pool ran it)."""
        with self._lock:
            self._running += 1
            self.peak = max(self.peak, self._running)
        time.sleep(seconds)
        with self._lock:
            self._running -= 1
        return threading.current_thread().name
