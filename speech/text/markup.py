"""The vendor's inline markup, parsed into segments.

Three bracket forms, each live only when its request parameter turns it on:

- ``<200>``: a 200 ms pause (``pauseBetweenBrackets``);
- ``{h ə l oʊ}``: phonemes, spoken as written (``phonemizeBetweenBrackets``);
- ``[word]``: a stretch spoken at its own speed; ``inlineSpeedAlpha`` ("0.5, 3") gives the
  speeds, applied in order to the bracketed stretches. Brackets beyond the list get the
  request's speed (``speed=None``).

When a parameter is off its brackets are not markup: they stay in the text exactly as written
(nothing is stripped), so a client that never asked for markup gets its text back unchanged.
Normalise only the ``TextSegment``s: markup must reach the engine untouched.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, TypeAlias

from speech.errors import TextError
from speech.text.offsets import SourceSpan, Traced

MAX_PAUSE_MS: Final = 10_000
"""Longer pauses are clamped: a typo like ``<200000>`` should not make minutes of silence."""


@dataclass(frozen=True, slots=True)
class Voicing:
    """How a stretch is spoken beyond its words, set by SSML (``speech.text.ssml``); the default
    is the request's own voice, language, speed and level. The vendor's brackets never set it."""

    rate: float | None = None
    """A speaking-rate factor (2.0: twice as fast), on top of the request's speed."""
    gain_db: float = 0.0
    """A level change applied to the audio as made (SSML volume and emphasis)."""
    lang: str | None = None
    """Another language than the voice's (SSML ``lang``); ``None``: the voice's own."""
    voice: str | None = None
    """Another voice of the same model (SSML ``voice``); ``None``: the request's speaker."""


PLAIN: Final = Voicing()


@dataclass(frozen=True, slots=True)
class TextSegment:
    text: str
    speed: float | None = None
    """The inline speed for a ``[bracketed]`` stretch; ``None`` means the request's speed."""
    voicing: Voicing = PLAIN
    origin: Traced | None = field(default=None, compare=False)
    """``text`` with each character's span in the submitted text (``origin.text == text``), for
    the offsets word timings carry; None where the segment was built without one."""


@dataclass(frozen=True, slots=True)
class PauseSegment:
    ms: int
    implied: bool = field(default=False, compare=False)
    """A pause no element asked for (the end of an SSML ``p``): a book's edges leave it out,
    where an explicit ``break`` is kept (``books.job_ssml``)."""


@dataclass(frozen=True, slots=True)
class PhonemeSegment:
    phonemes: str
    word: str = ""
    """What the phonemes say, as written (SSML ``phoneme``'s text, a lexicon's grapheme): shown
    in word timings and billed instead of the phonemes; empty for the vendor's ``{...}``."""
    voicing: Voicing = PLAIN
    source: SourceSpan | None = field(default=None, compare=False)
    """Where ``word`` was written in the submitted text (None: not known, or no word)."""


@dataclass(frozen=True, slots=True)
class MarkSegment:
    """An SSML ``mark``: no sound; its name is reported in the word timings where it falls."""

    name: str


Segment: TypeAlias = TextSegment | PauseSegment | PhonemeSegment | MarkSegment

_PAUSE: Final = r"<(?P<pause>\d+(?:\.\d+)?)>"  # Pipecat writes <500.0>
_PHONEMES: Final = r"\{(?P<phonemes>[^{}]*)\}"
_SPEED: Final = r"\[(?P<speed>[^\[\]]*)\]"


def parse_inline_speeds(value: str | Sequence[float] | None) -> tuple[float, ...] | None:
    """``"0.5, 3"`` -> ``(0.5, 3.0)``; ``None`` or ``""`` -> ``None``.

    Raises ``TextError`` when an item is not a positive finite number.
    """
    if value is None:
        return None
    items: list[object] = (
        [p.strip() for p in value.split(",") if p.strip()] if isinstance(value, str) else list(value)
    )
    if not items:
        return None
    speeds: list[float] = []
    for item in items:
        try:
            speed = float(item)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise TextError("inlineSpeedAlpha must be a comma-separated list of numbers") from None
        if not math.isfinite(speed) or speed <= 0:
            raise TextError("inlineSpeedAlpha values must be positive numbers")
        speeds.append(speed)
    return tuple(speeds)


def parse_markup(
    text: str,
    *,
    pause_between_brackets: bool = False,
    phonemize_between_brackets: bool = False,
    inline_speed_alpha: str | Sequence[float] | None = None,
    max_pause_ms: int = MAX_PAUSE_MS,
) -> list[Segment]:
    """``"Hi <200> [there]"`` with pauses and speeds ``"2"`` ->
    ``[TextSegment("Hi "), PauseSegment(200), TextSegment(" "), TextSegment("there", 2.0)]``.

    Adjacent plain text is merged; empty text, empty phonemes and zero pauses are dropped.
    """
    speeds = parse_inline_speeds(inline_speed_alpha)
    forms = [
        form
        for form, on in (
            (_PAUSE, pause_between_brackets),
            (_PHONEMES, phonemize_between_brackets),
            (_SPEED, speeds is not None),
        )
        if on
    ]
    if not forms:
        return [TextSegment(text, origin=Traced.of(text))] if text else []

    segments: list[Segment] = []

    def add_text(start: int, end: int, speed: float | None = None) -> None:
        if start >= end:
            return
        piece = Traced.of(text[start:end], start)
        last = segments[-1] if segments else None
        if speed is None and isinstance(last, TextSegment) and last.speed is None and last.origin is not None:
            segments[-1] = TextSegment(last.text + piece.text, origin=last.origin + piece)
        else:
            segments.append(TextSegment(piece.text, speed, origin=piece))

    cursor = 0
    bracket_index = 0
    for m in re.finditer("|".join(forms), text):
        add_text(cursor, m.start())
        cursor = m.end()
        groups = m.groupdict()
        if groups.get("pause") is not None:
            ms = min(round(float(groups["pause"])), max_pause_ms)
            if ms > 0:
                segments.append(PauseSegment(ms))
        elif groups.get("phonemes") is not None:
            phonemes = groups["phonemes"].strip()
            if phonemes:
                segments.append(PhonemeSegment(phonemes))
        elif speeds is not None:
            speed = speeds[bracket_index] if bracket_index < len(speeds) else None
            bracket_index += 1
            if speed is None:
                add_text(m.start("speed"), m.end("speed"))
            elif groups["speed"]:
                segments.append(
                    TextSegment(groups["speed"], speed, origin=Traced.of(groups["speed"], m.start("speed")))
                )
    add_text(cursor, len(text))
    return segments


def spoken_text(segments: Sequence[Segment]) -> str:
    """The words of the text segments, joined: what is normalised, counted and shown. A
    phoneme segment counts the word it says (empty for the vendor's ``{...}``); pauses and
    marks count nothing."""
    return "".join(
        s.text if isinstance(s, TextSegment) else s.word if isinstance(s, PhonemeSegment) else "" for s in segments
    )
