"""A chunk's content key: one digest over everything its stored audio depends on.

Why: a revised book (a corrected chapter, a changed lexicon) should synthesize only the chunks
whose inputs changed, and an account's later job should reuse audio it already paid for. Both
need a name for a chunk's audio that is the same exactly when the audio would be the same
(``scheduler.chunk_cache`` keeps the audio under it). What goes in:

- the engine instance (``Voice.key``: engine, weights reference, language, eSpeak voice, the
  Kokoro pack or blend) and the weights' digest (``speech.voices.identity``), so an upgraded
  voice package renders afresh;
- the precision the engine computes in (``speech.engines.base.numerics_of``: "float32",
  "bfloat16", "int8"), so a deployment that changes it (``LECTOR_KOKORO_DTYPE``, or a host whose
  CPU picks another under ``auto``) renders in the new one rather than mixing the old audio into
  a revised book;
- the units the engine is given (``speech.stream_steps.steps_for_request``: the text after markup, lexicons
  and normalisation, phoneme stretches as phonemes). Lexicon versions enter through what they
  change: a new version that rewrites a word changes the units of exactly the chunks that
  contain it, so a lexicon edit re-renders those chunks and not the book;
- prosody: the time scale and the speed (a rate: the facade has already read the vendor's
  speedAlpha the way the model means it), the language;
- how the chunk's audio is stored: the rate it is kept at (a cast's voices are brought to the
  narrator's rate) and the gap joining its sentences, plus ``RENDER_VERSION``, raised whenever
  the rendering itself changes.

What stays out: the output format, sample rate and loudness of the book (assembly applies them
to the stored audio), the chunk's place in the book, the job, the pauses around it, and who a
cast's voice speaks for (a label in the chunk's metadata, not in its audio).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from speech.stream_steps import StreamStep
from speech.synthesizer import Controls
from speech.voices.entries import Voice
from speech.voices.identity import weights_digest

#: Raised when a change to synthesis or storage would make old chunk audio differ from new.
RENDER_VERSION: Final = 1


@dataclass(frozen=True, slots=True)
class ChunkInputs:
    """What one chunk's stored audio is made from (see the module)."""

    engine: str  # Voice.key
    weights: str  # speech.voices.identity.weights_digest
    numerics: str  # speech.engines.base.numerics_of
    units: tuple[tuple[object, ...], ...]
    time_scale: float
    speed: float | None  # a rate, above 1.0 faster (facade.vendor_controls reads the vendor's speedAlpha)
    lang: str
    stored_rate: int
    sentence_gap_ms: int

    @classmethod
    def of(
        cls, voice: Voice, units: Sequence[StreamStep], controls: Controls, *, lang: str, stored_rate: int,
        sentence_gap_ms: int, numerics: str,
    ) -> ChunkInputs:
        return cls(
            engine=voice.key, weights=weights_digest(voice), numerics=numerics, units=tuple(_unit(u) for u in units),
            time_scale=float(controls.time_scale),
            speed=None if controls.speed is None else float(controls.speed), lang=lang, stored_rate=int(stored_rate), sentence_gap_ms=int(sentence_gap_ms),
        )

    def digest(self) -> str:
        """64 hex digits of sha256 over the canonical JSON of the inputs."""
        canonical = json.dumps(
            {
                "v": RENDER_VERSION, "engine": self.engine, "weights": self.weights, "numerics": self.numerics,
                "units": self.units,
                "time_scale": self.time_scale, "speed": self.speed,
                "lang": self.lang, "rate": self.stored_rate, "gap": self.sentence_gap_ms,
            },
            sort_keys=True, ensure_ascii=False, separators=(",", ":"),
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _unit(unit: StreamStep) -> tuple[object, ...]:
    """A unit as plain values: everything that shapes its audio (a job's units carry no voice
    object: a book's voice is the chunk's, keyed above)."""
    return (
        unit.text, unit.pause_ms, unit.phonemes, unit.speed, unit.word, unit.rate, unit.gain_db, unit.lang,
        unit.speaker, unit.mark,
    )
