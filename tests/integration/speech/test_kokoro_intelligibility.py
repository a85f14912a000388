"""Whisper base (multilingual, offline) must understand the flagship Kokoro voices in all ten
API languages, on sentences no voice or front end was tuned on.

Each language has twenty held-out sentences (``tests/data/intelligibility.toml``) and twenty
development ones (``intelligibility_dev.toml``, for tuning with ``python -m
bench.intelligibility``), everyday and literary, written for lector. Speech goes through the
service's front end (``prepare``), catalog voice and engine loader, at the precision the
service picks on this machine (``auto``). The transcript, language forced, is scored by
character error rate over a voice's sentences together; a transcript Whisper wrote as an English
translation, or partly in Latin letters where the language has its own script, is decoded again
(``asr_multilingual.transcribe``), so the recogniser's translation is not counted as the voice's
error.

The target (issue 24): every language's first female and first male ``coda`` voice at most
0.10 on the held-out set, Arabic 0.30. Voices measured over it are held to their level plus a
margin (``SHORTFALL``), so that a regression still fails and README can say where the target
is not met.

What CI runs, and why that is enough: ``make test`` must stay within its time budget, so by
default each language's first female voice reads held-out sentences 1-4 and its first male
voice sentences 5-8 (twenty voices, eighty sentences, each of the first eight sentences of a
language heard once a run; rendering them is three quarters of this file's minutes). That
catches a front end, engine or precision change that breaks a language or a voice (such breaks
moved whole languages by 0.1-0.5), at four sentences per voice against the same limits. CI hears a voice's sentences in passages of up to 25 s (``passages``)
rather than one by one: a third of Whisper's time, and context that helps it a little (joined,
lena 0.028 against 0.081 sentence by sentence, julien 0.055 against 0.097, ivy 0.011 both; Zen
4), so these limits, set on single sentences, keep a margin; a passage heard over the target is
heard sentence by sentence as well, the better reading counting (``heard_as``). The figure per voice is the
twenty sentences, one by one: ``python -m bench.intelligibility <lang> <voices> --set heldout``
(per sentence transcripts); ``KOKORO_ASR_SENTENCES=all`` here reads all twenty, in passages. ``KOKORO_ASR_VOICES=all`` checks all four coda voices of a
language. The figures per voice, development and held-out, per kernel set, are in the issue's
note (``ATEN_CPU_CAPABILITY`` forces the kernels of another CPU family).

The source STFT's phase used to follow the last bits of the excitation (``decoder._phase``), one
reason the same voice moved by up to 0.16 between hosts and kernel sets; it no longer does, and
in float32 a voice's audio under the avx2 and avx512 kernels agrees to 52-72 dB. The int8 path
still differs between kernel sets upstream: its F0 branch moves by up to 0.2 Hz, and the
integrated harmonic phase follows (a note for issue 24's precision work). Held-out figures
under ``ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2`` against the native AVX-512 kernels
(Zen 5): sanne 0.124 against 0.121, julien 0.149 against 0.160.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from speech.engines.registry import load_engine
from speech.synthesizer import prepare
from speech.text.languages import SUPPORTED
from speech.voices.catalog import Catalog
from tests.support.asr_multilingual import Sentence, cer, sentences, transcribe

pytestmark = [pytest.mark.slow, pytest.mark.integration]

TARGET = {lang: 0.30 if lang == "ar" else 0.10 for lang in SUPPORTED}
# Voices over the target on the held-out set (see the docstring): the higher of the measured
# twenty-sentence and CI-slice figures (docs/voices.md: Intel Xeon, float32, with the front-end
# fixes of 2026-11-25; AMD EPYC Zen 5 where marked) plus 0.05, a regression guard, so README can
# say where the target is not met. CI slices of four sentences: Intel Xeon (AMX, so `auto` is
# bfloat16), 2026-11-26. julien, omar and priya: Zen 5, 2026-11-26, the highest of float32 and
# bfloat16 on the native and the AVX2 kernels, the slice heard sentence by sentence.
SHORTFALL: dict[tuple[str, str], float] = {
    ("ar", "layla"): 0.41,  # 0.278 held-out, 0.362 on her CI slice
    ("ar", "omar"): 0.36,  # 0.314 held-out, 0.251 on his slice
    ("fr", "julien"): 0.16,  # 0.091 held-out, 0.112 on his slice (em_alex 0.8 + ff_siwis 0.2)
    ("hi", "priya"): 0.24,  # 0.185 held-out, 0.113 on her slice
    ("hi", "rohan"): 0.19,  # 0.085, 0.079 (AMD: 0.097 held-out, 0.140 on the five-sentence slice)
}


def limit(lang: str, speaker: str) -> float:
    """The highest character error rate the test accepts from ``speaker`` in ``lang``."""
    return SHORTFALL.get((lang, speaker), TARGET[lang])


# Sentences per voice in CI: the first female voice reads a language's held-out sentences
# [0, 4), the first male one [4, 8); ``KOKORO_ASR_SENTENCES=all`` reads all twenty with each.
SENTENCES_PER_VOICE = os.environ.get("KOKORO_ASR_SENTENCES", "4")


def _sentences(lang: str, slot: int) -> list[Sentence]:
    """The held-out sentences voice number ``slot`` of a language reads (see above)."""
    every = sentences(lang)
    if SENTENCES_PER_VOICE == "all":
        return every
    count = int(SENTENCES_PER_VOICE)
    start = (slot * count) % len(every)
    return (every + every)[start : start + count]


def _voices() -> list[tuple[str, str]]:
    """(lang, speaker): per language the coda voices to check (see the module docstring)."""
    catalog = Catalog.load()
    which = os.environ.get("KOKORO_ASR_VOICES", "pairs")
    chosen: list[tuple[str, str]] = []
    for lang in SUPPORTED:
        lineup = [v for v in catalog.voices_of("coda", lang) if v.engine == "kokoro"]
        if which == "all":
            chosen += [(lang, v.speaker) for v in lineup]
        elif which == "pairs":
            for gender in ("Female", "Male"):
                chosen += [(lang, v.speaker) for v in lineup if v.gender == gender][:1]
        else:  # "first"
            chosen.append((lang, lineup[0].speaker))
    return chosen


def _slot(lineup: list[str], speaker: str) -> int:
    """0 for a language's first female voice, 1 for its first male one (the CI pair), then the
    catalog order: which slice of the held-out set the voice reads in CI."""
    return lineup.index(speaker)


PASSAGE_S = 25.0
"""Whisper hears a voice's sentences in passages of up to this much audio, one decoding each:
its encoder reads 30 s windows whatever the input, so five sentences heard one by one cost five
windows where one would do (1.5-2.3 s against 4.4-5.2 s a voice on Zen 4). Beyond 30 s it would
slide to a second window that may cut a word, hence the margin."""


def _speak(engine, texts: list[str], lang: str) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    """Each text's audio, its chunks 0.25 s apart. All of them go to the engine in one call, as a
    book's sentences do: it batches them (``bench.engine`` on a Zen 3: 7% less time than one by
    one), and a padded batch's item sounds as it does alone (``test_generator.py``)."""
    prepared = [prepare(text, lang) for text in texts]
    chunks = iter(engine.synthesize([piece for pieces in prepared for piece in pieces]))
    gap = np.zeros(int(0.25 * engine.sample_rate), dtype=np.float32)
    spoken = []
    for pieces in prepared:
        mine = [next(chunks) for _ in pieces]
        spoken.append(np.concatenate([part for chunk in mine for part in (chunk.samples, gap)]))
    return spoken


