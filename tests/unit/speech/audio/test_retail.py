"""Room tone and the retail rule meter: the bed is pink noise at its level, the same however it
is cut into blocks, and the meter reads a known signal's RMS, peak, floor and room tone."""

from __future__ import annotations

import math

import numpy as np
import pytest

from speech.audio.retail import ROOM_TONE_DBFS, RoomTone, Rule, RuleMeter

RATE = 44100


def test_room_tone_is_pink_noise_at_its_level_whatever_the_blocks() -> None:
    whole = RoomTone(RATE, seed=3).take(RATE * 8)
    tone = RoomTone(RATE, seed=3)
    pieces = np.concatenate([tone.take(n) for n in (1000, 44100, 7, RATE * 8 - 45107)])
    assert np.array_equal(whole, pieces)
    rms = 20 * math.log10(float(np.sqrt(np.mean(whole[RATE:].astype(np.float64) ** 2))))
    assert rms == pytest.approx(ROOM_TONE_DBFS, abs=1.0)
    assert np.count_nonzero(whole) == len(whole)  # never digital silence
    # pink: about -3 dB per octave, so an octave band at 4-8 kHz carries ~6 dB less than at 1-2 kHz
    spectrum = np.abs(np.fft.rfft(whole[RATE:])) ** 2
    freqs = np.fft.rfftfreq(len(whole) - RATE, 1 / RATE)

    def band(lo: float) -> float:
        return 10 * math.log10(float(np.sum(spectrum[(freqs >= lo) & (freqs < 2 * lo)])))

    assert band(4000) - band(1000) == pytest.approx(0.0, abs=1.5)  # equal energy per octave
    white_like = 10 * math.log10(float(np.mean(spectrum[(freqs >= 4000) & (freqs < 8000)])) /
                                 float(np.mean(spectrum[(freqs >= 1000) & (freqs < 2000)])))
    assert white_like == pytest.approx(-6.0, abs=1.5)  # per hertz: -3 dB per octave, two octaves


def test_the_meter_reads_rms_peak_floor_and_room_tone_of_a_known_signal() -> None:
    t = np.arange(int(RATE * 3.0)) / RATE
    tone = (0.1 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)  # -23 dBFS RMS, peak -20 dBFS
    quiet = np.full(int(RATE * 0.8), 10 ** (-70 / 20), dtype=np.float32)
    tail = np.full(int(RATE * 2.0), 10 ** (-70 / 20), dtype=np.float32)
    signal = np.concatenate([quiet, tone, tail])
    meter = RuleMeter(RATE)
    for start in range(0, len(signal), 3333):
        meter.add(signal[start : start + 3333])
    squares = np.mean(signal.astype(np.float64) ** 2)
    assert meter.rms_dbfs() == pytest.approx(10 * math.log10(squares), abs=0.01)
    assert meter.peak_dbfs() == pytest.approx(-20.0, abs=0.01)
    assert meter.noise_floor_dbfs() == pytest.approx(-70.0, abs=0.1)
    head, tail_s = meter.room_tone_s()
    assert head == pytest.approx(0.8, abs=0.011) and tail_s == pytest.approx(2.0, abs=0.011)
    assert meter.duration_s == pytest.approx(5.8, abs=1e-3)


def test_a_rule_passes_inside_its_limits_only() -> None:
    assert Rule("RMS", -20.0, -23.0, -18.0, "dBFS").passed
    assert not Rule("RMS", -17.9, -23.0, -18.0, "dBFS").passed
    assert not Rule("peak", float("-inf"), None, -3.0, "dBFS").passed  # nothing to measure is no pass
    assert Rule("peak", -3.2, None, -3.0, "dBFS").to_dict() == {
        "rule": "peak", "measured": -3.2, "limit": {"max": -3.0}, "unit": "dBFS", "pass": True,
    }
