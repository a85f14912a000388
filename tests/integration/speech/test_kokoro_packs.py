"""An operator adds Kokoro voices with a catalog of their own (``LECTOR_VOICE_CATALOG``): one
names its style pack by a local path, one by a key in lector's object store (a real S3 server,
Swift). Both resolve, through the registry and the composition root's fetcher, to the arrays the
operator wrote; the store's object is fetched once. The engine itself is not loaded here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from lector.settings import Settings
from lector.wiring import build_catalog, build_object_store, object_fetcher
from speech.engines.kokoro.voices import archive_pack, bundled_packs
from speech.engines.registry import kokoro_pack
from speech.voices import Catalog, default_catalog_path

pytestmark = pytest.mark.integration

EXTRA_VOICES = """
[[voices]]
speaker = "hanna"
models = ["coda", "mistv3"]
lang = "de"
gender = "Female"
age = "Adult"
country = "Germany"
dialect = "Standard German"
demographic = "Unspecified"
genre = ["Kokoro", "Neural"]
flagship = false
engine = "kokoro"
pack = "{local}"

[[voices]]
speaker = "sven"
models = ["coda"]
lang = "de"
gender = "Male"
engine = "kokoro"
pack = "s3://voices/kokoro/packs.npz#sven"

[[voices]]
speaker = "tove"
models = ["coda"]
lang = "nl"
gender = "Female"
engine = "kokoro"
pack = "s3://voices/kokoro/tove.pt"
"""


def _pack(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((510, 256)).astype(np.float32)


def test_operator_packs_by_path_and_by_store_key(s3_store, s3_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    hanna, sven, other, tove = _pack(1), _pack(2), _pack(3), _pack(4)
    local = tmp_path / "packs" / "hanna.npy"
    local.parent.mkdir()
    np.save(local, hanna.reshape(510, 1, 256))
    archive = tmp_path / "packs.npz"
    np.savez(archive, sven=sven, other=other)
    s3_store.put_bytes("voices/kokoro/packs.npz", archive.read_bytes())
    torch.save(torch.from_numpy(tove), tmp_path / "tove.pt")
    s3_store.put_bytes("voices/kokoro/tove.pt", (tmp_path / "tove.pt").read_bytes())
    catalog_file = tmp_path / "catalog.toml"
    catalog_file.write_text(default_catalog_path().read_text() + EXTRA_VOICES.replace("{local}", str(local)))

    settings = Settings(
        data_dir=tmp_path / "data", voice_catalog=catalog_file, device="cpu", torch_threads=1,
        s3_bucket=s3_store.bucket, s3_endpoint_url=s3_server.endpoint_url, s3_region=s3_server.region,
        s3_access_key_id=s3_server.access_key_id, s3_secret_access_key=s3_server.secret_access_key,
    )
    catalog: Catalog = build_catalog(settings)
    fetch = object_fetcher(lambda: build_object_store(settings), settings.data_dir / "voices")

    voice = catalog.resolve("mistv3", "hanna", "de")
    assert (voice.engine, voice.pack_kind, voice.quality) == ("kokoro", "path", "neural")
    np.testing.assert_array_equal(kokoro_pack(voice, fetch), hanna)
    voice = catalog.resolve("coda", "sven", "de")
    assert voice.pack_kind == "s3"
    np.testing.assert_array_equal(kokoro_pack(voice, fetch), sven)
    np.testing.assert_array_equal(kokoro_pack(catalog.resolve("coda", "tove", "nl"), fetch), tove)
    np.testing.assert_array_equal(kokoro_pack(catalog.resolve("coda", "sven", "de"), fetch), sven)  # cached

    fetched = sorted(p.name for p in (settings.data_dir / "voices").rglob("*") if p.is_file())
    assert fetched == ["packs.npz", "tove.pt"]
    # the shipped voices beside them still resolve to the bundled packs
    assert kokoro_pack(catalog.resolve("coda", "kenji", "ja"), fetch) is bundled_packs()["jm_kumo"]
    assert kokoro_pack(catalog.resolve("coda", "elodie", "fr"), fetch) is archive_pack("ff_siwis")  # v1.0's
    assert len({v.key for v in catalog.voices}) == len(catalog.voices)
