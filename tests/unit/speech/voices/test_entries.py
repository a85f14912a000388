"""Catalog validation: every malformed entry is a CatalogError that names it."""

import copy
import tomllib

import pytest

from speech.errors import CatalogError, SpeechError
from speech.voices.catalog import Catalog, default_catalog_path


@pytest.fixture
def data() -> dict:
    return tomllib.loads(default_catalog_path().read_text(encoding="utf-8"))


def broken(data: dict, change) -> dict:
    copy_ = copy.deepcopy(data)
    change(copy_)
    return copy_


def load(data: dict) -> Catalog:
    return Catalog.from_dict(data, source="test.toml")


def test_catalog_error_is_a_speech_error():
    assert issubclass(CatalogError, SpeechError)


def test_the_shipped_data_is_valid(data):
    assert len(load(data).voices) == 11


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["voices"][2].update(engine="tacotron"),
            r"voices\[2\] \(speaker 'mateo'\): engine must be 'vits' or 'espeak'",
        ),
        (
            lambda d: d["voices"][0].pop("weights"),
            r"voices\[0\] \(speaker 'joe'\): a vits voice needs weights",
        ),
        (
            lambda d: d["voices"][1].update(weights="s3://x"),
            r"voices\[1\] \(speaker 'walter'\): an espeak voice takes no weights",
        ),
        (
            lambda d: d["voices"][3].update(lang="zh"),
            r"voices\[3\] \(speaker 'lucien'\): lang must be one of",
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
            lambda d: d["voices"].append(dict(d["voices"][1])),
            r"voices\[11\] \(speaker 'walter'\): duplicates voices\[1\] in model coda",
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
    d = broken(data, lambda d: d["voices"][3].pop("espeak_voice"))
    assert load(d).voice("coda", "lucien").espeak_voice == "fr-fr"


@pytest.mark.parametrize(("weights", "kind"), [("s3://voices/x.onnx", "s3"), ("/srv/voices/x.onnx", "path")])
def test_weights_kinds(data, weights, kind):
    d = broken(data, lambda d: d["voices"][0].update(weights=weights))
    assert load(d).voice("coda", "joe").weights_kind == kind
