"""The VITS engine's CPU runtime: the voice's own graph on onnxruntime, behind the same API.

At zero noise it must give the PyTorch modules' samples and word timings (both are the same
network), lone sentences and parallel batches alike; "auto" must pick it on CPU in float32
only; the registry and the setting must reach it.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from speech.engines.registry import load_engine
from speech.engines.vits import VitsEngine
from speech.engines.vits.engine import resolve_runtime
from speech.engines.vits.onnx_runtime import OnnxVitsModel
from speech.errors import EngineError, WeightsError
from speech.types import SynthesisOptions
from tests.support.snr import snr_db

ZERO_NOISE = SynthesisOptions(noise_scale=0.0, noise_w=0.0)
SENTENCES = [
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, "
    "must be in want of a wife.",
    "Hello there!",
    "",
    "However little known the feelings or views of such a man may be on his first entering a neighbourhood?",
    "Yes.",
]


@pytest.fixture(scope="module")
def ort_engine(joe_paths: tuple[Path, Path]) -> VitsEngine:
    engine = VitsEngine.load(*joe_paths, device="cpu", threads=2, runtime="onnxruntime")
    assert isinstance(engine.model, OnnxVitsModel) and engine.runtime == "onnxruntime"
    return engine


@pytest.mark.parametrize("sentences", [SENTENCES, SENTENCES[1:2]], ids=["parallel batch", "lone sentence"])
def test_onnxruntime_gives_the_pytorch_samples_and_timings(
    vits_engine: VitsEngine, ort_engine: VitsEngine, sentences: list[str]
) -> None:
    assert vits_engine.runtime == "torch"
    ours = vits_engine.synthesize(sentences, ZERO_NOISE)
    theirs = ort_engine.synthesize(sentences, ZERO_NOISE)
    assert len(theirs) == len(sentences)
    for a, b in zip(ours, theirs, strict=True):
        assert a.text == b.text
        assert a.samples.shape == b.samples.shape
        if a.samples.size:
            assert float(np.abs(a.samples - b.samples).max()) < 1e-3
            assert float(np.abs(b.samples).max()) > 0.05  # speech, not silence
        assert [w.word for w in a.words] == [w.word for w in b.words]
        assert np.allclose([(w.start, w.end) for w in a.words], [(w.start, w.end) for w in b.words])
    assert all(chunk.samples.size == 0 for chunk, text in zip(theirs, sentences, strict=True) if not text)


def test_onnxruntime_honours_length_scale_and_noise(ort_engine: VitsEngine) -> None:
    plain = ort_engine.synthesize(["Hello there!"], ZERO_NOISE)[0]
    slow = ort_engine.synthesize(["Hello there!"], SynthesisOptions(length_scale=1.5, noise_scale=0.0, noise_w=0.0))[0]
    assert slow.samples.size > plain.samples.size * 1.3
    noisy = [ort_engine.synthesize(["Hello there!"])[0].samples for _ in range(2)]
    assert noisy[0].shape != noisy[1].shape or not np.array_equal(noisy[0], noisy[1])


def test_auto_is_onnxruntime_on_cpu_in_float32_only() -> None:
    assert resolve_runtime("auto", "cpu") == "onnxruntime"
    assert resolve_runtime("auto", "cpu", "bfloat16") == "torch"
    assert resolve_runtime("auto", "cuda") == "torch"
    assert resolve_runtime("torch", "cpu") == "torch"
    with pytest.raises(EngineError, match="CPU in float32 only"):
        resolve_runtime("onnxruntime", "cuda")
    with pytest.raises(EngineError, match="runtime must be one of"):
        resolve_runtime("tensorrt", "cpu")


def test_the_registry_passes_the_runtime_setting(joe_paths: tuple[Path, Path]) -> None:
    voice = SimpleNamespace(engine="vits", weights=str(joe_paths[0]))
    assert load_engine(voice, device="cpu", threads=1).runtime == "onnxruntime"  # type: ignore[attr-defined]
    assert load_engine(voice, device="cpu", threads=1, vits_runtime="torch").runtime == "torch"  # type: ignore[attr-defined]


def test_a_graph_that_is_not_piper_vits_is_a_weights_error(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "not-vits",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    path = tmp_path / "other.onnx"
    onnx.save(helper.make_model(graph), str(path))
    with pytest.raises(WeightsError, match="not a Piper VITS export"):
        OnnxVitsModel(path, workers=1, hop_length=256)


def _conv_graph(opset: int) -> onnx.ModelProto:
    """Three one-dimensional convolutions: dilated with bias, strided and grouped sharing one
    weight with a third, and a ``Relu`` between, as a voice's graph chains them."""
    rng = np.random.default_rng(3)
    wide = onnx.numpy_helper.from_array(rng.standard_normal((8, 8, 5)).astype(np.float32), "wide")
    bias = onnx.numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "bias")
    grouped = onnx.numpy_helper.from_array(rng.standard_normal((8, 2, 3)).astype(np.float32), "grouped")
    nodes = [
        helper.make_node("Conv", ["x", "wide", "bias"], ["a"], dilations=[3], pads=[6, 6], kernel_shape=[5]),
        helper.make_node("Relu", ["a"], ["b"]),
        helper.make_node("Conv", ["b", "grouped"], ["c"], group=4, strides=[2], pads=[1, 1]),
        helper.make_node("Conv", ["c", "grouped"], ["y"], group=4, pads=[1, 1]),
    ]
    graph = helper.make_graph(
        nodes,
        "convolutions",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, None])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, None])],
        initializer=[wide, bias, grouped],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("opset", [11, 15])
