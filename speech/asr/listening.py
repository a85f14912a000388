"""One look at a rendered chunk: what the recogniser heard, and whether that passes.

The chunk is heard whole. Where that fails and the chunk has several sentences, each sentence is
heard alone as well and the better reading counts: Whisper tiny.en sometimes stops at the end of
a chunk's first quoted sentence though the voice said them all (twice in 70 minutes of a novel,
``bench/qa_book.py``). A sentence the voice dropped has no audio to be heard alone, and a garbled
one is as garbled alone, so the defects the check is for still fail. Sentences are found by the
digital silence a book's chunk has between them (``scheduler.synthesis.join_sentences``), never
inside speech, whose quietest samples are noise, not zeros.

Where both readings fail, a second opinion is asked of the recogniser, when it has one for the
language (a larger model: Whisper base for English, whose first look is tiny.en), and the chunk
passes if that reading does. What remained of the false alarms on the novel were tiny.en's own
mishearings, the same on the chunk's second rendering; base passed most of the looks tiny.en
failed there (6 of 9), and the ones both models share ("uncommonly" as "in commonly") are the
scorer's split rule (``speech.asr.scoring.align``). A dropped sentence is missing from every
model's reading, so drops still fail. The referee hears only what the first model failed (a few
chunks an hour), so its cost is the first model's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from speech.asr.scoring import Score, score, threshold


class Recognizer(Protocol):
    """What the check asks of a speech recogniser (``speech.asr.WhisperRecognizer`` is one)."""

    def transcribe(self, samples: np.ndarray, sample_rate: int, lang: str) -> str: ...

    def second_opinion(self, samples: np.ndarray, sample_rate: int, lang: str) -> str | None:
        """Another model's reading, or None where the recogniser has no other model for ``lang``."""
        ...


@dataclass(frozen=True, slots=True)
class Hearing:
    heard: str
    score: Score
    passed: bool
    by_sentence: bool  # the reading of the sentences heard one by one counted
    second_opinion: bool = False  # the second model's reading counted
    missing_sentences: int = 0  # sentences of the text with no stretch of sound of their own


def sentence_spans(samples: np.ndarray, rate: int, gap_s: float) -> list[tuple[int, int]]:
    """``(start, end)`` of each stretch of sound between runs of zero samples at least
    ``0.8 * gap_s`` long (the gaps between a chunk's sentences); the whole chunk where there are
    none."""
    silent = np.concatenate(([False], samples == 0, [False]))
    edges = np.flatnonzero(np.diff(silent.astype(np.int8)))
    min_run = max(1, int(0.8 * gap_s * rate))
    spans: list[tuple[int, int]] = []
    begin = 0
    for start, end in zip(edges[0::2], edges[1::2], strict=True):  # each run of zeros: [start, end)
        if end - start >= min_run:
            if start > begin:
                spans.append((begin, int(start)))
            begin = int(end)
    if begin < len(samples):
        spans.append((begin, len(samples)))
    return spans or [(0, len(samples))]


def listen(
    recognizer: Recognizer, samples: np.ndarray, rate: int, text: str, lang: str, *, gap_s: float,
    sentences: int | None = None,
) -> Hearing:
    """Hear ``samples`` (float, in [-1, 1]) against ``text``: whole, then sentence by sentence
    where the whole fails (see the module docstring).

    ``sentences``: how many spoken sentences the chunk was made of, where the caller knows. Fewer
    stretches of sound than that fail the chunk whatever was heard: an engine that returns nothing
    for a sentence leaves no gap for it (``join_sentences``), and a dropped sentence of two to five
    words ("Pardon me.") is under both the rate and the run of missing words, so the recogniser
    alone let four in 23 through on a novel (``bench/qa_book.py``)."""
    limit = threshold(lang)
    heard = recognizer.transcribe(samples, rate, lang)
    result = score(text, heard, lang)
    spans = sentence_spans(samples, rate, gap_s)
    missing = max(0, sentences - len(spans)) if sentences else 0
    if missing:
        return Hearing(heard, result, False, False, missing_sentences=missing)
    if not result.fails(limit):
        return Hearing(heard, result, True, False)
    failed = Hearing(heard, result, False, False)
    if len(spans) > 1:
        alone = " ".join(recognizer.transcribe(samples[a:b], rate, lang) for a, b in spans).strip()
        other = score(text, alone, lang)
        if not other.fails(limit):
            return Hearing(alone, other, True, True)
        if other.rate < result.rate:
            failed = Hearing(alone, other, False, True)
    referee = recognizer.second_opinion(samples, rate, lang)
    if referee is not None:
        judged = score(text, referee, lang)
        if not judged.fails(limit):
            return Hearing(referee, judged, True, False, second_opinion=True)
    return failed
