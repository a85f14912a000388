"""phonemizer's "words count mismatch" warning (eSpeak NG joins "of the", splits numbers) is said
once per process at INFO, not once per sentence."""

from __future__ import annotations

import logging

import pytest

from speech.text import phonemize as module
from speech.text.phonemize import EspeakPhonemizer


def test_word_count_mismatch_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    for once in module._log.filters:  # as in a fresh process: earlier tests may have had it said
        once._said = False  # type: ignore[attr-defined]
    phonemizer = EspeakPhonemizer()
    with caplog.at_level(logging.DEBUG, logger="lector.phonemizer"):
        for sentence in ("Most of the time it works.", "One of the best of the lot.", "It is 3.5 of the way."):
            assert phonemizer.phonemize(sentence, "en-us")
    mismatch = [r for r in caplog.records if "words" in r.getMessage() and r.name == "lector.phonemizer"]
    assert len(mismatch) == 1  # three sentences that each mismatch: said once
    assert all(r.levelno == logging.INFO for r in mismatch)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and "mismatch" in r.getMessage()]
