"""``LECTOR_KOKORO_KERNELS`` and ``LECTOR_KOKORO_CONVOLUTIONS`` reach the engine: ``compiled`` fuses a Kokoro voice's decoder
chains on a CPU too (opt-in: faster after its compiling), ``eager`` keeps them plain on any
device, ``auto`` is the engine's own rule (fused on GPUs only)."""

from __future__ import annotations

import pytest
import torch

from lector.settings import Settings
from speech.engines.kokoro import kernels
from speech.engines.kokoro.engine import resolve_spectral
from speech.engines.registry import load_engine
from speech.errors import EngineError
from speech.voices.catalog import Catalog

pytestmark = pytest.mark.slow


def _chains(engine: object) -> set[object]:
    model = engine.model  # type: ignore[attr-defined]
    return {module.kernels for module in model.modules() if hasattr(module, "kernels")}


def test_the_setting_picks_the_decoder_chains(monkeypatch: pytest.MonkeyPatch) -> None:
    voice = Catalog.load().voice("coda", "ivy")
    monkeypatch.setenv("LECTOR_KOKORO_KERNELS", "compiled")
    assert Settings().kokoro_kernels == "compiled"
    compiled = load_engine(voice, dtype="float32", kokoro_kernels=Settings().kokoro_kernels)
    assert _chains(compiled) == {kernels.compiled()}
    for plain in ("auto", "eager"):  # on the CPU both are eager
        assert kernels.compiled() not in _chains(load_engine(voice, dtype="float32", kokoro_kernels=plain))
    with pytest.raises(EngineError, match="kokoro_kernels"):
        load_engine(voice, dtype="float32", kokoro_kernels="fast")
    with pytest.raises(EngineError, match="CUDA graphs need device 'cuda'"):
        load_engine(voice, dtype="float32", kokoro_kernels="graphs")


def _spectral(engine: object) -> int:
    from speech.engines.kokoro.spectral_conv import SpectralConv1d

    return sum(isinstance(module, SpectralConv1d) for module in engine.model.modules())  # type: ignore[attr-defined]


def test_the_convolution_setting_reaches_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """``LECTOR_KOKORO_CONVOLUTIONS``: ``auto`` computes the generator's 36 long convolutions in
    the frequency domain in float32 on a CPU; ``direct`` keeps every one direct; int8 has none."""
    voice = Catalog.load().voice("coda", "ivy")
    monkeypatch.setenv("LECTOR_KOKORO_CONVOLUTIONS", "direct")
    assert Settings().kokoro_convolutions == "direct"
    assert _spectral(load_engine(voice, dtype="float32", kokoro_convolutions=Settings().kokoro_convolutions)) == 0
    assert _spectral(load_engine(voice, dtype="float32", kokoro_convolutions="auto")) == 36
    with pytest.raises(EngineError, match="kokoro_convolutions"):
        load_engine(voice, dtype="float32", kokoro_convolutions="fft")
    with pytest.raises(EngineError, match="spectral convolutions run in float32 or bfloat16 on a CPU"):
        load_engine(voice, dtype="int8", kokoro_convolutions="spectral")


@pytest.mark.parametrize(("amx", "avx512_bf16", "spectral"), [
    (False, False, False), (False, True, True), (True, True, False), (True, False, False),
])
def test_auto_takes_bfloat16_spectral_only_where_it_was_measured(
    monkeypatch: pytest.MonkeyPatch, amx: bool, avx512_bf16: bool, spectral: bool
) -> None:
    """AVX-512 BF16 without AMX (the Zen 4 and 5): spectral. AMX and emulated bfloat16: direct.
    float32 on any CPU: spectral; a GPU and int8: direct."""
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16)
    assert resolve_spectral(None, "cpu", "bfloat16") is spectral
    assert resolve_spectral(None, "cpu", "float32") is True
    assert resolve_spectral(None, "cpu", "int8") is False
    assert resolve_spectral(None, "cuda", "bfloat16") is False
    assert resolve_spectral(True, "cpu", "bfloat16") is True
