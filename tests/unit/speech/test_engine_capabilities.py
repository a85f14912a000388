"""speech/engines/base.py: what an engine can do beyond the contract, asked through Protocols
that see through the wrappers (``BatchedEngine``, ``lector.engine_metrics``)."""

from __future__ import annotations

from collections.abc import Sequence

from lector.engine_metrics import instrument
from speech.batched_engine import BatchedEngine
from speech.engines.base import Engine, gathers_calls, numerics_of, speaks_phonemes
from speech.types import AudioChunk, SynthesisOptions
from tests.support.fake_engine import ToneEngine


class IpaToneEngine(ToneEngine):
    """A tone engine that also takes phonemes (as Kokoro and VITS do)."""

    def synthesize_phonemes(self, phonemes: Sequence[str], options: SynthesisOptions | None = None) -> list[AudioChunk]:
        return self.synthesize(phonemes, options)


def test_phonemes_are_a_capability_some_engines_have() -> None:
    text_only, ipa = ToneEngine(), IpaToneEngine()
    assert isinstance(text_only, Engine) and isinstance(ipa, Engine)
    assert speaks_phonemes(text_only) is None
    speaker = speaks_phonemes(ipa)
    assert speaker is ipa and len(speaker.synthesize_phonemes(["həlˈoʊ"])) == 1


def test_the_wrappers_have_a_capability_exactly_when_what_they_wrap_does() -> None:
    for inner, ipa in ((ToneEngine(), False), (IpaToneEngine(), True)):
        timed = instrument(inner, kind="tone", device="cpu")
        batched = BatchedEngine(timed, window_ms=1.0)
        try:
            assert (speaks_phonemes(timed) is not None) is ipa
            assert (speaks_phonemes(batched) is not None) is ipa
            assert gathers_calls(batched) and not gathers_calls(timed) and not gathers_calls(inner)
            if ipa:
                speaker = speaks_phonemes(batched)
                assert speaker is not None and len(speaker.synthesize_phonemes(["a", "b"])) == 2
        finally:
            batched.stop()


class HalfToneEngine(ToneEngine):
    """A tone engine that computes at a named precision (as Kokoro and VITS do)."""

    numerics = "bfloat16"


def test_the_precision_is_named_through_the_wrappers_and_empty_for_an_engine_with_one() -> None:
    for inner, named in ((ToneEngine(), ""), (HalfToneEngine(), "bfloat16")):
        timed = instrument(inner, kind="tone", device="cpu")
        batched = BatchedEngine(timed, window_ms=1.0)
        try:
            assert numerics_of(inner) == numerics_of(timed) == numerics_of(batched) == named
        finally:
            batched.stop()
