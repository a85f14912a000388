"""A tiny Engine for unit tests of batching and transport (never a stand-in for the real voice)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np

from speech.types import AudioChunk, SynthesisOptions, WordTiming


class ToneEngine:
    """One 440 Hz tone per sentence, 10 ms per character; records every call."""

    sample_rate = 16000

    def __init__(self, *, delay_s: float = 0.0, per_item_s: float = 0.0, fail_on: str | None = None) -> None:
        self.delay_s = delay_s
        self.per_item_s = per_item_s
        self.fail_on = fail_on
        self.calls: list[tuple[list[str], SynthesisOptions | None]] = []
        self._lock = threading.Lock()

    def phonemize(self, text: str) -> str:
        return text.lower()

    def synthesize(self, sentences: Sequence[str], options: SynthesisOptions | None = None) -> list[AudioChunk]:
        with self._lock:
            self.calls.append((list(sentences), options))
        time.sleep(self.delay_s + self.per_item_s * len(sentences))
        if self.fail_on is not None and any(self.fail_on in s for s in sentences):
            raise RuntimeError(f"cannot say {self.fail_on!r}")
        scale = (options.length_scale if options and options.length_scale else 1.0)
        chunks = []
        for text in sentences:
            n = int(self.sample_rate * 0.01 * len(text) * scale)
            t = np.arange(n, dtype=np.float32) / self.sample_rate
            words = [WordTiming(w, i * 0.1, i * 0.1 + 0.08) for i, w in enumerate(text.split())]
            chunks.append(AudioChunk((0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), self.sample_rate, text, words))
        return chunks
