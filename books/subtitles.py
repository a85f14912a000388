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

from books.chunks import ChunkVoice, TimedWord
from speech.synthesizer import clean
from speech.text import normalize, split_sentences
from speech.text.offsets import Runs, SourceSpan, placed
from speech.text.words import split_words

MAX_CUE_CHARS: Final = 84
MAX_LINE_CHARS: Final = 42
MIN_CUE_SECONDS: Final = 0.3
_CLAUSE_END: Final = re.compile(r"[,;:—–)\"”’]$")
_TOKEN: Final = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class TimedSentence:
    text: str  # as written in the source, whitespace runs made one space
    words: list[TimedWord]  # the spoken words, in seconds
    places: tuple[SourceSpan, ...] = ()
    """Where each of ``text``'s whitespace tokens was written in the job's text (empty: not known)."""

    @property
    def start(self) -> float:
        return float(self.words[0]["start"])

    @property
    def end(self) -> float:
        return float(self.words[-1]["end"])

    def written_at(self) -> dict[str, int]:
        """``textOffset`` and ``textLength`` of the sentence in the job's text (empty: not known).
        Without ``places`` (an SSML job: its text is markup, not a copy of the chunk's words),
        the stretch its words' own offsets cover."""
        return written_at(self.places) if self.places else words_at(self.words)


def written_at(places: Sequence[SourceSpan]) -> dict[str, int]:
    """The stretch of the job's text from the first token's start to the last one's end."""
    if not places:
        return {}
    return {"textOffset": places[0][0], "textLength": places[-1][1] - places[0][0]}


def words_at(words: Sequence[TimedWord]) -> dict[str, int]:
    """The stretch of the job's text from the first placed word's start to the last one's end."""
    placed_words = [(w["textOffset"], w["textOffset"] + w["textLength"]) for w in words if "textOffset" in w and "textLength" in w]
    if not placed_words:
        return {}
    start, end = min(a for a, _ in placed_words), max(b for _, b in placed_words)
    return {"textOffset": start, "textLength": end - start}


def shifted(word: TimedWord, shift: float) -> TimedWord:
    """A chunk's word on the book's clock (rounded to the millisecond), its offsets kept."""
    out: TimedWord = {"word": word["word"], "start": round(shift + word["start"], 3), "end": round(shift + word["end"], 3)}
    if "textOffset" in word and "textLength" in word:
        out["textOffset"], out["textLength"] = word["textOffset"], word["textLength"]
    if word.get("mark"):
        out["mark"] = True  # an SSML mark: a name in the words, not a spoken word
    return out


@dataclass(frozen=True, slots=True)
class Cue:
    start: float
    end: float
    text: str  # one or two lines
    written: dict[str, int] = field(default_factory=dict)  # ``written_at`` of the cue's text


def spoken_sentences(cleaned: str, lang: str, *, normalize_text: bool = True) -> list[tuple[int, int, int]]:
    """(start, end, number of words the engine timed for it) of each sentence of ``cleaned`` (a
    ``speech.synthesizer.clean`` text) that says something, the way synthesis cut it."""
    out = []
    for span in split_sentences(cleaned, lang):
        written = span.text.strip()
        said = normalize(written, lang).strip() if normalize_text else written
        if said:
            out.append((span.start, span.end, len(split_words(said))))
    return out


def timed_sentences(
    text: str, words: Sequence[TimedWord], lang: str, *, normalize_text: bool = True, runs: Runs | None = None
) -> list[TimedSentence]:
    """One chunk's sentences with their word timings (chunk-relative or shifted, as ``words`` are);
    ``runs``: where the chunk's text stands in the job's text (``TimedSentence.places``)."""
    if not words:
        return []
    text = clean(text)  # one character for one: offsets and runs still hold
    counts = spoken_sentences(text, lang, normalize_text=normalize_text)
    if sum(n for _, _, n in counts) != len(words):
        return [TimedSentence(" ".join(text.split()), list(words), _places(text, 0, len(text), runs))]
    out = []
    cursor = 0
    for start, end, n in counts:
        if n:
            written = " ".join(text[start:end].split())
            out.append(TimedSentence(written, list(words[cursor : cursor + n]), _places(text, start, end, runs)))
        cursor += n
    return out


def _places(text: str, start: int, end: int, runs: Runs | None) -> tuple[SourceSpan, ...]:
    if not runs:
        return ()
    return tuple(placed((m.start(), m.end()), runs) for m in _TOKEN.finditer(text, start, end))


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
    token = 0  # the sentence's token that starts piece k: where the piece was written
    for k, piece in enumerate(pieces):
        first, last = words[bounds[k]], words[max(bounds[k + 1] - 1, bounds[k])]
        start = float(first["start"])
        count = len(piece.split())
        written = written_at(sentence.places[token : token + count]) if sentence.places else words_at(
            words[bounds[k] : max(bounds[k + 1], bounds[k] + 1)])
        token += count
        out.append(Cue(start, max(float(last["end"]), start + MIN_CUE_SECONDS), wrap(piece), written))
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

