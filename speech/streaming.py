"""Sentences to encoded bytes, one sentence at a time.

The engine's float32 audio is resampled with one continuous resampler (no seams between
sentences) and fed to one incremental encoder, so bytes leave after the first sentence, not after
the last. Word timings are reported per sentence, shifted to the start of the whole stream.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from speech.audio import AudioFormat, StreamResampler, open_encoder
from speech.synthesizer import Controls, Synthesizer
from speech.types import AudioChunk, WordTiming

if TYPE_CHECKING:
    from speech.voices.entries import Voice
from speech.stream_steps import StreamStep


@dataclass(slots=True)
class StreamStats:
    """What the caller bills and reports once the stream ends (also when it ends early): the
    sentences synthesized (``facade.usage`` bills their share of the text) and the audio."""

    audio_seconds: float = 0.0
    sentences: int = 0
    words: list[WordTiming] = field(default_factory=list)


def _shift(words: list[WordTiming], offset: float) -> list[WordTiming]:
    return [WordTiming(w.word, w.start + offset, w.end + offset) for w in words]


def pcm_stream(
    synthesizer: Synthesizer,
    voice: Voice,
    units: Sequence[StreamStep],
    controls: Controls,
    *,
    sample_rate: int,
    stats: StreamStats,
) -> Generator[AudioChunk, None, None]:
    """Resampled audio chunks at ``sample_rate``, one per unit, timings on the stream clock."""
    resampler: StreamResampler | None = None
    source_rate = 0
    for unit in units:
        source = synthesizer.render(voice, unit, controls)
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
        stats.sentences += 1
        stats.words.extend(words)
        stats.audio_seconds += source.duration
        yield AudioChunk(samples.astype(np.float32), sample_rate, unit.text, words)
    if resampler is not None:
        tail = resampler.flush()
        if len(tail):
            yield AudioChunk(tail.astype(np.float32), sample_rate, "", [])


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
