"""An SSML job's document cut into chunks: pauses between them, voices on them, steps in them."""

from __future__ import annotations

import numpy as np
import pytest

from books.casting import Cast
from books.job_ssml import Speakers, phoneme_voices, segments_of, spoken_text, ssml_chunks, voice_names
from books.layout import Layout
from scheduler.job_params import JobParams
from scheduler.planning import split_ssml
from speech.errors import SsmlError
from speech.text.markup import MarkSegment, PhonemeSegment, TextSegment

NS = 'xmlns="http://www.w3.org/2001/10/synthesis"'


def _chunks(body: str, speakers: Speakers = Speakers("joe")):  # type: ignore[no-untyped-def]
    return ssml_chunks(f"<speak {NS}>{body}</speak>", "en", speakers, sentence_ms=250)


def test_a_break_is_the_pause_before_the_next_chunk_exactly() -> None:
    chunks = _chunks('One two. <break time="1500ms"/> Three four. <break strength="x-strong"/>Five.')
    assert [c.text for c in chunks] == ["One two.", "Three four.", "Five."]
    assert [c.pause_ms for c in chunks] == [0, 1500, 1200]


def test_a_voice_switch_is_a_chunk_of_that_voice_and_a_cast_name_its_characters() -> None:
    cast = Cast("joe", "joe", {"Elizabeth": "nora"}, {"Elizabeth": ["Lizzy"]})
    chunks = _chunks('Narration. <voice name="Lizzy">Hello there.</voice> <voice name="amy">Hi.</voice> Done.',
                     Speakers("joe", cast))
    assert [(c.text, c.voice, c.speaker) for c in chunks] == [
        ("Narration.", "joe", None), ("Hello there.", "nora", "Elizabeth"), ("Hi.", "amy", ""), ("Done.", "joe", None)]
    assert voice_names('<speak>a <voice name="amy">b</voice> <voice name="amy">c</voice></speak>', "en") == ["amy"]


def test_prosody_emphasis_phoneme_lang_and_mark_stay_in_the_steps() -> None:
    chunks = _chunks('<mark name="start"/>It is <emphasis level="strong">very</emphasis> '
                     '<prosody rate="slow" volume="-6dB">quiet</prosody>, said <phoneme alphabet="ipa" ph="ˈnɪə">Nia</phoneme> '
                     '<lang xml:lang="fr-FR">bonjour</lang>.<mark name="end"/>')
    assert len(chunks) == 1 and chunks[0].text == "It is very quiet, said Nia bonjour."
    steps = [{k: v for k, v in s.items() if k != "src"} for s in chunks[0].steps]  # where each was written: below
    assert steps[0] == {"mark": "start"} and steps[-1] == {"mark": "end"}
    assert {"text": "very", "rate": 0.9, "gain_db": 3.0} in steps
    assert {"text": "quiet", "rate": 0.8, "gain_db": -6.0} in steps
    assert {"phonemes": "ˈnɪə", "word": "Nia"} in steps
    assert {"text": "bonjour", "lang": "fr"} in steps
    segments = segments_of(chunks[0].steps)
    assert isinstance(segments[0], MarkSegment) and segments[0].name == "start"
    assert any(isinstance(s, PhonemeSegment) and s.word == "Nia" for s in segments)
    assert any(isinstance(s, TextSegment) and s.voicing.gain_db == -6.0 for s in segments)


def test_a_long_paragraph_is_cut_at_sentences_within_the_chunk_limit() -> None:
    sentence = "This sentence is about forty characters. "
    chunks = _chunks(f"<p>{sentence * 40}</p>")
    assert len(chunks) > 1 and all(len(c.text) <= 600 for c in chunks)
    assert " ".join(c.text for c in chunks) == " ".join((sentence * 40).split())


def test_spoken_text_is_what_is_billed_never_the_markup() -> None:
    document = f'<speak {NS}><p>Call <sub alias="Doctor">Dr.</sub> Smith<break time="1s"/> now.</p><mark name="x"/></speak>'
    assert spoken_text(document, "en") == "Call Doctor Smith\n\nnow."


