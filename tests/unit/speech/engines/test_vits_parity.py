"""Our PyTorch VITS against Piper's own runtime (onnxruntime) on the real voice.

With both noise scales at zero the network is deterministic, so the same phoneme ids must give
the same samples. Also: padded batches give each item its unbatched audio, cut to its own length;
word timings are ordered and inside the audio; bad weights fail loudly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from speech.engines.base import Engine
from speech.engines.vits import VitsEngine
from speech.engines.vits.model import VitsModel
from speech.engines.vits.onnx_weights import load_state_dict, load_voice_weights, read_onnx_tensors
from speech.errors import WeightsError
from speech.text.words import split_words
from speech.types import SynthesisOptions

ZERO_NOISE = SynthesisOptions(noise_scale=0.0, noise_w=0.0)
SENTENCES = [
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, "
    "must be in want of a wife.",
    "Hello there!",
    "However little known the feelings or views of such a man may be on his first entering a neighbourhood?",
    "Yes.",
]


@pytest.fixture(scope="module")
def ort_session(joe_paths: tuple[Path, Path]):  # type: ignore[no-untyped-def]
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 2
    return onnxruntime.InferenceSession(str(joe_paths[0]), options, providers=["CPUExecutionProvider"])


def _onnxruntime(session, ids: list[int], scales: tuple[float, float, float]) -> np.ndarray:  # type: ignore[no-untyped-def]
    out = session.run(
        None,
        {
            "input": np.array([ids], dtype=np.int64),
            "input_lengths": np.array([len(ids)], dtype=np.int64),
            "scales": np.array(scales, dtype=np.float32),
        },
    )[0]
    return out.reshape(-1)


@pytest.mark.parametrize("text", [SENTENCES[0], SENTENCES[1]])
def test_model_matches_onnxruntime_at_zero_noise(vits_engine: VitsEngine, ort_session, text: str) -> None:  # type: ignore[no-untyped-def]
    ids = vits_engine.phoneme_ids(text)
    reference = _onnxruntime(ort_session, ids, (0.0, 1.0, 0.0))
    chunk = vits_engine.synthesize([text], ZERO_NOISE)[0]
    assert chunk.samples.shape == reference.shape
    error = float(np.abs(chunk.samples - reference).max())
    print(f"parity max abs diff {error:.2e} over {reference.size} samples")
    assert error < 1e-3
    assert float(np.abs(reference).max()) > 0.05  # a real signal, not two silences


def test_length_scale_matches_onnxruntime(vits_engine: VitsEngine, ort_session) -> None:  # type: ignore[no-untyped-def]
    ids = vits_engine.phoneme_ids(SENTENCES[1])
    reference = _onnxruntime(ort_session, ids, (0.0, 1.5, 0.0))
    chunk = vits_engine.synthesize(
        [SENTENCES[1]], SynthesisOptions(length_scale=1.5, noise_scale=0.0, noise_w=0.0)
    )[0]
    assert chunk.samples.shape == reference.shape
    assert float(np.abs(chunk.samples - reference).max()) < 1e-3


def test_batched_equals_unbatched_and_cuts_each_item(vits_engine: VitsEngine) -> None:
    calls = []
    handle = vits_engine.model.register_forward_hook(lambda module, args, out: calls.append(len(args[0])))
    try:
        batched = vits_engine.synthesize(SENTENCES, ZERO_NOISE)
    finally:
        handle.remove()
    assert calls == [len(SENTENCES)]  # one forward pass for the whole batch
    alone = [vits_engine.synthesize([s], ZERO_NOISE)[0] for s in SENTENCES]
    lengths = [len(c.samples) for c in batched]
    assert len(set(lengths)) == len(lengths)  # each cut to its own length, not the longest
    for together, single in zip(batched, alone, strict=True):
        assert together.samples.shape == single.samples.shape
        assert float(np.abs(together.samples - single.samples).max()) < 1e-4
        assert together.words == single.words


def test_model_reports_per_item_lengths(vits_engine: VitsEngine) -> None:
    seqs = [vits_engine.phoneme_ids(s) for s in SENTENCES[:2]]
    with torch.inference_mode():
        out = vits_engine.model(seqs, 0.0, 1.0, 0.0)
    for seq, audio, durations in zip(seqs, out.audio, out.durations, strict=True):
        assert durations.shape == (len(seq),) and bool((durations >= 1).all())
        assert audio.shape == (int(durations.sum()) * 256,)


def test_word_timings_are_ordered_and_inside_the_audio(vits_engine: VitsEngine) -> None:
    text = "I am here, and in the house of the rising sun we sang."
    chunk = vits_engine.synthesize([text], ZERO_NOISE)[0]
    assert [w.word for w in chunk.words] == split_words(text)
    previous_end = 0.0
    for word in chunk.words:
        assert previous_end - 1e-9 <= word.start <= word.end <= chunk.duration + 1e-9
        previous_end = word.end
    assert sum(w.end - w.start for w in chunk.words) > 0.5 * chunk.duration
    assert chunk.words[-1].end > 0.8 * chunk.duration


def test_default_options_use_the_voice_defaults_and_length_scale_slows(vits_engine: VitsEngine) -> None:
    assert vits_engine.config.noise_scale == pytest.approx(0.667)
    normal = vits_engine.synthesize([SENTENCES[1]])[0]
    slow = vits_engine.synthesize([SENTENCES[1]], SynthesisOptions(length_scale=2.0, noise_w=0.0))[0]
    assert np.isfinite(normal.samples).all() and np.abs(normal.samples).max() <= 1.0
    assert (
        slow.duration
        > 1.6 * vits_engine.synthesize([SENTENCES[1]], SynthesisOptions(noise_w=0.0))[0].duration
    )


def test_empty_sentences_give_empty_chunks(vits_engine: VitsEngine) -> None:
    assert isinstance(vits_engine, Engine)
    chunks = vits_engine.synthesize(["", "Yes.", "   "], ZERO_NOISE)
    assert [len(c.samples) == 0 for c in chunks] == [True, False, True]
    assert chunks[1].sample_rate == 22050


@pytest.fixture(scope="module")
def onnx_tensors(joe_paths: tuple[Path, Path]) -> dict[str, np.ndarray]:
    return read_onnx_tensors(joe_paths[0])


def test_every_parameter_is_read_from_the_onnx(onnx_tensors: dict[str, np.ndarray]) -> None:
    model = VitsModel()
    assert set(model.state_dict()) <= set(onnx_tensors)
    assert "enc_p.emb.weight" in onnx_tensors and "dp.flows.0.logs" in onnx_tensors
    assert sum(name.startswith("flow.") and name.endswith("layers.0.weight") for name in onnx_tensors) == 8


def test_missing_tensor_is_a_weights_error(onnx_tensors: dict[str, np.ndarray]) -> None:
    tensors = dict(onnx_tensors)
    del tensors["flow.flows.2.enc.in_layers.1.weight"]
    with pytest.raises(WeightsError, match=r"flow\.flows\.2\.enc\.in_layers\.1\.weight"):
        load_state_dict(VitsModel(), tensors)


def test_mismatched_tensor_is_a_weights_error(onnx_tensors: dict[str, np.ndarray]) -> None:
    tensors = dict(onnx_tensors)
    tensors["dec.conv_pre.weight"] = np.zeros((256, 192, 5), dtype=np.float32)
    with pytest.raises(WeightsError, match=r"dec\.conv_pre\.weight: expected \(256, 192, 7\)"):
        load_state_dict(VitsModel(), tensors)


def test_corrupt_or_absent_file_is_a_weights_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"\x08\x07not a protobuf" * 100)
    with pytest.raises(WeightsError):
        load_voice_weights(VitsModel(), broken)
    with pytest.raises(WeightsError, match="not found"):
        load_voice_weights(VitsModel(), tmp_path / "absent.onnx")


def test_converted_weights_are_cached_by_sha256(
    joe_paths: tuple[Path, Path], tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    first = VitsModel()
    load_voice_weights(first, joe_paths[0], cache_dir=tmp_path)
    cached = list(tmp_path.glob("*.safetensors"))
    assert len(cached) == 1 and len(cached[0].name.split("-")[0]) == 64

    def no_parse(path: object) -> None:
        raise AssertionError("the cache should have been used")

    monkeypatch.setattr("speech.engines.vits.onnx_weights.read_onnx_tensors", no_parse)
    second = VitsModel()
    load_voice_weights(second, joe_paths[0], cache_dir=tmp_path)
    for name, value in first.state_dict().items():
        assert torch.equal(value, second.state_dict()[name]), name


def test_phonemes_spoken_as_written_equal_the_same_text(vits_engine: VitsEngine) -> None:
    """``{...}`` markup: IPA given directly must give exactly the audio of the text it spells, and
    characters the voice has no id for are skipped rather than failing the request."""
    text = "Hello there, my friend."
    ipa = vits_engine.phonemize(text)
    from_text = vits_engine.synthesize([text], ZERO_NOISE)[0]
    from_ipa, with_unknown, nothing = vits_engine.synthesize_phonemes([ipa, ipa + "\u2603", "\u2603\u2603"], ZERO_NOISE)
    assert from_ipa.samples.shape == from_text.samples.shape
    np.testing.assert_allclose(from_ipa.samples, from_text.samples, atol=1e-4)
    np.testing.assert_allclose(with_unknown.samples, from_text.samples, atol=1e-4)
    assert nothing.samples.size == 0
    assert [w.word for w in from_ipa.words] == [ipa]
    assert from_ipa.words[0].end <= from_ipa.duration + 1e-6