def test_one_dimensional_convolutions_become_planar_with_the_same_output(opset: int) -> None:
    import onnxruntime

    from speech.engines.vits.onnx_runtime import _as_planar_convolutions

    model = _conv_graph(opset)
    original = model.SerializeToString()
    assert _as_planar_convolutions(model) == 3
    onnx.checker.check_model(model)
    convolutions = [n for n in model.graph.node if n.op_type == "Conv"]
    weights = {init.name: init for init in model.graph.initializer}
    assert all(len(weights[n.input[1]].dims) == 4 for n in convolutions)
    assert {init.name for init in model.graph.initializer} >= {"bias"}
    assert not {"wide", "grouped"} & set(weights)  # the one-dimensional weights are gone
    x = np.random.default_rng(4).standard_normal((1, 8, 301)).astype(np.float32)
    ours = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    theirs = onnxruntime.InferenceSession(original, providers=["CPUExecutionProvider"])
    (a,), (b,) = ours.run(None, {"x": x}), theirs.run(None, {"x": x})
    assert a.shape == b.shape == (1, 8, 151)
    assert float(np.abs(a - b).max()) < 1e-4 * float(np.abs(b).max())


def _seeded(graph: onnx.ModelProto) -> onnx.ModelProto:
    """The graph with its noise nodes (``RandomNormalLike``: the flow's and the duration
    predictor's noise) seeded, so that two graphs draw the same noise on their first call."""
    for node in graph.graph.node:
        if node.op_type.startswith("Random"):
            kept = [a for a in node.attribute if a.name != "seed"]
            del node.attribute[:]
            node.attribute.extend([*kept, helper.make_attribute("seed", 7.0)])
    return graph


def test_the_voice_graph_becomes_planar_and_speaks_the_same(joe_paths: tuple[Path, Path]) -> None:
    """Every convolution of the voice's graph is made planar (what the single-threaded session
    runs; the parity test above runs both sessions against the PyTorch modules), and with the
    same noise the planar graph's sentence is the voice's own to float32 rounding. The voice
    draws fresh noise on every call, so DNSMOS of two runs of the same code moves by up to 0.2
    P.808 (``bench.quality``, Zen 5); this is the comparison that tells a kernel change apart."""
    from speech.engines.vits.onnx_runtime import _as_planar_convolutions, _graph_with_durations, _session

    graph = _graph_with_durations(joe_paths[0])
    convolutions = sum(n.op_type == "Conv" for n in graph.graph.node)
    own = _seeded(onnx.ModelProto.FromString(graph.SerializeToString())).SerializeToString()
    assert convolutions > 100 and _as_planar_convolutions(graph) == convolutions
    weights = {init.name: len(init.dims) for init in graph.graph.initializer}
    assert all(weights[n.input[1]] == 4 for n in graph.graph.node if n.op_type == "Conv")
    ids = np.array([[1, 0, 20, 0, 35, 0, 18, 0, 3, 0, 41, 0, 22, 0, 50, 0, 16, 0, 2] * 3], dtype=np.int64)
    feed = {"input": ids, "input_lengths": np.array([ids.shape[1]]), "scales": np.array([0.667, 1.0, 0.8], np.float32)}
    planar = _session(_seeded(graph).SerializeToString(), 1).run(None, feed)[0].reshape(-1)
    voice = _session(own, 1).run(None, feed)[0].reshape(-1)
    assert planar.shape == voice.shape and planar.size > 20_000
    snr = snr_db(voice, planar)
    assert snr > 60, snr  # 91 dB on Zen 5; another noise draw changes even the length
