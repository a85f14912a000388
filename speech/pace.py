"""How fast each voice has been making audio lately: wall seconds per character of text.

A stream's first sentence is cut only where it is needed (``speech.streaming``): where the
voice would take longer than the first-audio budget to say it whole. That depends on the
engine (Kokoro on two CPU cores takes about ten times what VITS takes), the device and the load
of the moment, so it is measured, not configured: every sentence a stream synthesizes updates
its voice's figure (an exponential moving average, so a burst of concurrent streams raises it
and a quiet minute brings it back). The figure is wall time as the stream saw it, waits for the
engine included: with four streams on one voice, a first piece waits for the others' turns too.
"""

from __future__ import annotations

import threading
from typing import Final

WEIGHT: Final = 0.3
"""The newest sentence's weight in the average."""


class Pace:
    """Seconds per character by voice key; shared by the streams of one process."""

    def __init__(self, weight: float = WEIGHT) -> None:
        self._weight = weight
        self._per_char: dict[str, float] = {}
        self._lock = threading.Lock()

    def record(self, voice_key: str, chars: int, seconds: float) -> None:
        """``chars`` characters took ``seconds`` (ignored when there is nothing to learn from)."""
        if chars <= 0 or seconds <= 0:
            return
        rate = seconds / chars
        with self._lock:
            old = self._per_char.get(voice_key)
            self._per_char[voice_key] = rate if old is None else old + self._weight * (rate - old)

    def chars_within(self, voice_key: str, seconds: float) -> int | None:
        """Characters the voice says in ``seconds`` of wall time at its recent pace; None until a
        sentence of it was measured."""
        with self._lock:
            per_char = self._per_char.get(voice_key)
        if per_char is None:
            return None
        return int(seconds / per_char)