def test_the_plan_of_an_ssml_job_carries_voices_speakers_and_steps() -> None:
    params = JobParams(speaker="joe", model_id="coda", lang="en", ssml=True)
    texts, layout = split_ssml(f'<speak {NS}><p>One.</p><p><voice name="amy">Two.</voice></p></speak>', params)
    assert texts == ["One.", "Two."] and layout.voices == ["joe", "amy"] and layout.speakers == [None, ""]
    again = Layout.from_json(layout.to_json())
    assert again.steps == [[{"text": "One.", "src": [[0, 0, 0, 1]]}], [{"text": "Two.", "src": [[0, 0, 0, 1]]}]]
    assert again.pauses_ms == [0, 400] and again.sources == [[(0, 54)], [(0, 83)]]


def test_the_voices_that_must_speak_ipa_are_those_with_a_phoneme_or_another_language() -> None:
    document = (f'<speak {NS}>Hi. <voice name="amy"><phoneme alphabet="ipa" ph="wɪn">Win</phoneme></voice> '
                '<voice name="ivy">Plain.</voice> <voice name="walter"><lang xml:lang="fr-FR">Merci.</lang></voice></speak>')
    assert phoneme_voices(document, "en", Speakers("joe")) == ["amy", "walter"]


def test_an_unsupported_element_names_itself_and_its_position() -> None:
    with pytest.raises(SsmlError, match=r"SSML element <audio> at line 1, column \d+ is not supported"):
        _chunks('Hi <audio src="x.wav"/>')


# -- word offsets into the document ------------------------------------------------------------

RATE = 1000


