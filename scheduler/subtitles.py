"""Sentence timings and subtitles (SRT, WebVTT) from the engine's word timings.

The engine times the words of the *normalised* sentences it spoke ("3 apples" becomes "three
apples"), while a subtitle shows the sentence as written. Both sides are cut into sentences the
same way synthesis did (``speech.synthesizer.prepare``), so the n-th spoken sentence owns the
next ``len(split_words(normalised))`` word timings. Should the counts ever disagree (a future
engine that times words differently), the chunk becomes one "sentence" spoken as a whole rather
than a set of wrongly timed ones.

A cue is one sentence, or a piece of one: at most ``MAX_CUE_CHARS`` characters on at most two
lines, cut at a clause mark where one is near, else between words. A piece's times come from the
words at the same relative position in the spoken sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from scheduler.objects import ChunkVoice, TimedWord
from speech.synthesizer import clean
from speech.text import normalize, split_sentences
from speech.text.words import split_words

MAX_CUE_CHARS: Final = 84
MAX_LINE_CHARS: Final = 42
MIN_CUE_SECONDS: Final = 0.3
_CLAUSE_END: Final = re.compile(r"[,;:—–)\"”’]$")


@dataclass(frozen=True, slots=True)
class TimedSentence:
    text: str  # as written in the source
    words: list[TimedWord]  # the spoken words, in seconds

    @property
    def start(self) -> float:
        return float(self.words[0]["start"])

    @property
    def end(self) -> float:
        return float(self.words[-1]["end"])

    def written_at(self) -> dict[str, int]:
        """``textOffset`` and ``textLength`` of the sentence in the job's text (from its words)."""
        return written_at(self.words)


def written_at(words: Sequence[TimedWord]) -> dict[str, int]:
    """Where ``words`` were written in the job's text, from the first word's offset to the end
    of the last (empty when their offsets are not known)."""
    placed = [w for w in words if "textOffset" in w and "textLength" in w]
    if not placed:
        return {}
    start = min(w["textOffset"] for w in placed)
    end = max(w["textOffset"] + w["textLength"] for w in placed)
    return {"textOffset": start, "textLength": end - start}


def shifted(word: TimedWord, shift: float) -> TimedWord:
    """A chunk's word on the book's clock (rounded to the millisecond), its offsets kept."""
    out: TimedWord = {"word": word["word"], "start": round(shift + word["start"], 3), "end": round(shift + word["end"], 3)}
    if "textOffset" in word and "textLength" in word:
        out["textOffset"], out["textLength"] = word["textOffset"], word["textLength"]
    return out


@dataclass(frozen=True, slots=True)
class Cue:
    start: float
    end: float
    text: str  # one or two lines
    written: dict[str, int] = field(default_factory=dict)  # ``written_at`` of the cue's words


def spoken_sentences(text: str, lang: str, *, normalize_text: bool = True) -> list[tuple[str, int]]:
    """(sentence as written, number of words the engine timed for it), the way synthesis cut it."""
    out = []
    for span in split_sentences(clean(text), lang):
        written = span.text.strip()
        said = normalize(written, lang).strip() if normalize_text else written
        if said:
            out.append((written, len(split_words(said))))
    return out


def timed_sentences(
    text: str, words: Sequence[TimedWord], lang: str, *, normalize_text: bool = True
) -> list[TimedSentence]:
    """One chunk's sentences with their word timings (chunk-relative or shifted, as ``words`` are)."""
    if not words:
        return []
    counts = spoken_sentences(text, lang, normalize_text=normalize_text)
    if sum(n for _, n in counts) != len(words):
        return [TimedSentence(" ".join(text.split()), list(words))]
    out = []
    cursor = 0
    for written, n in counts:
        if n:
            out.append(TimedSentence(" ".join(written.split()), list(words[cursor : cursor + n])))
        cursor += n
    return out


def _pieces(text: str, limit: int = MAX_CUE_CHARS) -> list[str]:
    """``text`` cut between words into pieces of at most ``limit`` characters (a single longer
    word stays whole), preferring a cut after a clause mark past the first third of a piece."""
    tokens = text.split()
    pieces: list[str] = []
    current: list[str] = []
    for token in tokens:
        if current and len(" ".join([*current, token])) > limit:
            cut = len(current)
            for k in range(len(current) - 1, 0, -1):
                if _CLAUSE_END.search(current[k - 1]) and len(" ".join(current[:k])) >= limit // 3:
                    cut = k
                    break
            pieces.append(" ".join(current[:cut]))
            current = current[cut:]
        current.append(token)
    if current:
        pieces.append(" ".join(current))
    return pieces


def wrap(text: str, width: int = MAX_LINE_CHARS) -> str:
    """One line, or two lines broken at the space nearest the middle."""
    if len(text) <= width or " " not in text:
        return text
    middle = len(text) // 2
    spaces = [i for i, c in enumerate(text) if c == " "]
    best = min(spaces, key=lambda i: (max(i, len(text) - i - 1) > width, abs(i - middle)))
    return text[:best] + "\n" + text[best + 1 :]


def cues(sentence: TimedSentence) -> list[Cue]:
    pieces = _pieces(sentence.text)
    words = sentence.words
    if len(pieces) > len(words):
        pieces = [sentence.text]
    total = max(len(sentence.text), 1)
    # Word boundary k: the spoken word at the same relative position as piece k's first letter.
    bounds = [0]
    position = 0
    for piece in pieces[:-1]:
        position += len(piece) + 1
        bounds.append(max(bounds[-1] + 1, min(round(position / total * len(words)), len(words) - 1)))
    bounds.append(len(words))
    out = []
    for k, piece in enumerate(pieces):
        first, last = words[bounds[k]], words[max(bounds[k + 1] - 1, bounds[k])]
        start = float(first["start"])
        said = words[bounds[k] : max(bounds[k + 1], bounds[k] + 1)]
        out.append(Cue(start, max(float(last["end"]), start + MIN_CUE_SECONDS), wrap(piece), written_at(said)))
    return out


def _clock(seconds: float, separator: str) -> str:
    ms = int(round(max(seconds, 0.0) * 1000))
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    secs, ms = divmod(ms, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{separator}{ms:03d}"


VTT_HEADER: Final = "WEBVTT\n\n"


def srt_block(number: int, cue: Cue) -> str:
    return f"{number}\n{_clock(cue.start, ',')} --> {_clock(cue.end, ',')}\n{cue.text}\n\n"


def vtt_block(cue: Cue, voice: str | None = None) -> str:
    """A WebVTT cue; with ``voice``, its text in a voice span (``<v Elizabeth>``) as players show it.
    Its identifier says where its words were written in the job's text
    (``textOffset=120 textLength=64``): players ignore identifiers, a reader can parse them."""
    text = cue.text if voice is None else "\n".join(f"<v {voice}>{line}</v>" for line in _escaped(cue.text).split("\n"))
    at = cue.written
    identifier = f"textOffset={at['textOffset']} textLength={at['textLength']}\n" if at else ""
    return f"{identifier}{_clock(cue.start, '.')} --> {_clock(cue.end, '.')}\n{text}\n\n"


NARRATOR_LABEL: Final = "Narrator"


def voice_label(voice: ChunkVoice | None) -> str | None:
    """Who a cast chunk's cues name: the character, the narrator, or the voice for unnamed dialogue."""
    if voice is None:
        return None
    speaker = voice["speaker"]
    label = NARRATOR_LABEL if speaker is None else speaker or voice["voice"]
    return " ".join(_escaped(label).replace(">", "").split()) or NARRATOR_LABEL


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;")

