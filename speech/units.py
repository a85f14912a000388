"""What a streamed request is made of, in order: sentences to speak, pauses, raw phonemes.

The vendor's inline markup (``<200>`` pauses, ``{phonemes}``, ``[word]`` at its own speed) is
parsed only when its flag is on; otherwise the text is plain and each sentence is one unit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from speech.synthesizer import prepare
from speech.text import PauseSegment, PhonemeSegment, TextSegment, parse_markup


@dataclass(frozen=True, slots=True)
class StreamStep:
    """One step of a stream: exactly one of ``text``, ``pause_ms`` or ``phonemes`` is set."""

    text: str = ""
    pause_ms: int = 0
    phonemes: str = ""
    speed: float | None = None  # an inline speedAlpha for this stretch; None: the request's


def plan_units(
    text: str,
    lang: str,
    *,
    normalize_text: bool = True,
    pause_between_brackets: bool = False,
    phonemize_between_brackets: bool = False,
    inline_speed_alpha: str | Sequence[float] | None = None,
) -> list[StreamStep]:
    segments = parse_markup(
        text,
        pause_between_brackets=pause_between_brackets,
        phonemize_between_brackets=phonemize_between_brackets,
        inline_speed_alpha=inline_speed_alpha or None,
    )
    units: list[StreamStep] = []
    for segment in segments:
        if isinstance(segment, PauseSegment):
            units.append(StreamStep(pause_ms=segment.ms))
        elif isinstance(segment, PhonemeSegment):
            units.append(StreamStep(phonemes=segment.phonemes))
        elif isinstance(segment, TextSegment):
            units.extend(StreamStep(text=s, speed=segment.speed) for s in prepare(segment.text, lang, normalize_text=normalize_text))
    return units
