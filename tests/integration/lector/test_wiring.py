"""An operator adds a voice without touching the installed package: a catalog file of their own
(``LECTOR_VOICE_CATALOG``) naming weights kept in lector's object store (``s3://<key>``), here a
real S3 server (Swift). The voice loads, speaks, and its files are fetched once."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lector.settings import Settings
from lector.wiring import build_catalog, build_synthesizer
from speech.engines.vits.engine import default_voice_paths
from speech.synthesizer import Controls
from speech.voices import Catalog, default_catalog_path

EXTRA_VOICE = """
[[voices]]
speaker = "jonas"
models = ["mistv3", "coda"]
lang = "en"
gender = "Male"
age = "Adult"
country = "United States"
dialect = "General American"
demographic = "Unspecified"
genre = ["Narration"]
flagship = false
engine = "vits"
quality = "neural"
weights = "s3://voices/jonas/en_US-jonas.onnx"
espeak_voice = "en-us"
"""


def test_a_voice_from_the_object_store_via_an_operator_catalog(s3_store, s3_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    model, config = default_voice_paths()  # any Piper voice will do: the bundled one's files
    s3_store.put_bytes("voices/jonas/en_US-jonas.onnx", model.read_bytes())
    s3_store.put_bytes("voices/jonas/en_US-jonas.onnx.json", config.read_bytes())
    catalog_file = tmp_path / "catalog.toml"
    catalog_file.write_text(default_catalog_path().read_text() + EXTRA_VOICE)

    settings = Settings(
        data_dir=tmp_path / "data", voice_catalog=catalog_file, device="cpu", torch_threads=1,
        s3_bucket=s3_store.bucket, s3_endpoint_url=s3_server.endpoint_url, s3_region=s3_server.region,
        s3_access_key_id=s3_server.access_key_id, s3_secret_access_key=s3_server.secret_access_key,
    )
    catalog: Catalog = build_catalog(settings)
    voice = catalog.resolve("mistv3", "jonas", "en")
    synthesizer = build_synthesizer(settings)
    chunk = synthesizer.synthesize(voice, ["An operator added this voice."], Controls())[0]
    assert chunk.duration > 1.0 and float(np.abs(chunk.samples).max()) > 0.05
    fetched = sorted(p.name for p in (tmp_path / "data" / "voices").rglob("*") if p.is_file())
    assert fetched == ["en_US-jonas.onnx", "en_US-jonas.onnx.json"]
    assert "jonas" not in [v.speaker for v in Catalog.load().voices_of("mistv3", "en")]  # shipped one untouched


def test_model_url_sends_kokoro_voices_to_the_model_service(tmp_path: Path) -> None:
    """The cloud facade's wiring with ``MODEL_URL``: a Kokoro voice is synthesized (and
    phonemized) by the model service, loaded as ``lector model-server --voice julien`` loads it;
    the formant fallback of the same language stays in-process."""
    import httpx

    from facade.model_service import create_model_app
    from lector.api import cloud_synthesizer
    from lector.commands.model_server import engine_factories
    from speech.engines.kokoro.phonemes import VOCAB
    from tests.support.servers import ServerThread, wait_until

    settings = Settings(data_dir=tmp_path / "data", device="cpu", torch_threads=1)
    server = ServerThread(create_model_app(voices=engine_factories(settings, "julien"))).start()
    try:
        assert wait_until(lambda: httpx.get(server.url + "/readyz").status_code == 200, timeout=180)
        cloud = Settings(data_dir=tmp_path / "data", device="cpu", torch_threads=1,
                         model_url=server.url + "/invocations")
        synthesizer = cloud_synthesizer(cloud, build_synthesizer)
        catalog = Catalog.load()
        julien, lucien = catalog.resolve("mistv3", "julien", "fr"), catalog.resolve("mistv3", "lucien", "fr")
        items = httpx.get(server.url + "/stats").json()["items"]
        chunk = synthesizer.synthesize(julien, ["Bonjour."], Controls())[0]
        assert chunk.sample_rate == 24000 and 0.3 < chunk.duration < 3.0
        assert [w.word.strip(".") for w in chunk.words] == ["Bonjour"] and chunk.words[0].end <= chunk.duration + 0.05
        assert httpx.get(server.url + "/stats").json()["items"] == items + 1
        phonemes = synthesizer.phonemize(julien, "Bonjour")
        assert "bɔ̃ʒˈuʁ" in phonemes and set(phonemes) - {" "} <= set(VOCAB)
        assert synthesizer.synthesize(lucien, ["Bonjour."], Controls())[0].duration > 0.3
        assert httpx.get(server.url + "/stats").json()["items"] == items + 1  # eSpeak NG: in-process
        synthesizer.close()
    finally:
        server.close()
