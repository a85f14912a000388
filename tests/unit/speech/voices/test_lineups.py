"""The shipped lineups: Kokoro voices first, eSpeak formant voices only as labelled fallbacks.

These hold the shipped catalog (not every operator's) to what the product promises: ``coda`` is
neural only, no language of any model starts with a formant voice, every language has a female
and a male neural voice, the Kokoro blends stay on the right side of each gender, and a voice whose pack was trained on
another language says so.
"""

import pytest

from speech.text.languages import SUPPORTED
from speech.voices.catalog import Catalog
from speech.voices.entries import KOKORO_PACKS

MODELS = ("coda", "mistv3", "mistv2", "mist", "arcana")
MIST = ("mistv3", "mistv2", "mist")
MALE_MIN = 0.8  # the catalog's comment: a male voice is at least 0.8 male packs,
FEMALE_MIN = 0.7  # a female one at least 0.7 female packs
# Kokoro v1.0's pack name prefixes: the language its speech was trained on (API code, name).
PACK_LANGUAGES = {
    "a": ("en", "American English"), "b": ("en", "British English"), "e": ("es", "Spanish"),
    "f": ("fr", "French"), "h": ("hi", "Hindi"), "i": ("it", "Italian"), "j": ("ja", "Japanese"),
    "p": ("pt", "Brazilian Portuguese"), "z": ("zh", "Mandarin Chinese"),
}


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


def _trained_on(voice) -> str:  # type: ignore[no-untyped-def]
    """The language of the pack with the largest weight in ``voice``: Kokoro names a pack
    ``<language><gender>_<name>`` (``ff_siwis``: French, female)."""
    weights = _weights(voice)
    return PACK_LANGUAGES[max(weights, key=lambda name: weights[name])[0]]


def test_kokoro_voices_are_labelled_in_the_listing(catalog):
    """voice_details says it is Kokoro and, where its main pack was trained on another language's
    speech, the accent that brings (elodie, ff_siwis in French: none; julien, em_alex: Spanish)."""
    for v in catalog.voices:
        if v.engine != "kokoro":
            assert "Kokoro" not in v.genre, v.speaker
            continue
        assert (v.quality, v.genre[:2], v.flagship) == ("neural", ("Kokoro", "Neural"), True), v.speaker
        code, language = _trained_on(v)
        article = "an" if language[0] in "AEIOU" else "a"
        accent = f"with {article} {language} accent (the voice was trained on {language} speech)"
        if code == v.lang:
            assert "accent" not in v.dialect, v.speaker
        else:
            assert v.dialect.endswith(f", {accent}"), v.speaker


def test_kokoro_blends_stay_on_their_gender(catalog):
    """A male voice is at least 0.8 male packs (``?m_*``), a female one at least 0.7 female packs
    (``?f_*``): a blend may borrow some clarity from the other gender, not its voice."""
    kokoro = [v for v in catalog.voices if v.engine == "kokoro"]
    assert len(kokoro) == 40
    for v in kokoro:
        assert v.pack_kind in ("named", "blend"), v.speaker
        weights = _weights(v)
        assert sum(weights.values()) == pytest.approx(1.0), v.speaker
        assert set(weights) <= KOKORO_PACKS, v.speaker
        own = "m" if v.gender == "Male" else "f"
        assert v.gender in ("Male", "Female"), v.speaker
        share = sum(w for name, w in weights.items() if name[1] == own)
        assert share >= (MALE_MIN if own == "m" else FEMALE_MIN) - 1e-9, v.speaker


def test_kokoro_voices_sound_different_within_a_language(catalog):
    for lang in SUPPORTED:
        keys = [v.key for v in catalog.voices_of("coda", lang) if v.engine == "kokoro"]
        assert len(set(keys)) == len(keys), lang
