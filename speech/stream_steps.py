"""What a streamed request is made of, in order: sentences to speak, pauses, raw phonemes, marks.

The vendor's inline markup (``<200>`` pauses, ``{phonemes}``, ``[word]`` at its own speed) is
parsed only when its flag is on; otherwise the text is plain and each sentence is one unit. An
SSML document (``speech.text.ssml``) gives the same kinds of units, each with how it is voiced
(rate, level, language, voice). Pronunciation lexicons (``speech.text.pls``) apply to the text
stretches before they are normalised, so graphemes are matched as the customer wrote them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from speech.synthesizer import prepare_traced
from speech.text import PauseSegment, PhonemeSegment, Segment, TextSegment, parse_markup
from speech.text.markup import MarkSegment
from speech.text.offsets import Traced, locate
from speech.text.pls import PronunciationLexicon, apply_lexicons
from speech.text.ssml import parse_ssml
from speech.types import AudioChunk

if TYPE_CHECKING:
    from speech.voices.entries import Voice


@dataclass(frozen=True, slots=True)
class StreamStep:
    """One step of a stream: exactly one of ``text``, ``pause_ms``, ``phonemes`` or ``mark`` is set."""

    text: str = ""
    pause_ms: int = 0
    phonemes: str = ""
    speed: float | None = None  # an inline speed for this stretch (the caller makes it a rate); None: the request's
    word: str = ""  # what ``phonemes`` say as written (SSML phoneme, a lexicon): shown in timings
    rate: float | None = None  # an SSML rate factor (2.0 twice as fast), on top of the request's speed
    gain_db: float = 0.0  # SSML volume/emphasis: a gain on the audio as made
    lang: str | None = None  # SSML lang: the text's language when it is not the voice's
    speaker: str | None = None  # SSML voice: another voice of the model, by name
    voice: Voice | None = None  # that voice, resolved by the caller through the catalog
    mark: str = ""  # an SSML mark: no audio, its name in the word timings
    origin: Traced | None = field(default=None, compare=False)
    """What this step says (``text``, or ``word`` for phonemes) with each character's span in the
    submitted text: where its word timings point (``located``). None: not known."""


@dataclass(frozen=True, slots=True)
class StreamSteps:
    units: list[StreamStep]
    billed_text: str
    """The text billed for the request: the request's text, or for SSML only what is spoken
    (``speech.text.ssml.Ssml.written``), never its markup."""


def steps_for_request(
    text: str,
    lang: str,
    *,
    ssml: bool = False,
    lexicons: Sequence[PronunciationLexicon] = (),
    normalize_text: bool = True,
    pause_between_brackets: bool = False,
    phonemize_between_brackets: bool = False,
    inline_speed_alpha: str | Sequence[float] | None = None,
) -> StreamSteps:
    """The request's units; ``ssml``: ``text`` is a ``<speak>`` document (the bracket markup
    flags then do not apply: SSML has its own elements for all three)."""
    segments: list[Segment]
    if ssml:
        document = parse_ssml(text, voice_lang=lang)
        segments, billed = document.segments, document.written
    else:
        segments = parse_markup(
            text,
            pause_between_brackets=pause_between_brackets,
            phonemize_between_brackets=phonemize_between_brackets,
            inline_speed_alpha=inline_speed_alpha or None,
        )
        billed = text
    segments = apply_lexicons(segments, lexicons, lang)
    return StreamSteps(_steps(segments, lang, normalize_text), billed)


def plan_segments(
    segments: Sequence[Segment], lang: str, *, lexicons: Sequence[PronunciationLexicon] = (), normalize_text: bool = True
) -> list[StreamStep]:
    """Units of segments already parsed (an SSML job's chunk, kept as its steps in the job's plan)."""
    return _steps(apply_lexicons(list(segments), lexicons, lang), lang, normalize_text)


def _steps(segments: Sequence[Segment], lang: str, normalize_text: bool) -> list[StreamStep]:
    units: list[StreamStep] = []
    for segment in segments:
        if isinstance(segment, PauseSegment):
            units.append(StreamStep(pause_ms=segment.ms))
        elif isinstance(segment, MarkSegment):
            units.append(StreamStep(mark=segment.name))
        elif isinstance(segment, PhonemeSegment):
            v = segment.voicing
            said = Traced.spread(segment.word, segment.source) if segment.source is not None else None
            units.append(StreamStep(phonemes=segment.phonemes, word=segment.word, rate=v.rate, gain_db=v.gain_db,
                                    speaker=v.voice, origin=said))
        elif isinstance(segment, TextSegment):
            v = segment.voicing
            known = segment.origin is not None
            units.extend(
                StreamStep(text=s.text, speed=segment.speed, rate=v.rate, gain_db=v.gain_db, lang=v.lang, speaker=v.voice,
                           origin=s if known else None)
                for s in prepare_traced(segment.origin or Traced.of(segment.text), v.lang or lang,
                                        normalize_text=normalize_text)
            )
    return units


def located(chunk: AudioChunk, step: StreamStep) -> AudioChunk:
    """``chunk`` (``step`` spoken) with each word timing's span in the submitted text."""
    if step.origin is None or not chunk.words:
        return chunk
    return AudioChunk(chunk.samples, chunk.sample_rate, chunk.text, locate(chunk.words, step.origin))
