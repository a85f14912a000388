"""A float32 copy of the shipped Kokoro int8 graph, for exact parity tests under onnxruntime.

The int8 graph quantizes activations on the fly (``DynamicQuantizeLinear`` before every matrix
product and convolution), which moves a phoneme's rounded duration now and then and makes a
sample-level comparison loose. This rewrite keeps every node and weight of the graph but runs
it in float: each quantized weight is dequantized into the graph, ``MatMulInteger`` and
``ConvInteger`` become ``MatMul`` and ``Conv``, ``DynamicQuantizeLSTM`` a plain ``LSTM``,
activation quantization becomes the identity with scale 1, and the int32 bias path keeps the
float bias. What remains different from our PyTorch modules is arithmetic order only, plus two
quirks of the export that the tests name (the output's 1.5x gain and its first samples).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np


def _lstm_weights(q: np.ndarray, scale: np.ndarray, zp: np.ndarray) -> np.ndarray:
    """``[dirs, in, 4H]`` int8 with per-direction scale -> ONNX LSTM's ``[dirs, 4H, in]`` float."""
    w = (q.astype(np.float32) - zp.reshape(-1, 1, 1).astype(np.float32)) * scale.reshape(-1, 1, 1)
    return np.ascontiguousarray(w.transpose(0, 2, 1))


def float_graph(int8_path: str | Path, out_path: str | Path) -> Path:
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(int8_path))
    graph = model.graph
    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    new_inits: dict[str, np.ndarray] = {}
    ones: set[str] = set()

    def deq(quantized: str, zero_point: str) -> np.ndarray:
        base = quantized.removesuffix("_quantized")
        scale = inits[f"{base}_scale"].astype(np.float32)
        ones.add(f"{base}_scale")
        zp = inits[zero_point].astype(np.float32) if zero_point else np.float32(0)
        return (inits[quantized].astype(np.float32) - zp) * scale

    nodes = []
    for node in graph.node:
        op = node.op_type
        if op == "DynamicQuantizeLinear":
            y, scale, zp = node.output
            nodes.append(helper.make_node("Identity", [node.input[0]], [y]))
            new_inits[scale] = np.array(1.0, dtype=np.float32)
            new_inits[zp] = np.array(0, dtype=np.uint8)
        elif op == "MatMulInteger":
            name = f"{node.input[1]}__float"
            new_inits[name] = deq(node.input[1], node.input[3])
            nodes.append(helper.make_node("MatMul", [node.input[0], name], list(node.output), name=node.name))
        elif op == "ConvInteger":
            name = f"{node.input[1]}__float"
            new_inits[name] = deq(node.input[1], node.input[3])
            conv = helper.make_node("Conv", [node.input[0], name], list(node.output), name=node.name)
            conv.attribute.extend(node.attribute)
            nodes.append(conv)
        elif op == "DynamicQuantizeLSTM":
            w_name, r_name = f"{node.input[1]}__float", f"{node.input[2]}__float"
            new_inits[w_name] = _lstm_weights(inits[node.input[1]], inits[node.input[8]], inits[node.input[9]])
            new_inits[r_name] = _lstm_weights(inits[node.input[2]], inits[node.input[10]], inits[node.input[11]])
            lstm = helper.make_node(
                "LSTM", [node.input[0], w_name, r_name, *node.input[3:7]], list(node.output), name=node.name
            )
            lstm.attribute.extend(a for a in node.attribute if a.name in ("hidden_size", "direction", "layout"))
            nodes.append(lstm)
        elif op == "DequantizeLinear":  # embedding table Gather'ed as int8: gather the float table
            nodes.append(helper.make_node("Identity", [node.input[0]], list(node.output)))
            table = next(n for n in graph.node if node.input[0] in n.output).input[0]
            new_inits[table] = deq(table, node.input[2])
        elif op == "Floor" and node.name.endswith("bias_quant_rounded"):
            nodes.append(helper.make_node("Identity", list(node.input), list(node.output)))
        elif op == "Cast" and node.name.endswith("bias_quantized_node"):
            nodes.append(helper.make_node("Cast", list(node.input), list(node.output), to=1))
        else:
            nodes.append(node)

    for name in ones:
        new_inits.setdefault(name, np.ones_like(inits[name], dtype=np.float32))
    kept = [t for t in graph.initializer if t.name not in new_inits]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    graph.initializer.extend(numpy_helper.from_array(v, name=k) for k, v in new_inits.items())
    del graph.node[:]
    graph.node.extend(nodes)
    # Embedding Gathers now read float tables: their outputs' declared types are stale.
    del graph.value_info[:]
    onnx.save(model, str(out_path))
    return Path(out_path)


# Intermediate tensors of the graph that the parity test compares layer by layer.
F0 = "/encoder/Squeeze_output_0"
ENERGY = "/encoder/Squeeze_1_output_0"
SOURCE = "/decoder/decoder/generator/m_source/l_tanh/Tanh_output_0"
HARMONIC_SPECTRUM = "/decoder/decoder/generator/Concat_3_output_0"
DECODER_ENCODE = "/decoder/decoder/encode/Div_3_output_0"
BERT_FEATURES = "/encoder/bert_encoder/Add_output_0"
DURATIONS = "/encoder/Clip_output_0"
INTERMEDIATE = (F0, ENERGY, SOURCE, HARMONIC_SPECTRUM, DECODER_ENCODE, BERT_FEATURES, DURATIONS)


@functools.cache
def float_session(int8_path: str, cache_dir: str):  # type: ignore[no-untyped-def]
    """onnxruntime on the float copy, with ``INTERMEDIATE`` exposed as extra outputs."""
    import onnx
    import onnxruntime as ort

    target = Path(cache_dir) / "kokoro-float32-reference.onnx"
    if not target.is_file():
        float_graph(int8_path, target)
    model = onnx.load(str(target))
    for name in INTERMEDIATE:
        model.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


@functools.cache
def int8_session(int8_path: str):  # type: ignore[no-untyped-def]
    """onnxruntime on the shipped int8 graph as it is, with the predicted durations exposed."""
    import onnx
    import onnxruntime as ort

    model = onnx.load(int8_path)
    model.graph.output.append(onnx.helper.make_tensor_value_info(DURATIONS, onnx.TensorProto.FLOAT, None))
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def feeds(tokens: list[int], style: np.ndarray, speed: float = 1.0) -> dict[str, np.ndarray]:
    """The graph's inputs for ``tokens`` (without the boundary zeros, which this adds)."""
    return {
        "tokens": np.array([[0, *tokens, 0]], dtype=np.int64),
        "style": np.asarray(style, dtype=np.float32).reshape(1, 256),
        "speed": np.array([speed], dtype=np.float32),
    }


def run(session, tokens: list[int], style: np.ndarray, speed: float = 1.0) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """Every output of ``session`` by name (``audio`` plus any intermediates), batch axis dropped."""
    names = [output.name for output in session.get_outputs()]
    values = session.run(names, feeds(tokens, style, speed))
    return {name: np.asarray(value, dtype=np.float32).squeeze() for name, value in zip(names, values, strict=True)}
