"""``bench.quality``: its paragraphs cover every language, its DNSMOS scoring hears noise, and its
drift lines flag a precision that falls below float32 by more than issue 24's limits."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from bench.quality import (
    DEV_SENTENCES,
    LIMITS,
    Recording,
    Rendered,
    Row,
    Scores,
    dnsmos,
    drift_lines,
    high_band_db,
    load_paragraphs,
    peak_normalised,
    table_line,
)
from speech.engines.espeak import EspeakEngine
from speech.voices.catalog import Catalog


def test_a_paragraph_for_every_language_of_coda() -> None:
    paragraphs = load_paragraphs()
    assert sorted(paragraphs) == sorted(Catalog.load().languages("coda"))
    # several nine-second DNSMOS windows of speech (a Japanese character is a syllable or more)
    assert all(len(text) >= (60 if lang == "ja" else 120) for lang, text in paragraphs.items())


def test_peak_normalised_reaches_the_peak_and_refuses_silence() -> None:
    audio = peak_normalised(np.array([0.0, -0.25, 0.1], dtype=np.float32))
    assert float(np.max(np.abs(audio))) == pytest.approx(0.99)
    with pytest.raises(ValueError):
        peak_normalised(np.zeros(10, dtype=np.float32))


def test_high_band_energy_reads_hiss_above_a_low_tone() -> None:
    rate = 24000
    t = np.arange(rate) / rate
    tone = np.sin(2 * np.pi * 300 * t)
    hiss = np.random.default_rng(0).standard_normal(rate) * 0.05
    assert high_band_db(tone + hiss, rate) > high_band_db(tone, rate) + 20
    assert np.isnan(high_band_db(tone, 16000))


@pytest.mark.slow
def test_dnsmos_scores_noisy_speech_below_the_same_speech_clean() -> None:
    engine = EspeakEngine.for_language("en")
    chunks = engine.synthesize(["The rain had stopped by the time they reached the bridge.", "The river ran fast."])
    speech = np.concatenate([c.samples for c in chunks]).astype(np.float32)
    noise = np.random.default_rng(0).standard_normal(speech.size).astype(np.float32)
    noise *= np.sqrt(np.mean(speech**2) / np.mean(noise**2) / 10)  # 10 dB SNR
    clean, noisy = dnsmos(speech, engine.sample_rate), dnsmos(speech + noise, engine.sample_rate)
    assert noisy.bak < clean.bak - 0.5
    assert noisy.ovrl < clean.ovrl - 0.3


def _row(precision: str, p808: float, ovrl: float, runtime: str = "torch") -> Row:
    return Row("ivy", "en", "kokoro", precision, runtime, Scores(p808, 3.6, 4.2, ovrl, -15.0), None, 1.0)


def test_drift_lines_flag_a_precision_over_the_limits() -> None:
    rows = [
        _row("float32", 4.20, 3.40),
        _row("int8", 4.20 - LIMITS["p808"] / 2, 3.40 - LIMITS["ovrl"] / 2),
        _row("bfloat16", 4.20 - 2 * LIMITS["p808"], 3.40),
        _row("int8 graph", 4.19, 3.40 - 2 * LIMITS["ovrl"], runtime="onnxruntime"),
    ]
    lines = drift_lines(rows)
    assert len(lines) == 3
    assert lines[0].endswith(" ok") and "precision=int8 " in lines[0]
    assert lines[1].endswith(" OVER") and "precision=bfloat16" in lines[1]
    assert lines[2].endswith(" OVER") and "runtime=onnxruntime" in lines[2]
    assert "| n/a |" in table_line(rows[0])


def test_kernels_are_eager_direct_compiled_or_graphs() -> None:
    """``--kernels``: a name the engine has no path for stops the bench before any model loads."""
    from bench.quality import kokoro_engine
    from speech.voices.catalog import Catalog

    with pytest.raises(SystemExit, match="eager, direct, compiled or graphs"):
        kokoro_engine(Catalog.load().voice("coda", "ivy"), "float32", 1, "fused")


def test_drift_lines_compare_a_gpu_precision_with_float32_on_the_gpu() -> None:
    rows = [
        _row("float32", 4.20, 3.40),
        _row("float32 cuda", 4.30, 3.50),
        _row("bfloat16 cuda", 4.30 - 2 * LIMITS["p808"], 3.50),  # over against cuda, level with cpu
    ]
    lines = drift_lines(rows)
    assert len(lines) == 1
    assert "precision=bfloat16_cuda" in lines[0] and lines[0].endswith(" OVER")


def test_a_recording_replays_what_was_rendered(tmp_path: Path) -> None:
    """``--record`` on a GPU host, ``--replay`` here: the paragraph, its rate and RTF, and each
    CER sentence under its own text come back as they were rendered, in order."""
    rng = np.random.default_rng(1)
    rendered = Rendered(rng.standard_normal(480).astype(np.float32), 24000, 0.0123,
                        {"Second sentence.": rng.standard_normal(7).astype(np.float32), "First.": np.zeros(3, np.float32)})
    recording = Recording()
    recording.put(Recording.key("ivy", "bfloat16 cuda", "torch"), rendered)
    recording.put(Recording.key("owen", "float32 cuda", "torch"), replace(rendered, sentences={}))
    recording.save(tmp_path / "r.npz")
    back = Recording.load(tmp_path / "r.npz")
    assert sorted(back.keys()) == ["ivy|bfloat16 cuda|torch", "owen|float32 cuda|torch"]
    got = back.get("ivy|bfloat16 cuda|torch")
    assert (got.rate, got.rtf) == (24000, pytest.approx(0.0123))
    np.testing.assert_array_equal(got.paragraph, rendered.paragraph)
    assert list(got.sentences) == ["Second sentence.", "First."]
    np.testing.assert_array_equal(got.sentences["Second sentence."], rendered.sentences["Second sentence."])
    assert back.get("owen|float32 cuda|torch").sentences == {}


def test_dev_sentences_are_read_without_the_recognizer() -> None:
    from bench.quality import dev_sentences
    from tests.support.asr_multilingual import sentences

    assert dev_sentences("fr") == [s.text for s in sentences("fr", source=DEV_SENTENCES)]


def test_a_vits_paragraph_is_scored_over_several_draws() -> None:
    """Every draw of the paragraph is in what DNSMOS scores, each followed by the sentences' gap;
    the warm-up is not."""
    from bench.quality import GAP_SECONDS, render

    said: list[str] = []

    def speak(text: str) -> np.ndarray:
        said.append(text)
        return np.full(100, float(len(said)), dtype=np.float32)

    rendered = render(speak, 1000, "one two three four five", "en", None, with_cer=False, draws=3)
    gap = int(GAP_SECONDS * 1000)
    assert said[1:] == ["one two three four five"] * 3 and said[0] != said[1]
    assert rendered.paragraph.size == 3 * (100 + gap)
    assert [float(rendered.paragraph[i * (100 + gap)]) for i in range(3)] == [2.0, 3.0, 4.0]
