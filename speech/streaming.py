"""Sentences to encoded bytes, one sentence at a time.

The engine's float32 audio is resampled with one continuous resampler (no seams between
sentences) and fed to one incremental encoder, so bytes leave after the first sentence, not after
the last. Word timings are reported per sentence, shifted to the start of the whole stream.

A streamed request (``QuickStart``) may have its first sentence cut at a clause
(``speech.text.first_piece``) when the voice's recent pace (``speech.pace``) says the whole
sentence would keep the listener waiting longer than the budget: a short first piece, then the
rest, each later piece cut again only if it would not be ready before the audio ahead of it has
played. Only the first sentence: after it, the audio already out covers the next one's compute.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from speech.audio import AudioFormat, StreamResampler, open_encoder
from speech.pace import Pace
from speech.synthesizer import BatchSynthesizer, Controls
from speech.text.first_piece import cut_first
from speech.text.offsets import Traced
from speech.types import AudioChunk, WordTiming

if TYPE_CHECKING:
    from speech.voices.entries import Voice
from speech.stream_steps import StreamStep, located


@dataclass(slots=True)
class StreamStats:
    """What the caller bills and reports once the stream ends (also when it ends early): the
    sentences synthesized (``facade.usage`` bills their share of the text) and the audio."""

    audio_seconds: float = 0.0
    sentences: int = 0  # units whose audio is all made
    words: list[WordTiming] = field(default_factory=list)
    partial: bool = False  # the first piece of the next unit is made, not yet all of it (QuickStart)

    @property
    def begun(self) -> int:
        """Units with audio made, the one cut part-way included: what a stream cut short bills
        (the first piece of a sentence went out, so the sentence counts)."""
        return self.sentences + self.partial


@dataclass(frozen=True, slots=True)
class QuickStart:
    """A streamed request's first-audio budget: ``budget_s`` of wall time for its first piece at
    the voice's pace in ``pace`` (which every sentence of the stream updates)."""

    pace: Pace
    budget_s: float


def _shift(words: list[WordTiming], offset: float) -> list[WordTiming]:
    return [replace(w, start=w.start + offset, end=w.end + offset) for w in words]


def pcm_stream(
    synthesizer: BatchSynthesizer,
    voice: Voice,
    units: Sequence[StreamStep],
    controls: Controls,
    *,
    sample_rate: int,
    stats: StreamStats,
    quick_start: QuickStart | None = None,
) -> Generator[AudioChunk, None, None]:
    """Resampled audio chunks at ``sample_rate``, one per unit (one per piece of the first
    sentence, under ``quick_start``), timings on the stream clock."""
    resampler: StreamResampler | None = None
    source_rate = 0
    first_text = True
    for unit in units:
        cut = quick_start is not None and first_text and bool(unit.text) and not _foreign(unit, voice)
        first_text = first_text and not unit.text
        for source, last in _pieces(synthesizer, voice, unit, controls, quick_start, cut=cut):
            if resampler is not None and source.sample_rate != source_rate:
                # an SSML voice switch to an engine of another rate: finish the old resampler's tail
                tail = resampler.flush()
                if len(tail):
                    yield AudioChunk(tail.astype(np.float32), sample_rate, "", [])
                resampler = None
            if resampler is None:
                resampler = StreamResampler(source.sample_rate, sample_rate)
                source_rate = source.sample_rate
            samples = resampler.process(source.samples)
            words = _shift(source.words, stats.audio_seconds)
            stats.sentences += last
            stats.partial = not last
            stats.words.extend(words)
            stats.audio_seconds += source.duration
            yield AudioChunk(samples.astype(np.float32), sample_rate, source.text or unit.text, words)
    if resampler is not None:
        tail = resampler.flush()
        if len(tail):
            yield AudioChunk(tail.astype(np.float32), sample_rate, "", [])


def _foreign(unit: StreamStep, voice: Voice) -> bool:
    """Text in another language than its voice's (SSML ``lang``): spoken as phonemes, whole."""
    speaker = unit.voice or voice
    return bool(unit.lang) and unit.lang != speaker.lang


def _pieces(
    synthesizer: BatchSynthesizer,
    voice: Voice,
    unit: StreamStep,
    controls: Controls,
    quick_start: QuickStart | None,
    *,
    cut: bool,
) -> Iterator[tuple[AudioChunk, bool]]:
    """The unit's audio, whole or (``cut``) piece by piece, each with whether it is the last;
    every text piece's wall time goes into the pace."""
    if quick_start is None:
        yield located(synthesizer.render(voice, unit, controls), unit), True
        return
    pace = quick_start.pace
    synthesizer.engine(unit.voice or voice)  # a voice's first use loads it: not part of its pace
    key = (unit.voice or voice).key
    lang = unit.lang or (unit.voice or voice).lang
    rest = unit.text
    # Where the rest stands in the submitted text, cut alongside it: each piece's words are
    # located in its own stretch (a word spoken twice in a sentence keeps its own offset).
    rest_origin = unit.origin if unit.origin is not None and unit.origin.text == rest else None
    budget, phrases = quick_start.budget_s, True
    while True:
        max_chars = pace.chars_within(key, budget) if cut else None
        allowed = rest_origin.parts_at if rest_origin is not None else None
        split = cut_first(rest, lang, max_chars, phrases=phrases, allowed=allowed) if max_chars is not None else None
        piece = replace(unit, text=split[0] if split else rest, origin=_cut_origin(rest, rest_origin, split[0] if split else None))
        began = time.perf_counter()
        chunk = located(synthesizer.render(voice, piece, controls), piece)
        if piece.text:
            pace.record(key, len(piece.text), time.perf_counter() - began)
        if split is None:
            yield chunk, True
            return
        yield chunk, False
        rest_origin = _cut_origin(rest, rest_origin, split[1], tail=True)
        rest = split[1]
        # The next piece has until this one has played; cut again at a clause mark only.
        budget, phrases = chunk.duration, False


def _cut_origin(text: str, origin: Traced | None, part: str | None, *, tail: bool = False) -> Traced | None:
    """The stretch of ``origin`` (``text``, traced) that ``part`` covers (the first piece, or
    with ``tail`` the rest); the whole of it without a part; None where it cannot be found."""
    if origin is None or part is None:
        return origin
    at = text.rfind(part) if tail else text.find(part)
    return None if at < 0 else origin.slice(at, at + len(part))


def encoded_stream(
    chunks: Iterator[AudioChunk], fmt: AudioFormat, sample_rate: int, *, bitrate: int | None = None
) -> Generator[bytes, None, None]:
    encoder = open_encoder(fmt, sample_rate, bitrate=bitrate)
    for chunk in chunks:
        data = encoder.encode(chunk.samples)
        if data:
            yield data
    tail = encoder.finish()
    if tail:
        yield tail
