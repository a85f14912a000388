"""Who says each stretch of quoted speech in a book: a pure function of the text and the cast.

A listener follows a dialogue by its voices, so a cast job reads each quote in the voice of the
character who says it. Prose marks the speaker in a few regular ways, tried in this order for each
paragraph (prose gives one speaker's turn one paragraph):

1. **explicit**: an inline tag ``{Elizabeth}`` in plain text or Markdown names the speaker of the
   quotes after it in the paragraph (the tag itself is not read aloud);
2. **a speech tag in the paragraph**: "said Elizabeth", "Elizabeth cried", "replied Mr. Darcy",
   or the name before the quote ("Mrs. Bennet said only, “Nonsense!”");
3. **a pronoun tag** ("replied he", "returned she"): the participant of the current exchange
   whose title (Mr., Mrs., Miss, Lady, Sir...) fits the pronoun;
4. **turns alternating** in a two-person exchange: an untagged turn is the other participant's,
   and a name the quote addresses ("My dear Mr. Bennet, ...") is a listener, never the speaker.

What none of these settles has no speaker (``None``), read in the cast's default dialogue voice;
a speaker named in the text but not in the cast is given by name and also gets the default voice.
Characters are matched by their name and aliases (a cast may say "Lizzy" and "Eliza" are
Elizabeth). Nothing here reads settings or services: planning calls it, the tests measure it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

RECENT_NAMES: Final = 8
_WORD: Final = re.compile(r"[^\w]+")
_QUOTE: Final = re.compile(r"“[^”]*(?:”|$)|\"[^\"]*(?:\"|$)")
TAG: Final = re.compile(r"\{([^{}\n]{1,60})\}[ \t]*")
_VERBS: Final = (
    "said|says|say|cried|cries|replied|replies|returned|answered|answers|asked|asks|continued|added|"
    "exclaimed|observed|whispered|shouted|rejoined|resumed|began|repeated|called|muttered|remarked|"
    "interrupted|insisted|declared|thought|went on|called out|murmured|sighed|laughed|exclaims|adds"
)
_PRONOUN_AFTER: Final = re.compile(rf"\b(?:{_VERBS})\s+(he|she)\b", re.IGNORECASE)
_PRONOUN_BEFORE: Final = re.compile(rf"\b(he|she)\s+(?:\w+ly\s+)?(?:{_VERBS})\b", re.IGNORECASE)
_UNKNOWN_NAMED: Final = re.compile(rf"\b(?:{_VERBS})\s+((?:(?:Mr|Mrs|Miss|Sir|Lady|Dr)\.?\s+)?[A-Z][a-z]+)\b")
_MALE: Final = re.compile(r"^(?:mr|sir|lord|dr|mister|colonel|captain)\b|\b(?:husband|father|brother|son|uncle)$", re.IGNORECASE)
_FEMALE: Final = re.compile(r"^(?:mrs|miss|lady|madam|ms)\b|\b(?:wife|lady|mother|sister|daughter|aunt)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Stretch:
    """A piece of a paragraph and who reads it: ``None`` the narrator, else the quote's speaker
    (``""``: nobody could be named; a name outside the cast: that name)."""

    text: str
    speaker: str | None


@dataclass(frozen=True, slots=True)
class Characters:
    """The cast's characters as the text may name them: each alias -> the character's name."""

    aliases: Mapping[str, str]
    genders: Mapping[str, str]  # name -> "m" / "f", from a title or an alias like "his wife"

    @classmethod
    def of(cls, names: Mapping[str, Sequence[str]]) -> Characters:
        aliases: dict[str, str] = {}
        genders: dict[str, str] = {}
        for name, extra in names.items():
            for alias in (name, *extra):
                aliases[alias] = name
                if name not in genders:
                    gender = "m" if _MALE.search(alias) else "f" if _FEMALE.search(alias) else ""
                    if gender:
                        genders[name] = gender
        return cls(aliases, genders)

    def pattern(self) -> re.Pattern[str] | None:
        if not self.aliases:
            return None
        longest_first = sorted(self.aliases, key=len, reverse=True)
        return re.compile(r"(?<![\w.])(" + "|".join(re.escape(a) for a in longest_first) + r")(?!\w)")


def _named_cue(narration: str, names: re.Pattern[str] | None, characters: Characters) -> str | None:
    """The speaker a speech tag in this narration names (cast or not), else None."""
    if names is not None:
        after = re.search(rf"\b(?:{_VERBS})\s+(?:the\s+)?" + names.pattern, narration)
        if after:
            return characters.aliases[after.group(1)]
        before = re.search(names.pattern + rf"\s+(?:\w+ly\s+|only\s+|then\s+)?(?:{_VERBS})\b", narration)
        if before:
            return characters.aliases[before.group(1)]
    unknown = _UNKNOWN_NAMED.search(narration)
    if unknown and unknown.group(1) not in ("He", "She", "It", "They", "I"):
        return unknown.group(1)
    return None


def _pronoun(narration: str) -> str | None:
    found = _PRONOUN_AFTER.search(narration) or _PRONOUN_BEFORE.search(narration)
    return None if found is None else ("m" if found.group(1).lower() == "he" else "f")


class _Exchange:
    """The conversation so far: who spoke last, who before (or was addressed), and the characters
    the text named lately (narration included), for a pronoun with nobody in the exchange to fit."""

    def __init__(self) -> None:
        self.last: str | None = None
        self.other: str | None = None
        self.recent: list[str] = []

    def mention(self, name: str) -> None:
        if name in self.recent:
            self.recent.remove(name)
        self.recent.append(name)
        del self.recent[:-RECENT_NAMES]

    def spoke(self, speaker: str) -> None:
        if speaker != self.last:
            self.other, self.last = self.last, speaker
        self.mention(speaker)

    def addressed(self, listener: str) -> None:
        if listener != self.last:
            self.other = listener

    def pick(self, gender: str | None, genders: Mapping[str, str], listeners: Sequence[str]) -> str | None:
        """The other participant (alternating turns), held to the pronoun's gender when there is
        one; failing that, the character of that gender named most lately who is not addressed."""
        if not gender:
            for candidate in (self.other, self.last):
                if candidate and candidate not in listeners:
                    return candidate if candidate == self.other or self.other in listeners else None
            return None
        for candidate in (self.other, self.last, *reversed(self.recent)):
            if candidate and candidate not in listeners and genders.get(candidate) == gender:
                return candidate
        return None


def _split(paragraph: str) -> tuple[list[tuple[str, bool, str | None]], str | None]:
    """The paragraph as (text, is_quote, tagged speaker) pieces in order, tags taken out."""
    pieces: list[tuple[str, bool, str | None]] = []
    tagged: str | None = None
    first_tag: str | None = None
    pos = 0
    for tag_or_quote in re.finditer(TAG.pattern + "|" + _QUOTE.pattern, paragraph):
        if tag_or_quote.start() > pos:
            pieces.append((paragraph[pos : tag_or_quote.start()], False, None))
        if tag_or_quote.group(1) is not None:
            tagged = tag_or_quote.group(1).strip()
            first_tag = first_tag or tagged
        else:
            pieces.append((tag_or_quote.group(0), True, tagged))
        pos = tag_or_quote.end()
    if pos < len(paragraph):
        pieces.append((paragraph[pos:], False, None))
    return [p for p in pieces if p[0].strip()], first_tag


def attribute(paragraphs: Sequence[str], characters: Characters) -> list[list[Stretch]]:
    """Each paragraph as stretches of narration (speaker ``None``) and quotes (their speaker)."""
    names = characters.pattern()
    exchange = _Exchange()
    out: list[list[Stretch]] = []
    announced: str | None = None  # "..., he suddenly addressed her with:": the next quote's speaker
    for paragraph in paragraphs:
        pieces, _ = _split(paragraph)
        quotes = [p for p in pieces if p[1]]
        narration = " ".join(p[0] for p in pieces if not p[1])
        if not quotes:
            mentioned = [characters.aliases[m] for m in names.findall(narration)] if names is not None else []
            for name in mentioned:
                exchange.mention(name)
            cue = _named_cue(narration[:120], names, characters)
            if cue and names is not None and names.match(narration.lstrip()):
                exchange.spoke(cue)  # "Mr. Bennet replied that he had not.": a turn in reported speech
            elif mentioned and mentioned[0] in (exchange.last, exchange.other) and _REPORTED.search(narration) \
                    and names is not None and names.match(narration.lstrip()):
                exchange.spoke(mentioned[0])  # "Elizabeth could hardly help smiling as she assured her ...": her turn
            announced = _announced(narration, names, characters, mentioned)
            out.append([Stretch(paragraph, None)] if paragraph.strip() else [])
            continue
        speaker = _speaker(pieces, narration, names, characters, exchange, announced)
        announced = None
        stretches = []
        for text, is_quote, tagged in pieces:
            who = (characters.aliases.get(tagged, tagged) if tagged else speaker or "") if is_quote else None
            stretches.append(Stretch(text, who))
        out.append(stretches)
    return out


_REPORTED: Final = re.compile(rf"\b(?:he|she)\s+(?:\w+ly\s+)?(?:{_VERBS}|assured|told|admitted|owned|confessed)\b", re.IGNORECASE)


def _announced(narration: str, names: re.Pattern[str] | None, characters: Characters, mentioned: Sequence[str]) -> str | None:
    """The speaker a narration paragraph that leads into the next quote (it ends in a colon, a
    comma or a dash) hands it to: the cast's character a speech tag in its last sentence names
    ("... Lady Catherine then observed,"), else for a colon the first character it names
    ("..., he suddenly addressed her with:")."""
    tail = narration.rstrip()
    if not tail.endswith((":", ",", "—")):
        return None
    last_sentence = _SENTENCE_BREAK.split(tail)[-1]
    cue = _named_cue(last_sentence, names, characters)
    if cue is not None and cue in characters.aliases.values():
        return cue
    return mentioned[0] if mentioned and tail.endswith(":") else None


_SENTENCE_BREAK: Final = re.compile(r"(?<!\bMr\.)(?<!\bMrs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bMs\.)(?<=[.!?;])\s+")


def _listeners(pieces: list[tuple[str, bool, str | None]], names: re.Pattern[str] | None, characters: Characters) -> list[str]:
    """Characters the quotes address by name ("Come, Darcy, ...", "... like it, Lizzy.")."""
    if names is None:
        return []
    vocative = re.compile(
        r"(?:^[“\"]|(?:[,!?;]|(?<!Mr)(?<!Mrs)(?<!Dr)(?<!St)\.)\s+|[“\"](?:oh|ah|my dear|dear|come|well|now),?\s+|(?:my dear|dear|oh|ah)\s+)"
        + names.pattern + r"(?=\s*[,!?.;”\"])",
        re.IGNORECASE,
    )
    found: list[str] = []
    for text, is_quote, _ in pieces:
        if is_quote:
            if _WORD.sub("", text).lower() in {_WORD.sub("", a).lower() for a in characters.aliases}:
                continue  # “Bingley.”: a name for an answer, nobody addressed
            found += [characters.aliases[m.group(1)] for m in vocative.finditer(text) if m.group(1) in characters.aliases]
    return found


def _speaker(
    pieces: list[tuple[str, bool, str | None]], narration: str, names: re.Pattern[str] | None,
    characters: Characters, exchange: _Exchange, announced: str | None,
) -> str | None:
    listeners = _listeners(pieces, names, characters)
    tagged = next((p[2] for p in pieces if p[1] and p[2]), None)
    speaker = characters.aliases.get(tagged, tagged) if tagged else _named_cue(narration, names, characters)
    if speaker is None and announced and announced not in listeners:
        speaker = announced
    if speaker is None:
        gender = _pronoun(narration)
        before_first = pieces[0][0] if not pieces[0][1] else ""
        subject = names.search(before_first) if names is not None else None
        if gender is None and subject:  # "Elizabeth smiled. “...”": the name before the quote
            speaker = characters.aliases[subject.group(1)]
        elif gender is None and listeners:
            speaker = exchange.pick(_any_pronoun(narration), characters.genders, listeners)
            if speaker is None and exchange.last not in listeners:
                speaker = exchange.last if exchange.other in listeners else exchange.other
        else:
            speaker = exchange.pick(gender, characters.genders, listeners)
    if speaker is not None:
        exchange.spoke(speaker)
    for listener in listeners:
        if listener != speaker:
            exchange.addressed(listener)
    return speaker


def _any_pronoun(narration: str) -> str | None:
    found = re.search(r"\b(he|she)\b", narration, re.IGNORECASE)
    return None if found is None else ("m" if found.group(1).lower() == "he" else "f")
