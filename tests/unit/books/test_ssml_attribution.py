"""A cast SSML job's quotes outside ``<voice>`` are attributed from the prose, as plain text's."""

from __future__ import annotations

from books.casting import Cast
from books.job_ssml import Speakers, ssml_chunks
from scheduler.job_params import JobParams
from scheduler.planning import split, split_ssml

CAST = Cast("joe", "ivy", {"Elizabeth": "nora", "Mr. Darcy": "owen"}, {"Elizabeth": ["Lizzy"], "Mr. Darcy": ["Darcy"]})
STORED = {"narrator": "joe", "dialogue": "ivy", "characters": {
    "Elizabeth": {"voice": "nora", "aliases": ["Lizzy"]}, "Mr. Darcy": {"voice": "owen", "aliases": ["Darcy"]}}}
PARAGRAPHS = [
    "“I am not tired,” said Elizabeth.",
    "“Then walk with me,” replied Mr. Darcy, “for the evening is fine.”",
    "“Gladly.”",
    "“Who is there?” cried a voice from the hall.",
]


def _voices(document: str, cast: Cast = CAST) -> list[tuple[str, str, str | None]]:
    return [(c.text, c.voice, c.speaker) for c in ssml_chunks(document, "en", Speakers(cast.narrator, cast))]


def test_quotes_are_read_by_their_speakers_as_in_plain_text() -> None:
    document = "<speak>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS) + "</speak>"
    plain_texts, plain = split("\n\n".join(PARAGRAPHS), "en", cast=CAST)
    ssml_texts, ssml = split_ssml(document, JobParams(speaker="joe", model_id="coda", lang="en", ssml=True, cast=STORED))  # type: ignore[arg-type]
    assert list(zip(ssml_texts, ssml.voices, ssml.speakers, strict=True)) == list(
        zip(plain_texts, plain.voices, plain.speakers, strict=True))
    assert ("“I am not tired,”", "nora", "Elizabeth") in _voices(document)
    assert ("“Gladly.”", "nora", "Elizabeth") in _voices(document)  # the exchange's turns alternate
    alone = "<speak><p>The hall was dark.</p><p>“Who is there?”</p></speak>"
    assert ("“Who is there?”", "ivy", "") in _voices(alone)  # nobody to name: the dialogue voice


def test_markup_inside_a_paragraph_does_not_hide_its_cues_and_keeps_its_offsets() -> None:
    document = ('<speak><p>“I am <emphasis>not</emphasis> tired,” said <sub alias="Elizabeth">Eliza</sub>.</p>'
                '<p>“Nor I,” <phoneme alphabet="ipa" ph="ˈdɑːsi">Darcy</phoneme> answered.</p></speak>')
    chunks = ssml_chunks(document, "en", Speakers("joe", CAST))
    assert [(c.text, c.voice) for c in chunks] == [
        ("“I am not tired,”", "nora"), ("said Elizabeth.", "joe"), ("“Nor I,”", "owen"), ("Darcy answered.", "joe")]
    quote = chunks[0]
    assert quote.at is not None and document[quote.at:].startswith("“I am <emphasis>")


def test_a_voice_element_wins_over_the_prose() -> None:
    document = '<speak><p><voice name="amy">“I am not tired,”</voice> said Elizabeth.</p><p>“Nor I,” said Darcy.</p></speak>'
    assert _voices(document)[:2] == [("“I am not tired,”", "amy", ""), ("said Elizabeth.", "joe", None)]
    assert ("“Nor I,”", "owen", "Mr. Darcy") in _voices(document)


def test_a_quote_and_its_tag_in_one_voice_stay_one_sentence() -> None:
    same = Cast("joe", "joe", {"Elizabeth": "joe"}, {"Elizabeth": []})
    assert _voices("<speak><p>“Hello,” said Elizabeth. Then she left.</p></speak>", same) == [
        ("“Hello,” said Elizabeth. Then she left.", "joe", "Elizabeth")]