def passages(spoken: list[tuple[Sentence, np.ndarray]], sample_rate: int) -> list[list[tuple[Sentence, np.ndarray]]]:
    """Consecutive sentences grouped while their audio stays within ``PASSAGE_S``."""
    groups: list[list[tuple[Sentence, np.ndarray]]] = []
    for sentence, audio in spoken:
        if groups and sum(len(a) for _, a in groups[-1]) + len(audio) <= PASSAGE_S * sample_rate:
            groups[-1].append((sentence, audio))
        else:
            groups.append([(sentence, audio)])
    return groups


def joined(group: list[tuple[Sentence, np.ndarray]]) -> tuple[tuple[str, ...], np.ndarray]:
    """A passage's renderings (its sentences' first renderings joined, then their second, ...)
    and its audio."""
    width = max(len(s.renderings) for s, _ in group)
    renderings = tuple(" ".join(s.renderings[min(i, len(s.renderings) - 1)] for s, _ in group) for i in range(width))
    return renderings, np.concatenate([a for _, a in group])


def heard_as(group: list[tuple[Sentence, np.ndarray]], lang: str, rate: int) -> tuple[float, int, str]:
    """(character edits, reference characters, transcript) of a passage: heard whole, and where
    that is over the language's target, sentence by sentence too, the better reading counting.
    Whisper base sometimes stops part-way through a passage and fills the rest with punctuation
    (a Hindi passage of ``priya``'s: two sentences of five, CER 0.60), which is the recogniser's
    error, as the product's check reads it (``speech.asr.listen``); a voice's defect fails both."""
    renderings, audio = joined(group)
    weight = len(renderings[0])
    heard = transcribe(audio, rate, lang)
    edits = cer(renderings, heard, lang) * weight
    if edits / weight > TARGET[lang] and len(group) > 1:
        alone = [(s, transcribe(a, rate, lang)) for s, a in group]
        other = sum(cer(s.renderings, h, lang) * len(s.text) for s, h in alone)
        total = sum(len(s.text) for s, _ in group)
        if other / total < edits / weight:
            return other, total, " | ".join(h for _, h in alone)
    return edits, weight, heard