def _spoken_like_an_engine(unit):  # type: ignore[no-untyped-def]
    """What an engine gives a job's unit: a pause's silence, a mark's name, or each word of
    what it says timed (one sample a word); ``speech.stream_steps.located`` then places them."""
    from speech.stream_steps import located
    from speech.text.words import split_words
    from speech.types import AudioChunk, WordTiming

    if unit.pause_ms or unit.mark:
        marks = [WordTiming(unit.mark, 0.0, 0.0)] if unit.mark else []
        return AudioChunk(np.zeros(unit.pause_ms * RATE // 1000, dtype=np.float32), RATE, "", marks)
    said = split_words(unit.word if unit.phonemes else unit.text)
    words = [WordTiming(w, k / RATE, (k + 1) / RATE) for k, w in enumerate(said)]
    return located(AudioChunk(np.full(len(said), 0.1, dtype=np.float32), RATE, unit.text or unit.word, words), unit)


def _job_words(document: str, params: JobParams | None = None) -> list[dict[str, object]]:
    """Each chunk of ``document`` planned, its units spoken, its words stored as synthesis
    stores them (``join_sentences`` with the chunk's runs): what the timestamps JSON carries."""
    from scheduler.synthesis import chunk_units, join_sentences

    params = params or JobParams(speaker="joe", model_id="coda", lang="en", ssml=True)
    texts, layout = split_ssml(document, params)
    words: list[dict[str, object]] = []
    for index, text in enumerate(texts):
        units = chunk_units(text, layout.steps[index], "en", True, [])
        _, timed = join_sentences([_spoken_like_an_engine(u) for u in units], RATE, runs=layout.sources[index])
        words += [dict(w) for w in timed]
    return words


def _read_back(document: str, words: list[dict[str, object]]) -> list[tuple[object, str | None]]:
    return [(w["word"], document[int(w["textOffset"]) : int(w["textOffset"]) + int(w["textLength"])]  # type: ignore[call-overload]
             if "textOffset" in w else None) for w in words]


def test_an_ssml_jobs_words_point_into_the_document_as_sent() -> None:
    """``sub``, ``say-as``, an entity, a ``phoneme`` and words inside nested elements, across
    chunks cut by a break and a voice: each word's offsets read back what it was read from."""
    document = (f'<speak {NS}><p>Dr. Lee &amp; co paid <say-as interpret-as="cardinal">1,234</say-as> for the '
                '<sub alias="World Wide Web">WWW</sub>.</p><break time="1s"/>'
                '<p>It was <emphasis level="strong">very <prosody rate="slow">very</prosody></emphasis> late, said '
                '<phoneme alphabet="ipa" ph="ˈnɪə">Nia</phoneme>.<mark name="here"/></p>'
                '<voice name="amy"><s>Fine &#38; dandy.</s></voice></speak>')
    assert _read_back(document, _job_words(document)) == [
        ("Doctor", "Dr."), ("Lee", "Lee"), ("and", "&amp;"), ("co", "co"), ("paid", "paid"),
        ("one", "1,234"), ("thousand", "1,234"), ("two", "1,234"), ("hundred", "1,234"), ("thirty-four", "1,234"),
        ("for", "for"), ("the", "the"), ("World", "WWW"), ("Wide", "WWW"), ("Web", "WWW"),
        ("It", "It"), ("was", "was"), ("very", "very"), ("very", "very"), ("late", "late"), ("said", "said"),
        ("Nia", "Nia"), ("here", None),  # a mark is timed and written nowhere
        ("Fine", "Fine"), ("and", "&#38;"), ("dandy", "dandy"),  # a character reference, whole
    ]
    words = _job_words(document)
    very = [int(w["textOffset"]) for w in words if w["word"] == "very"]  # type: ignore[call-overload]
    assert very[0] < very[1] and document[very[1] - 1] == ">"  # the second is the one inside <prosody>


def test_a_long_paragraphs_pieces_keep_their_own_offsets() -> None:
    sentence = "This sentence is about forty characters. "
    document = f"<speak {NS}><p>{sentence * 40}</p></speak>"
    texts, _ = split_ssml(document, JobParams(speaker="joe", model_id="coda", lang="en", ssml=True))
    assert len(texts) > 1
    read = _read_back(document, _job_words(document))
    assert len(read) == 40 * 6 and all(word == written for word, written in read)
    offsets = [int(w["textOffset"]) for w in _job_words(document)]  # type: ignore[call-overload]
    assert offsets == sorted(offsets) and offsets[-1] > len(document) - len(sentence) - 20


def test_a_reused_ssml_chunk_moves_its_offsets_only_onto_the_same_markup() -> None:
    """The words of a chunk reused from another document move to where it stands now, unless
    its markup lays its words out otherwise (same sound, other offsets: none, never wrong ones)."""
    from books.job_ssml import origin_key
    from scheduler.chunk_cache import Wanted, labelled

    params = JobParams(speaker="joe", model_id="coda", lang="en", ssml=True)
    first = f"<speak {NS}><p>Hello big world.</p></speak>"
    moved = f"<speak {NS}><p>Intro.</p><p>Hello big world.</p></speak>"
    other = f'<speak {NS}><p>Intro.</p><p>Hello <emphasis level="none">big</emphasis> world.</p></speak>'
    _, plan = split_ssml(first, params)
    meta = {"sample_rate": RATE, "duration_s": 1.0, "text": "Hello big world.", "sources": plan.sources[0],
            "origins": origin_key(plan.steps[0]), "words": _job_words(first)}
    for document, expected in ((moved, ["Hello", "big", "world"]), (other, [None, None, None])):
        _, layout = split_ssml(document, params)
        wanted = Wanted(1, "Hello big world.", "key", None, layout.sources[1], origin_key(layout.steps[1]))
        got = labelled(meta, wanted)["words"]  # type: ignore[arg-type]
        assert [r[1] for r in _read_back(document, got)] == expected  # type: ignore[arg-type]


# -- chapters, a delivery's credits, edge breaks ------------------------------------------------


def test_a_chapter_mark_opens_a_chapter_with_the_chapter_pause() -> None:
    params = JobParams(speaker="joe", model_id="coda", lang="en", ssml=True, pauses={"chapter": 3000})
    document = (f'<speak {NS}><p>Front matter.</p><mark name="chapter:The Ball"/><p>They danced.</p><p>All night.</p>'
                '<break time="5s"/><mark name="chapter: The End "/><p>Done.</p><mark name="chapter:"/></speak>')
    texts, layout = split_ssml(document, params)
    assert texts == ["Front matter.", "They danced.", "All night.", "Done."]
    assert [(c.title, c.chunk) for c in Layout.from_json(layout.to_json()).chapters] == [("The Ball", 1), ("The End", 3)]
    assert layout.pauses_ms == [0, 3000, 400, 5400]  # a longer break than the chapter pause stays as asked
    assert {"mark": "chapter:The Ball"} in layout.steps[1]  # still a mark in the words
    assert layout.steps[3][-1] == {"mark": "chapter:"}  # a mark with no title opens nothing


def test_a_delivery_puts_credits_around_the_document_as_chapters_of_their_own() -> None:
    from books import credits

    params = JobParams(speaker="joe", model_id="coda", lang="en", ssml=True, delivery="acx", title="Tea", author="Ann")
    document = f'<speak {NS}><p>Before.</p><mark name="chapter:One"/><p>First.</p><mark name="chapter:Two"/><p>Second.</p></speak>'
    texts, layout = split_ssml(document, params)
    opening, closing = credits.texts(params)
    assert texts == [opening, "Before.", "First.", "Second.", closing]
    assert [(c.title, c.chunk) for c in layout.chapters] == [
        (credits.OPENING, 0), ("Tea", 1), ("One", 2), ("Two", 3), (credits.CLOSING, 4)]
    assert credits.credit_chunks(layout, len(texts)) == [0, 4]
    assert layout.pauses_ms[0] == 0 and layout.pauses_ms[1] == layout.pauses_ms[-1] == 2000
    assert layout.voices == ["joe"] * 5 and layout.sources[0] is None and layout.sources[-1] is None
    assert layout.steps[0] == [{"text": opening}] and layout.steps[-1] == [{"text": closing}]
    plain = f"<speak {NS}><p>Only this.</p></speak>"
    assert [(c.title, c.chunk) for c in split_ssml(plain, params)[1].chapters] == [
        (credits.OPENING, 0), ("Tea", 1), (credits.CLOSING, 2)]


def test_breaks_at_the_edges_are_silence_inside_the_first_and_last_chunks() -> None:
    """Nothing dropped: a break before the first word opens the first chunk, one after the last
    closes the last (marks in their order); a paragraph's own pause is no break at the edges."""
    chunks = _chunks('<break time="700ms"/><mark name="a"/><p>One.</p><p>Two.</p>'
                     '<mark name="b"/><break time="2s"/><break strength="weak"/><mark name="c"/>')
    assert [c.text for c in chunks] == ["One.", "Two."] and [c.pause_ms for c in chunks] == [0, 400]
    assert [{k: v for k, v in s.items() if k != "src"} for s in chunks[0].steps] == [
        {"pause_ms": 700}, {"mark": "a"}, {"text": "One."}]
    assert chunks[1].steps[1:] == [{"mark": "b"}, {"pause_ms": 2000}, {"pause_ms": 250}, {"mark": "c"}]
    assert [s for s in _chunks("<p>Just one.</p>")[0].steps if "pause_ms" in s] == []


def test_an_edge_break_is_heard_and_the_words_after_it_are_timed_after_it() -> None:
    from scheduler.synthesis import SENTENCE_GAP_MS, join_sentences

    document = f'<speak {NS}><break time="1500ms"/>Hello there. Again.<break time="2s"/></speak>'
    texts, layout = split_ssml(document, JobParams(speaker="joe", model_id="coda", lang="en", ssml=True))
    from scheduler.synthesis import chunk_units

    units = chunk_units(texts[0], layout.steps[0], "en", True, [])
    pieces = [_spoken_like_an_engine(u) for u in units]
    samples, words = join_sentences(pieces, RATE, runs=layout.sources[0])
    spoken = 2 + 1  # one sample a word: "Hello there." and "Again."
    assert len(samples) == 1500 + spoken + SENTENCE_GAP_MS + 2000  # no gap beside either silence
    assert words[0]["start"] == 1.5 and not samples[:1500].any() and not samples[-2000:].any()
    assert [w["word"] for w in words] == ["Hello", "there", "Again"]
