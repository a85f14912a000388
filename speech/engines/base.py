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
