from __future__ import annotations

import re

from books.subtitles import (
    MAX_CUE_CHARS,
    MAX_LINE_CHARS,
    VTT_HEADER,
    Cue,
    TimedSentence,
    cues,
    spoken_sentences,
    srt_block,
    timed_sentences,
    voice_label,
    vtt_block,
    wrap,
)
from speech.text.normalize import normalize_traced
from speech.text.offsets import Traced, spoken_words


def _words(names: list[str], start: float = 0.0, step: float = 0.3) -> list[dict[str, float | str]]:
    return [{"word": w, "start": start + i * step, "end": start + i * step + 0.25} for i, w in enumerate(names)]


def test_sentences_own_the_words_the_engine_spoke_for_them() -> None:
    text = "Mr. Smith has 3 apples. He ate 12 of them!"
    counts = spoken_sentences(text, "en")
    # "3" is spoken as one word, "12" as one ("twelve"): the counts follow the normalised text
    assert [text[start:end] for start, end, _ in counts] == ["Mr. Smith has 3 apples.", "He ate 12 of them!"]
    spoken = ["Mister", "Smith", "has", "three", "apples", "He", "ate", "twelve", "of", "them"]
    assert sum(n for _, _, n in counts) == len(spoken)
    sentences = timed_sentences(text, _words(spoken), "en")
    assert [s.text for s in sentences] == ["Mr. Smith has 3 apples.", "He ate 12 of them!"]
    assert sentences[1].start == 5 * 0.3
    assert sentences[0].end < sentences[1].start


def test_a_count_mismatch_falls_back_to_one_timed_block() -> None:
    sentences = timed_sentences("One. Two.", _words(["a", "b", "c"]), "en")
    assert len(sentences) == 1 and sentences[0].text == "One. Two." and len(sentences[0].words) == 3


def test_long_sentences_become_cues_of_at_most_two_short_lines_in_order() -> None:
    text = (
        "It is a truth universally acknowledged, that a single man in possession of a good fortune, "
        "must be in want of a wife, or so the neighbourhood likes to believe when he arrives."
    )
    words = _words(text.split())
    sentence = TimedSentence(text, words)
    made = cues(sentence)
    assert len(made) >= 2
    assert " ".join(c.text.replace("\n", " ") for c in made) == text
    for cue in made:
        assert len(cue.text.replace("\n", " ")) <= MAX_CUE_CHARS
        lines = cue.text.split("\n")
        assert len(lines) <= 2 and all(len(line) <= MAX_LINE_CHARS for line in lines)
        assert cue.end > cue.start
    assert all(a.end <= b.start + 1e-9 for a, b in zip(made, made[1:], strict=False))
    assert made[0].start == words[0]["start"] and made[-1].end == words[-1]["end"]
    assert made[0].text.replace("\n", " ").endswith(",")  # cut after a clause mark


def test_wrap_balances_two_lines() -> None:
    assert wrap("short") == "short"
    two = wrap("a" * 20 + " " + "b" * 30)
    assert two.split("\n") == ["a" * 20, "b" * 30]


def test_srt_and_vtt_formats() -> None:
    made = cues(TimedSentence("Hello there.", _words(["Hello", "there"], start=3661.5)))
    srt = "".join(srt_block(i + 1, cue) for i, cue in enumerate(made))  # as assembly writes them
    assert srt.startswith("1\n01:01:01,500 --> 01:01:02,050\nHello there.\n\n")
    vtt = VTT_HEADER + "".join(vtt_block(cue) for cue in made)
    assert vtt.startswith("WEBVTT\n\n01:01:01.500 --> 01:01:02.050\nHello there.")
    assert re.fullmatch(r"(\d+\n[\d:,]+ --> [\d:,]+\n[^\n]+(\n[^\n]+)?\n\n)+", srt)


def test_a_cast_cue_is_a_webvtt_voice_span_naming_who_speaks() -> None:
    cue = Cue(1.0, 2.5, "“Shall we\nwalk?”")
    assert vtt_block(cue, voice_label({"voice": "nora", "speaker": "Elizabeth"})).splitlines()[1:3] == [
        "<v Elizabeth>“Shall we</v>", "<v Elizabeth>walk?”</v>"]
    assert voice_label({"voice": "joe", "speaker": None}) == "Narrator"
    assert voice_label({"voice": "ivy", "speaker": ""}) == "ivy"  # dialogue nobody is named for
    assert voice_label({"voice": "x", "speaker": "A<b>&"}) == "A&lt;b&amp;"
    assert voice_label(None) is None and vtt_block(cue) == "00:00:01.000 --> 00:00:02.500\n“Shall we\nwalk?”\n\n"


def _placed(text: str) -> list[dict[str, float | str | int]]:
    """What synthesis stores for ``text``: its spoken words, timed, with their offsets."""
    placed = spoken_words(normalize_traced(Traced.of(text)))
    return [{"word": w.word, "start": i * 0.3, "end": i * 0.3 + 0.25, "textOffset": w.source[0],
             "textLength": w.source[1] - w.source[0]} for i, w in enumerate(placed)]


def test_sentences_and_cues_say_where_their_words_were_written() -> None:
    """A sentence and each of its cues know the stretch of the job's text they show, and a
    WebVTT cue names it in its identifier, which players ignore."""
    text = "Dr. Lee paid $5. " + "Then he walked on and on, along the long road home, " * 3 + "and slept."
    base = 1000  # the chunk stands 1,000 characters into the book, copied as it was written
    book = "x" * base + text
    sentences = timed_sentences(text, _placed(text), "en", runs=[(0, base)])  # type: ignore[arg-type]
    first = sentences[0].written_at()
    assert book[first["textOffset"] : first["textOffset"] + first["textLength"]] == "Dr. Lee paid $5."
    pieces = cues(sentences[1])
    assert len(pieces) > 1  # the long sentence was cut into several cues
    for cue in pieces:
        at = cue.written
        written = book[at["textOffset"] : at["textOffset"] + at["textLength"]]
        assert " ".join(written.split()) == " ".join(cue.text.split())
        assert vtt_block(cue).startswith(f"textOffset={at['textOffset']} textLength={at['textLength']}\n")
    assert not vtt_block(Cue(0.0, 1.0, "no offsets")).startswith("textOffset")
    unplaced = [{k: v for k, v in w.items() if k in ("word", "start", "end")} for w in _placed(text)]
    assert timed_sentences(text, unplaced, "en")[0].written_at() == {}  # type: ignore[arg-type]  # nothing placed
    # Without runs (an SSML job: its text is no copy of the markup), the words' own offsets say it.
    own = timed_sentences(text, _placed(text), "en")[0]  # type: ignore[arg-type]
    assert own.written_at() == {"textOffset": 0, "textLength": len("Dr. Lee paid $5")}  # its words, not its full stop
    assert all(c.written for c in cues(timed_sentences(text, _placed(text), "en")[1]))  # type: ignore[arg-type]
