"""The look at a chunk: whole, then sentence by sentence where the whole fails. The recogniser
here is a stand-in that reads which sentences a stretch of audio holds from the samples' values
(sentence ``i`` is a tone at level ``(i + 1) / 10``) and, heard whole, stops after the first one:
what Whisper tiny.en did on the novel. Its second opinion, where it has one, hears every sentence
there is. Whisper itself is heard in the integration tests."""

from __future__ import annotations

import numpy as np

from speech.asr import listen, sentence_spans

RATE = 1000
GAP_S = 0.25
SENTENCES = ["It is a truth universally acknowledged.", "Said Mrs. Bennet to her husband.", "He made no answer at all."]


def sentences_in(samples: np.ndarray) -> list[int]:
    return sorted({round(float(abs(v)) * 10) - 1 for v in samples if v})


class StopsAfterTheFirst:
    def __init__(self, *, referee: bool = False) -> None:
        self.calls = 0
        self.referee_calls = 0
        self._referee = referee

    def transcribe(self, samples: np.ndarray, sample_rate: int, lang: str) -> str:
        self.calls += 1
        levels = sentences_in(samples)
        return SENTENCES[levels[0]] if levels else ""

    def second_opinion(self, samples: np.ndarray, sample_rate: int, lang: str) -> str | None:
        if not self._referee:
            return None
        self.referee_calls += 1
        return " ".join(SENTENCES[i] for i in sentences_in(samples))


class Mishears(StopsAfterTheFirst):
    """Hears every sentence but the words of the last two wrong, whole or alone (tiny.en's
    "I nature an offensive" for "By nature inoffensive", the same on every rendering)."""

    def transcribe(self, samples: np.ndarray, sample_rate: int, lang: str) -> str:
        self.calls += 1
        return " ".join(SENTENCES[i] if i == 0 else "in commonly " * 3 for i in sentences_in(samples)).strip()


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
    recognizer = StopsAfterTheFirst(referee=True)
    hearing = listen(recognizer, chunk([0]), RATE, SENTENCES[0], "en", gap_s=GAP_S)
    assert hearing.passed and not hearing.by_sentence and recognizer.calls == 1
    assert recognizer.referee_calls == 0  # the second opinion hears only what failed


def test_a_misheard_chunk_passes_on_the_second_opinion() -> None:
    text = " ".join(SENTENCES)
    alone = listen(Mishears(), chunk([0, 1, 2]), RATE, text, "en", gap_s=GAP_S)
    assert not alone.passed and not alone.second_opinion  # no other model: the chunk is flagged
    recognizer = Mishears(referee=True)
    refereed = listen(recognizer, chunk([0, 1, 2]), RATE, text, "en", gap_s=GAP_S)
    assert refereed.passed and refereed.second_opinion and refereed.heard == text
    assert recognizer.referee_calls == 1


def test_a_dropped_sentence_fails_the_second_opinion_too() -> None:
    recognizer = StopsAfterTheFirst(referee=True)
    hearing = listen(recognizer, chunk([0, 2]), RATE, " ".join(SENTENCES), "en", gap_s=GAP_S)
    assert not hearing.passed and not hearing.second_opinion and recognizer.referee_calls == 1


def test_sentences_are_cut_at_the_gaps_only() -> None:
    audio = chunk([0, 1, 2])
    assert sentence_spans(audio, RATE, GAP_S) == [(0, 1000), (1250, 2250), (2500, 3500)]
    short = audio.copy()
    short[500:600] = 0  # a pause inside speech shorter than the gap: not a cut
    assert len(sentence_spans(short, RATE, GAP_S)) == 3
    assert sentence_spans(np.ones(10, np.float32), RATE, GAP_S) == [(0, 10)]


class HearsTheText:
    """A recogniser that writes the whole text whatever it hears: what the rate and run rules
    cannot catch, a dropped sentence too short to count (``Pardon me.``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def transcribe(self, samples: np.ndarray, sample_rate: int, lang: str) -> str:
        return self.text

    def second_opinion(self, samples: np.ndarray, sample_rate: int, lang: str) -> str | None:
        return self.text


def test_a_sentence_without_its_own_stretch_of_sound_fails_the_chunk() -> None:
    text = " ".join(SENTENCES)
    dropped = listen(HearsTheText(text), chunk([0, 2]), RATE, text, "en", gap_s=GAP_S, sentences=3)
    assert not dropped.passed and dropped.missing_sentences == 1
    whole = listen(HearsTheText(text), chunk([0, 1, 2]), RATE, text, "en", gap_s=GAP_S, sentences=3)
    assert whole.passed and whole.missing_sentences == 0
    uncounted = listen(HearsTheText(text), chunk([0, 2]), RATE, text, "en", gap_s=GAP_S)
    assert uncounted.passed  # without the count, only what was heard decides