@pytest.mark.parametrize(("lang", "speaker"), _voices())
def test_kokoro_voice_is_understood(lang: str, speaker: str) -> None:
    voice = Catalog.load().voice("coda", speaker)
    engine = load_engine(voice, dtype="auto")
    lineup = [v.speaker for v in Catalog.load().voices_of("coda", lang) if v.engine == "kokoro"]
    chosen = _sentences(lang, _slot(lineup, speaker))
    spoken = list(zip(chosen, _speak(engine, [s.text for s in chosen], lang), strict=True))
    edits = 0.0
    total = 0
    heard_all = []
    for group in passages(spoken, engine.sample_rate):
        wrong, count, heard = heard_as(group, lang, engine.sample_rate)
        heard_all.append(heard)
        edits += wrong
        total += count
    score = edits / total
    print(f"\nCER {lang} {speaker}: {score:.3f}")  # noqa: T201 - the table in the note comes from here
    assert score <= limit(lang, speaker), (score, heard_all)


def test_sentences_are_heard_in_passages_that_fit_one_window() -> None:
    """Passages keep the sentences' order and every rendering, and stay within one window."""
    rate = 100
    spoken = [(Sentence("hi", f"s{i}", (f"u{i}",)), np.zeros(int(rate * 9.0), np.float32)) for i in range(5)]
    whole = [joined(group) for group in passages(spoken, rate)]
    assert [r for r, _ in whole] == [("s0 s1", "u0 u1"), ("s2 s3", "u2 u3"), ("s4", "u4")]
    assert all(len(a) <= PASSAGE_S * rate for _, a in whole)
    assert sum(len(a) for _, a in whole) == 5 * 9 * rate


def test_noise_is_not_understood_as_speech() -> None:
    """The check can fail: noise in place of speech scores far above every threshold."""
    rng = np.random.default_rng(0)
    noise = (rng.standard_normal(24000 * 3) * 0.05).astype(np.float32)
    sentence = sentences("es")[0]
    assert cer(sentence.renderings, transcribe(noise, 24000, "es"), "es") > 0.5
