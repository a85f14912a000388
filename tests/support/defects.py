"""An engine that plants the defects the QA check must catch, around a real voice: a dropped
sentence (nothing said, as a skipping engine does), or garbled words (other words said in their
place). Everything else is the real voice's audio, so a clean chunk is exactly what a job renders."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from speech.types import AudioChunk, SynthesisOptions

# Stand-ins for garbled words: real words, so the voice says them clearly and only the ASR check
# (not a silence detector) can tell that they are not the text's.
NONSENSE = ("pelican", "marble", "quietly", "orange", "velvet", "thunder", "copper", "lantern")


# Japanese is written without spaces: there a "word" is taken as three characters, and the
# stand-ins are Japanese words the voice can say.
NONSENSE_JA = ("ペリカン", "大理石", "静かに", "オレンジ", "ビロード", "雷鳴", "銅貨", "提灯")
JA_WORD_CHARS = 3


def garble(sentence: str, count: int = 3, lang: str = "en") -> str:
    """``sentence`` with ``count`` consecutive words from its middle replaced by other words."""
    if lang == "ja":
        span = count * JA_WORD_CHARS
        start = max((len(sentence) - span) // 2, 0)
        return sentence[:start] + "".join(NONSENSE_JA[:count]) + sentence[start + span :]
    words = sentence.split()
    if len(words) <= count:
        return " ".join(NONSENSE[: len(words)])
    start = (len(words) - count) // 2
    words[start : start + count] = NONSENSE[start % 4 : start % 4 + count]
    return " ".join(words)


class DefectEngine:
    """Wraps ``inner``: a sentence for which ``drop(sentence)`` is true comes back silent and
    empty (the chunk keeps its place), one for which ``garbled(sentence)`` is true is spoken with
    words replaced (:func:`garble`). ``calls`` records what each call was asked to say."""

    def __init__(
        self,
        inner: Any,
        *,
        drop: Callable[[str], bool] = lambda sentence: False,
        garbled: Callable[[str], bool] = lambda sentence: False,
    ) -> None:
        self.inner = inner
        self.sample_rate = inner.sample_rate
        self.drop = drop
        self.garbled = garbled
        self.calls: list[list[str]] = []
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def synthesize(
        self, sentences: Sequence[str], options: SynthesisOptions | None = None
    ) -> list[AudioChunk]:
        with self._lock:
            self.calls.append(list(sentences))
        spoken = [s for s in sentences if not self.drop(s)]
        said = (
            self.inner.synthesize([garble(s) if self.garbled(s) else s for s in spoken], options)
            if spoken
            else []
        )
        out, heard = [], iter(said)
        for sentence in sentences:
            if self.drop(sentence):
                out.append(AudioChunk(np.zeros(0, dtype=np.float32), self.sample_rate, sentence, []))
            else:
                out.append(next(heard))
        return out
