"""A job's cast: which voice reads each stretch of the book, and how the voices are made to match.

A cast (``{"narrator": "joe", "characters": {"Elizabeth": "nora", "Mr. Darcy": {"voice": "owen",
"aliases": ["Darcy"]}}, "dialogue": "ivy"}``) is checked at intake and stored in the job's params.
Planning cuts each paragraph where ``books.attribution`` says the speaker changes, so every
chunk has exactly one voice (recorded in ``plan.json`` beside the pauses); synthesis groups a
batch's chunks by voice. Voices of different engines come at different rates and levels, so each
cast chunk is resampled to the book's rate (the narrator's) and brought to one loudness before it
is stored: assembly then sees one book, as it would with one voice.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from books.attribution import Characters, attribute
from books.errors import InvalidCast
from books.options import BookOptions, CastMember, StoredCast
from speech.audio.loudness import integrated_loudness
from speech.audio.resample import resample

MAX_CHARACTERS: Final = 100
MAX_ALIASES: Final = 20
MAX_NAME_CHARS: Final = 60
CHUNK_LUFS: Final = -20.0  # every cast chunk's level before the book's own gain (assembly)
SPEAKER_TURN_MS: Final = 150  # between a quote and its "said Elizabeth" inside one sentence


@dataclass(frozen=True, slots=True)
class Cast:
    narrator: str
    dialogue: str  # quotes nobody in the cast is named for
    characters: Mapping[str, str]  # name -> voice
    aliases: Mapping[str, Sequence[str]]  # name -> other names the text calls them by

    @classmethod
    def from_params(cls, params: BookOptions) -> Cast | None:
        return cls.from_stored(params.cast) if params.cast else None

    @classmethod
    def from_stored(cls, given: StoredCast) -> Cast:
        characters = {name: entry["voice"] for name, entry in given["characters"].items()}
        aliases = {name: list(entry.get("aliases", [])) for name, entry in given["characters"].items()}
        return cls(given["narrator"], given["dialogue"], characters, aliases)

    def voice(self, speaker: str | None) -> str:
        """The voice of a stretch: the narrator's for narration, the character's for a quote."""
        if speaker is None:
            return self.narrator
        return self.characters.get(speaker, self.dialogue)

    def voices(self) -> list[str]:
        """Every voice of the cast once, the narrator first (the m4b's narrator tag lists them)."""
        return list(dict.fromkeys([self.narrator, *self.characters.values(), self.dialogue]))


def check_cast(given: object, speaker: str) -> StoredCast:
    """A request's cast in the stored form (characters as ``{"voice", "aliases"}``); the narrator
    defaults to the job's speaker and the dialogue voice to the narrator. Raises ``InvalidCast``
    with the client's message. The voices' existence is the caller's check (it has the catalog)."""
    if not isinstance(given, dict):
        raise InvalidCast("cast must be an object with narrator, characters and dialogue")
    unknown = sorted(set(given) - {"narrator", "characters", "dialogue"})
    if unknown:
        raise InvalidCast(f"cast has an unknown field: {unknown[0]}")
    narrator = given.get("narrator", speaker)
    dialogue = given.get("dialogue", narrator)
    for field, value in (("narrator", narrator), ("dialogue", dialogue)):
        if not isinstance(value, str) or not value.strip():
            raise InvalidCast(f"cast.{field} must be a voice name")
    assert isinstance(narrator, str) and isinstance(dialogue, str)  # checked just above; for the type checker
    characters = given.get("characters", {})
    if not isinstance(characters, dict) or len(characters) > MAX_CHARACTERS:
        raise InvalidCast(f"cast.characters must map at most {MAX_CHARACTERS} names to voices")
    out: dict[str, CastMember] = {}
    for name, entry in characters.items():
        entry = {"voice": entry} if isinstance(entry, str) else entry
        aliases = entry.get("aliases", []) if isinstance(entry, dict) else None
        if (
            not name.strip() or len(name) > MAX_NAME_CHARS or not isinstance(entry, dict)
            or not isinstance(entry.get("voice"), str) or set(entry) - {"voice", "aliases"}
            or not isinstance(aliases, list) or len(aliases) > MAX_ALIASES
            or not all(isinstance(a, str) and a.strip() and len(a) <= MAX_NAME_CHARS for a in aliases)
        ):
            raise InvalidCast(
                f"cast.characters[{name[:MAX_NAME_CHARS]!r}] must be a voice name or "
                f'{{"voice": name, "aliases": [at most {MAX_ALIASES} names]}}'
            )
        out[name.strip()] = {"voice": entry["voice"], "aliases": [a.strip() for a in aliases]}
    return {"narrator": narrator, "characters": out, "dialogue": dialogue}


@dataclass(frozen=True, slots=True)
class Turn:
    """A run of a paragraph read by one voice."""

    text: str
    voice: str
    speaker: str | None  # the character's name (None: narration; "": unnamed dialogue)
    paragraph_start: bool  # the first run of its paragraph


def turns(paragraphs: Sequence[str], cast: Cast) -> list[Turn]:
    """The paragraphs cut where the voice changes, each run with its voice."""
    characters = Characters.of(cast.aliases)
    out: list[Turn] = []
    for stretches in attribute(paragraphs, characters):
        first = True
        for stretch in stretches:
            voice = cast.voice(stretch.speaker)
            if not first and out and out[-1].voice == voice:
                last = out[-1]
                out[-1] = Turn(last.text + stretch.text, voice, last.speaker or stretch.speaker, last.paragraph_start)
            elif stretch.text.strip():
                out.append(Turn(stretch.text, voice, stretch.speaker, first))
                first = False
    return [Turn(t.text.strip(), t.voice, t.speaker, t.paragraph_start) for t in out if t.text.strip()]


def matched(samples: np.ndarray, rate: int, book_rate: int, *, level_of: np.ndarray | None = None) -> np.ndarray:
    """A cast chunk at the book's rate and the common level: a Kokoro voice at 24 kHz and a VITS
    voice at 22.05 kHz, each as loud as the other, before the book's one gain. A chunk too short
    to measure (under 400 ms) keeps its level. ``level_of`` (at ``rate``): the audio the level is
    measured on, when ``samples`` has an SSML volume in it that must survive the matching."""
    out = resample(samples, rate, book_rate) if rate != book_rate else samples.astype(np.float32)
    loudness = integrated_loudness(out, book_rate) if level_of is None else integrated_loudness(level_of, rate)
    if math.isfinite(loudness):
        out = out * np.float32(10 ** ((CHUNK_LUFS - loudness) / 20))
    return np.asarray(out, dtype=np.float32)
