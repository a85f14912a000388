"""The shipped lineups: Kokoro voices first, eSpeak formant voices only as labelled fallbacks.

These hold the shipped catalog (not every operator's) to what the product promises: ``coda`` is
neural only, no language of any model starts with a formant voice, every language has a female
and a male neural voice, and the Kokoro blends stay on the right side of each gender.
"""

import pytest

from speech.text.languages import SUPPORTED
from speech.voices.catalog import Catalog

MODELS = ("coda", "mistv3", "mistv2", "mist", "arcana")
MIST = ("mistv3", "mistv2", "mist")
KUMO = "jm_kumo"
FEMALE_KUMO_MAX = 0.3  # the catalog's comment: a female blend borrows at most this much jm_kumo
MALE_KUMO_MIN = 0.8


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.load()


def _weights(voice) -> dict[str, float]:  # type: ignore[no-untyped-def]
    return dict(voice.pack) if isinstance(voice.pack, tuple) else {voice.pack: 1.0}


def test_coda_has_no_formant_voice(catalog):
    assert [v.speaker for v in catalog.voices_of("coda") if v.quality == "formant" or v.engine == "espeak"] == []


@pytest.mark.parametrize("model_id", MODELS)
def test_no_language_starts_with_a_formant_voice(catalog, model_id):
    for lang in SUPPORTED:
        first = catalog.voices_of(model_id, lang)[0]
        assert (first.quality, first.engine) != ("formant", "espeak"), (lang, first.speaker)
        assert first.quality == "neural", (lang, first.speaker)


@pytest.mark.parametrize("model_id", MODELS)
def test_every_language_has_a_female_and_a_male_neural_voice(catalog, model_id):
    for lang in SUPPORTED:
        neural = [v for v in catalog.voices_of(model_id, lang) if v.quality == "neural"]
        assert {"Female", "Male"} <= {v.gender for v in neural} or (model_id in MIST and lang == "en"), lang


def test_coda_speaks_every_language_with_kokoro_of_both_genders(catalog):
    for lang in SUPPORTED:
        kokoro = [v for v in catalog.voices_of("coda", lang) if v.engine == "kokoro"]
        assert {v.gender for v in kokoro} == {"Female", "Male"}, lang


@pytest.mark.parametrize("model_id", MIST)
def test_the_mist_models_keep_joe_for_english_and_gain_kokoro_elsewhere(catalog, model_id):
    english = catalog.voices_of(model_id, "en")
    assert english[0].speaker == "joe" and english[0].engine == "vits"
    assert [v.engine for v in english] == ["vits", "espeak"]
    for lang in SUPPORTED[1:]:
        voices = catalog.voices_of(model_id, lang)
        kokoro = [v for v in voices if v.engine == "kokoro"]
        assert {v.gender for v in kokoro} == {"Female", "Male"}, lang
        assert voices[-1].engine == "espeak", lang  # the fallback comes last


def test_arcana_is_coda_plus_the_formant_fallbacks(catalog):
    """From the switch, cloud arcana requests are served by coda: every arcana speaker but the
    formant fallbacks (kept for self-hosted arcana, which never switches) is a coda voice."""
    arcana = catalog.voices_of("arcana")
    assert [v for v in arcana if v.quality != "formant"] == catalog.voices_of("coda")
    assert all(v.engine == "espeak" for v in arcana if "coda" not in v.models)


def test_a_speaker_name_is_one_voice(catalog):
    speakers = [v.speaker for v in catalog.voices]
    assert len(set(speakers)) == len(speakers)


def test_kokoro_voices_are_labelled_in_the_listing(catalog):
    for v in catalog.voices:
        if v.engine != "kokoro":
            assert "Kokoro" not in v.genre, v.speaker
            continue
        assert (v.quality, v.genre[:2], v.flagship) == ("neural", ("Kokoro", "Neural"), True), v.speaker
        accent = "with a Japanese accent (the voice was trained on Japanese speech)"
        assert (accent in v.dialect) == (v.lang != "ja"), v.speaker  # the bundled packs are Japanese


def test_kokoro_blends_stay_on_their_gender(catalog):
    kokoro = [v for v in catalog.voices if v.engine == "kokoro"]
    assert len(kokoro) == 40
    for v in kokoro:
        assert v.pack_kind in ("named", "blend"), v.speaker
        weights = _weights(v)
        assert sum(weights.values()) == pytest.approx(1.0), v.speaker
        if v.gender == "Male":
            assert weights.get(KUMO, 0.0) >= MALE_KUMO_MIN, v.speaker
        else:
            assert v.gender == "Female", v.speaker
            assert weights.get(KUMO, 0.0) <= FEMALE_KUMO_MAX + 1e-9, v.speaker
            assert all(name.startswith("jf_") for name in weights if name != KUMO), v.speaker


def test_kokoro_voices_sound_different_within_a_language(catalog):
    for lang in SUPPORTED:
        keys = [v.key for v in catalog.voices_of("coda", lang) if v.engine == "kokoro"]
        assert len(set(keys)) == len(keys), lang
