"""Word timings from predicted phoneme durations.

The voice speaks the sentence's phoneme string, but timings are wanted per *text* word, and
eSpeak NG does not keep a one-to-one mapping between them: it merges short words ("I am" ->
``aɪɐm``), expands others ("42" -> two words) and drops stress on function words. So each
word is phonemized alone and the letters of those strings are aligned with the sentence's
letters (``difflib``, monotonic). Every phoneme character of the sentence then belongs to at
most one word (spaces and punctuation belong to none: they are the pauses between words), and a
word lasts from its first character's phoneme id to the end of its last character's trailing pad.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Sequence

import numpy as np

from speech.types import WordTiming


def _kind(char: str) -> str:
    """'core' for phoneme letters, 'mark' for stress, length and diacritics, 'gap' otherwise."""
    category = unicodedata.category(char)
    if category in ("Ll", "Lu", "Lo"):
        return "core"
    if category in ("Lm", "Mn", "Sk"):
        return "mark"
    return "gap"


def char_owners(sentence_ipa: str, word_ipas: Sequence[str]) -> list[int]:
    """For each character of ``sentence_ipa``, the index of the word it belongs to, or -1."""
    kinds = [_kind(c) for c in sentence_ipa]
    core_positions = [i for i, k in enumerate(kinds) if k == "core"]
    sentence_core = "".join(sentence_ipa[i] for i in core_positions)
    word_core_chars: list[str] = []
    word_core_owner: list[int] = []
    for index, ipa in enumerate(word_ipas):
        for char in unicodedata.normalize("NFD", ipa):
            if _kind(char) == "core":
                word_core_chars.append(char)
                word_core_owner.append(index)

    owners = [-1] * len(sentence_ipa)
    if not sentence_core or not word_core_chars:
        return owners
    matcher = difflib.SequenceMatcher(None, sentence_core, "".join(word_core_chars), autojunk=False)
    core_owner: list[int | None] = [None] * len(core_positions)
    for a, b, size in matcher.get_matching_blocks():
        for offset in range(size):
            core_owner[a + offset] = word_core_owner[b + offset]

    # Unmatched letters join the nearest matched letter before them (after them at the start):
    # between two matched letters this keeps owners non-decreasing.
    last: int | None = None
    for i, owner in enumerate(core_owner):
        if owner is None:
            core_owner[i] = last
        else:
            last = owner
    first = next((o for o in core_owner if o is not None), 0)
    for i, position in enumerate(core_positions):
        owner = core_owner[i]
        owners[position] = owner if owner is not None else first

    # Marks (stress, length) take the owner of the next letter in their token, else the previous.
    for i, kind in enumerate(kinds):
        if kind != "mark":
            continue
        j = i + 1
        while j < len(kinds) and kinds[j] == "mark":
            j += 1
        if j < len(kinds) and kinds[j] == "core":
            owners[i] = owners[j]
        else:
            k = i - 1
            while k >= 0 and kinds[k] == "mark":
                k -= 1
            if k >= 0 and kinds[k] == "core":
                owners[i] = owners[k]
    return owners


def word_timings(
    words: Sequence[tuple[str, str]],
    sentence_ipa: str,
    char_id_positions: Sequence[int],
    id_count: int,
    durations: np.ndarray,
    seconds_per_frame: float,
) -> list[WordTiming]:
    """Start and end (seconds) of each word, from frames per phoneme id (``durations``).

    ``char_id_positions[k]`` is the index in the id sequence of character ``k`` of
    ``sentence_ipa`` (-1 when the voice has no id for it); ``id_count`` the sequence's length.
    """
    if not words:
        return []
    owners = char_owners(sentence_ipa, [ipa for _, ipa in words])
    frame_starts = np.concatenate([[0.0], np.cumsum(durations[:id_count], dtype=np.float64)])
    # A character spans its ids and trailing pad: up to the next known character, or the end marker.
    next_start = [id_count - 1] * len(char_id_positions)
    upcoming = id_count - 1
    for k in range(len(char_id_positions) - 1, -1, -1):
        next_start[k] = upcoming
        if char_id_positions[k] >= 0:
            upcoming = char_id_positions[k]

    spans: list[tuple[int, int] | None] = [None] * len(words)
    for k, owner in enumerate(owners):
        if owner < 0 or char_id_positions[k] < 0:
            continue
        begin, end = char_id_positions[k], next_start[k]
        span = spans[owner]
        spans[owner] = (begin, end) if span is None else (min(span[0], begin), max(span[1], end))

    timings = []
    cursor = 0  # id index where the previous word ended: unaligned words sit there, zero-length
    for (word, _), span in zip(words, spans, strict=True):
        begin, end = span if span is not None else (cursor, cursor)
        begin = max(begin, cursor) if span is None else begin
        timings.append(
            WordTiming(
                word=word,
                start=float(frame_starts[begin]) * seconds_per_frame,
                end=float(frame_starts[end]) * seconds_per_frame,
            )
        )
        cursor = max(cursor, end)
    return timings
