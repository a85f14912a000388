"""speech.asr.WhisperRecognizer with its real model (Whisper tiny.en from its registry package):
the real voice's sentence is heard as written, on a thread below the process's priority."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from speech.asr import WhisperRecognizer, score, threshold
from speech.synthesizer import prepare
from tests.support.asr_multilingual import model_dir

pytestmark = [pytest.mark.slow]
SENTENCE = "The ferry left the harbour an hour late because the fog would not lift."


def test_joe_is_heard_as_written_on_a_lower_priority_thread(vits_engine: Any, tmp_path: Path) -> None:
    recognizer = WhisperRecognizer(cache_root=tmp_path, cpu_threads=1, niceness=3)
    # joe draws fresh noise on every render, and one render in a full suite was heard as "the
    # fairy left the harbor in our late": as the QA check itself does, a failing render is
    # made once more, and one of the two must be heard as written.
    heard: list[str] = []
    for _ in range(2):
        (chunk,) = vits_engine.synthesize(prepare(SENTENCE, "en"))
        heard.append(recognizer.transcribe(chunk.samples, chunk.sample_rate, "en"))
        if not score(SENTENCE, heard[-1], "en").fails(threshold("en")):
            break
    assert not score(SENTENCE, heard[-1], "en").fails(threshold("en")), heard
    if hasattr(os, "setpriority"):
        pool = recognizer._thread  # noqa: SLF001 - the recognizer's own thread
        assert pool is not None
        mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        theirs = pool.submit(lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id())).result()
        assert theirs == min(mine + 3, 19)


def test_english_has_whisper_base_as_its_second_opinion_and_no_other_language_has_one(vits_engine: Any) -> None:
    cache = model_dir().parent  # Whisper base joined once for the suite
    recognizer = WhisperRecognizer(cache_root=cache, cpu_threads=1)
    (chunk,) = vits_engine.synthesize(prepare(SENTENCE, "en"))
    heard = recognizer.second_opinion(chunk.samples, chunk.sample_rate, "en")
    assert heard is not None and list(recognizer._models) == ["base"]  # noqa: SLF001 - tiny.en is the first look's
    assert not score(SENTENCE, heard, "en").fails(threshold("en")), heard
    assert recognizer.second_opinion(chunk.samples, chunk.sample_rate, "de") is None
    plain = WhisperRecognizer(cache_root=cache, cpu_threads=1, referee=False)
    assert plain.second_opinion(chunk.samples, chunk.sample_rate, "en") is None
