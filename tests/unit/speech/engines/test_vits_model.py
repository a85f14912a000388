"""The VITS model's execution paths give the same samples: windows, threads, padded batches."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch

from speech.engines.vits import VitsEngine
from speech.engines.vits import model as vits_model
from speech.engines.vits.model import VitsModel

TEXTS = [
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, "
    "must be in want of a wife.",
    "Mr. Bennet made no answer.",
    "Yes.",
]


@pytest.fixture(scope="module")
def ids(vits_engine: VitsEngine) -> list[list[int]]:
    return [vits_engine.phoneme_ids(t) for t in TEXTS]


def _run(model: VitsModel, ids: list[list[int]], **kwargs: object) -> list[torch.Tensor]:
    with torch.inference_mode():
        return model(ids, 0.0, 1.0, 0.0, **kwargs).audio  # type: ignore[arg-type]


def test_windows_cut_inside_sentences_are_exact(
    vits_engine: VitsEngine, ids: list[list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    model = vits_engine.model
    reference = _run(model, ids)
    monkeypatch.setattr(vits_model, "MIN_WINDOW_FRAMES", 16)
    with ThreadPoolExecutor(3) as pool:
        for workers in (2, 5):
            windowed = _run(model, ids[:1], executor=pool, workers=workers)[0]
            assert windowed.shape == reference[0].shape
            assert float((windowed - reference[0]).abs().max()) < 1e-5


def test_a_short_halo_shows(
    vits_engine: VitsEngine, ids: list[list[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The halo is what makes windows exact: four frames are not enough."""
    reference = _run(vits_engine.model, ids[:1])[0]
    monkeypatch.setattr(vits_model, "MIN_WINDOW_FRAMES", 16)
    monkeypatch.setattr(vits_model, "HALO_FRAMES", 4)
    with ThreadPoolExecutor(2) as pool:
        windowed = _run(vits_engine.model, ids[:1], executor=pool, workers=4)[0]
    assert float((windowed - reference).abs().max()) > 1e-3


def test_padded_batch_path_matches_sentence_by_sentence(
    vits_engine: VitsEngine, ids: list[list[int]]
) -> None:
    """The GPU path (one padded encoder batch, whole decoder groups), run here on CPU."""
    alone = [_run(vits_engine.model, [seq])[0] for seq in ids]
    padded = _run(vits_engine.model, ids, pad_batch=True)
    for a, b in zip(alone, padded, strict=True):
        assert a.shape == b.shape
        assert float((a - b).abs().max()) < 1e-4


def test_bfloat16_decoder_keeps_durations_and_waveform(vits_engine: VitsEngine, ids: list[list[int]]) -> None:
    model = VitsModel()
    model.load_state_dict(vits_engine.model.state_dict())
    model.eval().set_decoder_dtype(torch.bfloat16)
    full = _run(vits_engine.model, ids[1:2])[0].numpy()
    half = _run(model, ids[1:2])[0].numpy()
    assert half.shape == full.shape and np.isfinite(half).all()
    snr = 10 * np.log10(np.sum(full**2) / np.sum((full - half) ** 2))
    assert snr > 10.0
