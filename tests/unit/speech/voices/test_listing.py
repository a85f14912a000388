import json

import pytest

from speech.voices.catalog import Catalog
from speech.voices.listing import all_v2, voice_details

LEGACY = ["eng", "spa", "fra", "por", "ger", "jpn", "ara", "hin", "ita", "nld"]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.load()


def test_all_v2_shape(catalog):
    listing = all_v2(catalog)
    assert list(listing) == ["coda", "mistv3", "mistv2", "mist", "arcana"]
    for model_id, by_lang in listing.items():
        assert list(by_lang) == LEGACY, model_id
        assert all(isinstance(s, str) for speakers in by_lang.values() for s in speakers)
    assert listing["mistv3"]["eng"] == ["joe", "walter"]
    assert listing["coda"]["eng"] == ["joe", "ivy", "owen", "nora", "miles"]
    assert listing["coda"]["ger"] == ["lena", "matthias", "greta", "lukas"]
    assert listing["mistv3"]["ger"] == ["lena", "matthias", "konrad"]
    assert listing["arcana"]["ger"] == ["lena", "matthias", "greta", "lukas", "konrad"]
    json.dumps(listing)


def test_all_v2_follows_the_catalog(catalog, tmp_path):
    extra = tmp_path / "c.toml"
    from speech.voices.catalog import default_catalog_path

    extra.write_text(
        default_catalog_path().read_text(encoding="utf-8")
        + '\n[[voices]]\nspeaker = "ana"\nmodels = ["mistv2"]\nlang = "es"\ngender = "Female"\nengine = "espeak"\n'
    )
    listing = all_v2(Catalog.load(extra))
    assert listing["mistv2"]["spa"] == ["lucia", "diego", "mateo", "ana"]
    assert listing["coda"]["spa"] == ["lucia", "diego", "carmen", "pablo"]


def test_voice_details_shape(catalog):
    details = voice_details(catalog)
    # every voice in every lineup: joe in 5; per language two Kokoro voices in all 5 lineups (not
    # English, where the mist models keep joe) and two in coda and arcana; a formant fallback in 4
    assert len(details) == 5 + 9 * 2 * 5 + 10 * 2 * 2 + 2 * 2 + 10 * 4 == 179
    keys = {
        "speaker",
        "modelId",
        "lang",
        "language",
        "gender",
        "age",
        "country",
        "dialect",
        "demographic",
        "genre",
        "flagship",
    }
    assert all(set(d) == keys for d in details)
    joe = next(d for d in details if d["speaker"] == "joe" and d["modelId"] == "coda")
    assert joe == {
        "speaker": "joe",
        "modelId": "coda",
        "lang": "eng",
        "language": "English",
        "gender": "Male",
        "age": "Adult",
        "country": "United States",
        "dialect": "General American",
        "demographic": "Unspecified",
        "genre": ["General", "Conversational", "Narration"],
        "flagship": True,
    }
    konrad = next(d for d in details if d["speaker"] == "konrad" and d["modelId"] == "mistv2")
    assert (konrad["lang"], konrad["language"], konrad["flagship"]) == ("ger", "German", False)
    assert konrad["genre"] == ["Formant", "Fallback"]
    lena = next(d for d in details if d["speaker"] == "lena" and d["modelId"] == "coda")
    assert lena == {
        "speaker": "lena",
        "modelId": "coda",
        "lang": "ger",
        "language": "German",
        "gender": "Female",
        "age": "Adult",
        "country": "Germany",
        "dialect": "Standard German, with an Italian accent (the voice was trained on Italian speech)",
        "demographic": "Unspecified",
        "genre": ["Kokoro", "Neural", "General", "Narration"],
        "flagship": True,
    }
    kenji = next(d for d in details if d["speaker"] == "kenji" and d["modelId"] == "mistv3")
    assert (kenji["gender"], kenji["dialect"], kenji["genre"][:2]) == ("Male", "Standard Japanese", ["Kokoro", "Neural"])
    json.dumps(details)
