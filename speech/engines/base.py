"""The contract every synthesis engine meets.

Engines take sentences (already normalised text) and return one float32 ``AudioChunk`` per
sentence at the engine's native rate, with word timings. They know nothing of formats, HTTP or
billing. Batching is the engine's business: callers hand over as many sentences as they have.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Protocol, runtime_checkable

from speech.errors import EngineError, SpeechError
from speech.types import AudioChunk, SynthesisOptions


@contextlib.contextmanager
def engine_errors(what: str) -> Iterator[None]:
    """Torch failures leave an engine as ``EngineError`` (our own errors pass through untouched)."""
    try:
        yield
    except SpeechError:
        raise
    except (RuntimeError, ValueError, TypeError, IndexError) as exc:
        raise EngineError(f"{what} failed: {exc}") from exc


@runtime_checkable
class Engine(Protocol):
    @property
    def sample_rate(self) -> int:
        """Native output rate in Hz."""
        ...

    def phonemize(self, text: str) -> str:
        """The phoneme string this engine will speak for ``text`` (for /phonemize)."""
        ...

    def synthesize(
        self, sentences: Sequence[str], options: SynthesisOptions | None = None
    ) -> list[AudioChunk]:
        """One chunk per sentence, in order. Empty sentences give empty chunks."""
        ...


# -- what an engine may do beyond the contract, asked in one place ---------------------------
# Wrappers (``speech.batched_engine``, ``lector.engine_metrics``) pass these through exactly
# when the engine they wrap has them, so the checks below see through them.


@runtime_checkable
class PhonemeEngine(Engine, Protocol):
    """An engine that speaks IPA as written (the vendor's ``{...}`` markup, ``/invocations``'
    phonemes). Kokoro and VITS do; the formant fallback does not."""

    def synthesize_phonemes(
        self, phonemes: Sequence[str], options: SynthesisOptions | None = None
    ) -> list[AudioChunk]:
        """One chunk per phoneme string, in order."""
        ...


@runtime_checkable
class GatheringEngine(Engine, Protocol):
    """An engine that gathers concurrent calls into shared forward passes itself
    (``speech.batched_engine.BatchedEngine``): callers must not hold each other back."""

    batches_calls: bool


@runtime_checkable
class NumericsEngine(Engine, Protocol):
    """An engine that can compute at more than one precision. ``numerics`` names the one its audio
    comes from ("float32", "bfloat16", "int8", ...): the same voice and weights sound different
    across them (Kokoro's int8 path scored a full MOS point under float32), so stored chunk audio
    is named with it (``scheduler.content_keys``) and a deployment that changes precision never
    hands a book back the audio of the old one."""

    numerics: str


def numerics_of(engine: Engine) -> str:
    """``engine``'s precision (see ``NumericsEngine``); "" for an engine that has only one."""
    return engine.numerics if isinstance(engine, NumericsEngine) else ""


def speaks_phonemes(engine: Engine) -> PhonemeEngine | None:
    """``engine`` as a ``PhonemeEngine``, or None when it takes text only."""
    return engine if isinstance(engine, PhonemeEngine) else None


def gathers_calls(engine: Engine) -> bool:
    """Whether ``engine`` batches concurrent calls itself (see ``GatheringEngine``)."""
    return isinstance(engine, GatheringEngine) and engine.batches_calls
