"""An SSML job's document cut into chunks: pauses between them, voices on them, steps in them."""

from __future__ import annotations

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
    steps = chunks[0].steps
    assert steps[0] == {"mark": "start"} and steps[-1] == {"mark": "end"}
    assert {"text": "very", "rate": 0.9, "gain_db": 3.0} in steps
    assert {"text": "quiet", "rate": 0.8, "gain_db": -6.0} in steps
    assert {"phonemes": "ˈnɪə", "word": "Nia"} in steps
    assert {"text": "bonjour", "lang": "fr"} in steps
    segments = segments_of(steps)
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
    assert again.steps == [[{"text": "One."}], [{"text": "Two."}]] and again.pauses_ms == [0, 400]


def test_the_voices_that_must_speak_ipa_are_those_with_a_phoneme_or_another_language() -> None:
    document = (f'<speak {NS}>Hi. <voice name="amy"><phoneme alphabet="ipa" ph="wɪn">Win</phoneme></voice> '
                '<voice name="ivy">Plain.</voice> <voice name="walter"><lang xml:lang="fr-FR">Merci.</lang></voice></speak>')
    assert phoneme_voices(document, "en", Speakers("joe")) == ["amy", "walter"]


def test_an_unsupported_element_names_itself_and_its_position() -> None:
    with pytest.raises(SsmlError, match=r"SSML element <audio> at line 1, column \d+ is not supported"):
        _chunks('Hi <audio src="x.wav"/>')
