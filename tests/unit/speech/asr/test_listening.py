"""The look at a chunk: whole, then sentence by sentence where the whole fails. The recogniser
here is a stand-in that reads which sentences a stretch of audio holds from the samples' values
(sentence ``i`` is a tone at level ``(i + 1) / 10``) and, heard whole, stops after the first one:
what Whisper tiny.en did on the novel. Whisper itself is heard in the integration tests."""

from __future__ import annotations

import numpy as np

from speech.asr import listen, sentence_spans

RATE = 1000
GAP_S = 0.25
SENTENCES = ["It is a truth universally acknowledged.", "Said Mrs. Bennet to her husband.", "He made no answer at all."]


class StopsAfterTheFirst:
    def __init__(self) -> None:
        self.calls = 0

    def transcribe(self, samples: np.ndarray, sample_rate: int, lang: str) -> str:
        self.calls += 1
        levels = sorted({round(float(abs(v)) * 10) - 1 for v in samples if v})
        return SENTENCES[levels[0]] if levels else ""


def chunk(indices: list[int]) -> np.ndarray:
    gap = np.zeros(int(GAP_S * RATE), np.float32)
    parts: list[np.ndarray] = []
    for i in indices:
        tone = np.full(RATE, (i + 1) / 10, np.float32)
        tone[::2] *= -1  # sound, not a constant
        parts += [gap, tone] if parts else [tone]
    return np.concatenate(parts)


def test_a_chunk_the_recogniser_stopped_early_on_passes_heard_sentence_by_sentence() -> None:
    recognizer = StopsAfterTheFirst()
    hearing = listen(recognizer, chunk([0, 1, 2]), RATE, " ".join(SENTENCES), "en", gap_s=GAP_S)
    assert hearing.passed and hearing.by_sentence and hearing.score.rate == 0.0
    assert recognizer.calls == 4  # the whole, then each sentence


def test_a_dropped_sentence_still_fails_heard_sentence_by_sentence() -> None:
    hearing = listen(StopsAfterTheFirst(), chunk([0, 2]), RATE, " ".join(SENTENCES), "en", gap_s=GAP_S)
    assert not hearing.passed
    assert hearing.score.missing_run == len(SENTENCES[1].split())  # the whole sentence, unheard
    assert "Bennet" not in hearing.heard


def test_a_chunk_heard_whole_is_heard_once() -> None:
    recognizer = StopsAfterTheFirst()
    hearing = listen(recognizer, chunk([0]), RATE, SENTENCES[0], "en", gap_s=GAP_S)
    assert hearing.passed and not hearing.by_sentence and recognizer.calls == 1


def test_sentences_are_cut_at_the_gaps_only() -> None:
    audio = chunk([0, 1, 2])
    assert sentence_spans(audio, RATE, GAP_S) == [(0, 1000), (1250, 2250), (2500, 3500)]
    short = audio.copy()
    short[500:600] = 0  # a pause inside speech shorter than the gap: not a cut
    assert len(sentence_spans(short, RATE, GAP_S)) == 3
    assert sentence_spans(np.ones(10, np.float32), RATE, GAP_S) == [(0, 10)]
