"""Helpers for the audio tests: synthetic signals and a PyAV decoder for every format."""

from __future__ import annotations

import io
from collections.abc import Callable

import av
import numpy as np
import pytest

from speech.audio.formats import AudioFormat

Decoded = tuple[int, np.ndarray]


def _decode(data: bytes, fmt: AudioFormat, rate: int) -> Decoded:
    """Decode ``data`` with PyAV (FFmpeg), independently of our encoders; mono float32 out.

    Opus is decoded with libopus, the reference decoder that browsers use. FFmpeg's native Opus
    decoder (its default) mis-decodes pure swept tones coded in SILK/hybrid mode (<= 32 kb/s):
    peaks of 1.3 for a 0.3 sweep, where libopus returns the sweep. Speech-like signals decode
    the same in both.
    """
    kwargs: dict = {}
    if fmt is AudioFormat.PCM:
        kwargs = {"format": "s16le", "options": {"sample_rate": str(rate), "ch_layout": "mono"}}
    elif fmt is AudioFormat.MULAW:
        kwargs = {"format": "mulaw", "options": {"sample_rate": str(rate), "ch_layout": "mono"}}
    with av.open(io.BytesIO(data), **kwargs) as container:
        stream = container.streams.audio[0]
        if stream.codec_context.name == "opus":
            decoder = av.CodecContext.create("libopus", "r")
            decoder.extradata = stream.codec_context.extradata
            frames = [f for packet in container.demux(stream) for f in decoder.decode(packet)]
        else:
            frames = list(container.decode(stream))
        out_rate = frames[0].sample_rate if frames else stream.codec_context.sample_rate
        arrays = [f.to_ndarray() for f in frames]
    if not arrays:
        return out_rate, np.zeros(0, np.float32)
    # mono only: packed s16 comes as (1, n) int16, planar float as (1, n) float32
    samples = np.concatenate([a.reshape(-1) for a in arrays])
    if np.issubdtype(samples.dtype, np.integer):
        return out_rate, (samples.astype(np.float32) / 32768.0)
    return out_rate, samples.astype(np.float32)


def _sweep(rate: int, seconds: float, f0: float = 100.0, f1: float = 4000.0, amp: float = 0.3) -> np.ndarray:
    t = np.arange(int(round(rate * seconds))) / rate
    k = (f1 - f0) / seconds
    return (amp * np.sin(2 * np.pi * (f0 * t + 0.5 * k * t * t))).astype(np.float32)


@pytest.fixture
def decode() -> Callable[[bytes, AudioFormat, int], Decoded]:
    return _decode


@pytest.fixture
def sweep() -> Callable[..., np.ndarray]:
    return _sweep
