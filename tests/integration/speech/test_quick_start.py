"""A stream's first sentence cut at a clause (``speech.streaming.QuickStart``) with the real
Kokoro voice ``ivy``: the first piece ends at the clause mark, no word is cut or lost, the
timings and the audio (heard back by Whisper) hold the whole sentence, and a stream without a
budget is not cut."""

from __future__ import annotations

import numpy as np
import pytest

from speech.engines.registry import load_engine
from speech.pace import Pace
from speech.stream_steps import steps_for_request
from speech.streaming import QuickStart, StreamStats, pcm_stream
from speech.synthesizer import Controls, Synthesizer
from speech.voices import Catalog
from tests.support.asr import normalise, transcribe, wer

TEXT = "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife. She smiled."
RATE = 24000


@pytest.fixture(scope="module")
def ivy():  # type: ignore[no-untyped-def]
    voice = Catalog.load().voice("coda", "ivy")
    engine = load_engine(voice, device="cpu", dtype="auto")
    return voice, Synthesizer(lambda _: engine)


def _stream(ivy, quick: QuickStart | None):  # type: ignore[no-untyped-def]
    voice, synthesizer = ivy
    units = steps_for_request(TEXT, "en").units
    stats = StreamStats()
    chunks = list(pcm_stream(synthesizer, voice, units, Controls(), sample_rate=RATE, stats=stats,
                             quick_start=quick))
    return chunks, stats, len(units)


def test_the_first_sentence_starts_with_a_piece_cut_at_its_clause(ivy) -> None:  # type: ignore[no-untyped-def]
    voice, _ = ivy
    pace = Pace()
    pace.record(voice.key, 100, 1.0)  # 10 ms a character: a 0.45 s budget holds 45 of them
    chunks, stats, units = _stream(ivy, QuickStart(pace, 0.45))
    spoken = [c for c in chunks if c.text]
    assert spoken[0].text == "It is a truth universally acknowledged,"
    first_sentence = [c.text for c in spoken[:-1]]  # the last unit is "She smiled."
    assert " ".join(first_sentence) == TEXT.removesuffix(" She smiled.")
    assert len(first_sentence) >= 2 and spoken[-1].text == "She smiled."
    assert stats.sentences == units == 2 and not stats.partial
    # Every word in the timings, in order, on one clock; and in the audio.
    assert [w.word.strip(",.").lower() for w in stats.words] == [w.strip(",.").lower() for w in TEXT.split()]
    starts = [w.start for w in stats.words]
    assert starts == sorted(starts) and stats.words[-1].end <= stats.audio_seconds + 1e-6
    audio = np.concatenate([c.samples for c in chunks])
    assert abs(len(audio) / RATE - stats.audio_seconds) < 0.05
    heard = transcribe(audio, RATE)
    assert wer(TEXT, heard) <= 0.1, heard
    words = normalise(heard).split()
    assert {"truth", "acknowledged", "fortune", "wife", "smiled"} <= set(words), heard  # both ends of each piece


def test_no_budget_no_cut(ivy) -> None:  # type: ignore[no-untyped-def]
    chunks, stats, units = _stream(ivy, None)
    assert [c.text for c in chunks if c.text] == [TEXT.removesuffix(" She smiled."), "She smiled."]
    assert stats.sentences == units


def test_a_voice_not_measured_yet_is_not_cut(ivy) -> None:  # type: ignore[no-untyped-def]
    pace = Pace()
    chunks, _, _ = _stream(ivy, QuickStart(pace, 0.45))
    assert [c.text for c in chunks if c.text][0] == TEXT.removesuffix(" She smiled.")
    assert pace.chars_within(ivy[0].key, 1.0)  # and now it is
