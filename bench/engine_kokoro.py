"""Kokoro benchmark: lector's PyTorch Kokoro against onnxruntime on the shipped int8 graph.

    python -m bench.engine --engine kokoro [--quick] [--device cpu|cuda] [--dtype auto|float32|int8|bfloat16]

Both sides speak the same English sentences (``bench.engine.SENTENCES``) with the same voice
(the bundled ``jm_kumo`` pack) from the same Kokoro phonemes, phonemization included, using the
same threads. onnxruntime runs the int8 graph sentence by sentence (its batch is fixed at 1);
lector runs once sentence by sentence and once with all sentences in one ``synthesize`` call
(length-sorted batches; int8 runs one item per pass). Runs alternate over rounds and each keeps
its best round. RTF = synthesis seconds / audio seconds. On cuda a last run times the 64
sentences in one call (batch 64). The last line is
``RESULT rtf_lector=<batched> rtf_onnxruntime=<y> ratio=<x/y> realtime_x_batch64=<audio s / wall s>``.
"""

from __future__ import annotations

import argparse
import resource
from collections.abc import Callable, Sequence

from bench.machine import cpu_model, describe
from bench.rounds import alternate, kokoro_reference, onnxruntime_session


def main(args: argparse.Namespace, sentences: Sequence[str], all_sentences: Sequence[str]) -> None:
    import onnxruntime
    import torch

    from speech.engines.kokoro import KokoroEngine
    from speech.engines.kokoro.engine import resolve_compile, resolve_dtype, resolve_spectral
    from speech.engines.kokoro.phonemes import KokoroPhonemizer, token_ids
    from speech.engines.kokoro.voices import bundled_packs
    from speech.engines.kokoro.weights import model_file
    from speech.engines.registry import KOKORO_CONVOLUTIONS, KOKORO_KERNELS

    dtype = resolve_dtype(args.dtype, args.device)
    compile_kernels = KOKORO_KERNELS[args.kernels]
    pack = bundled_packs()["jm_kumo"]
    engine = KokoroEngine.load(
        pack,
        lang="en",
        espeak_voice="en-us",
        device=args.device,
        threads=args.threads,
        dtype=dtype,
        token_budget=args.token_budget,
        max_batch=args.max_batch,
        compile_kernels=compile_kernels,
        cuda_graphs={"auto": None, "graphs": True}.get(args.kernels, False),
        spectral=KOKORO_CONVOLUTIONS[args.convolutions],
    )
    session = onnxruntime_session(str(model_file()), args.threads, args.device)
    phonemizer = KokoroPhonemizer("en", "en-us")
    kernels = "compiled" if resolve_compile(compile_kernels, args.device) else "eager"
    kernels += " + CUDA graphs up to batch 16" if engine.model.graphs is not None else ""
    spectral = resolve_spectral(KOKORO_CONVOLUTIONS[args.convolutions], args.device, dtype)
    kernels += ", spectral convolutions" if spectral else ", direct convolutions"
    device_name = torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu"
    print(describe(args.device, dtype))
    print(
        f"{len(sentences)} sentences, {sum(map(len, sentences))} characters; device {device_name}; "
        f"CPU {cpu_model()}; {args.threads} threads; lector {dtype} (batch {engine.max_batch}, "
        f"budget {engine.token_budget}, kernels {kernels}); torch {torch.__version__}, onnxruntime {onnxruntime.__version__} "
        f"on {session.get_providers()[0]} with the int8 graph"
    )

    def onnxruntime_run(texts: Sequence[str]) -> float:
        samples = 0
        for text in texts[: args.reference_sentences]:
            ids, _ = token_ids(phonemizer.phonemize(text))
            ids = ids[:510]
            audio = kokoro_reference(session, ids, pack)
            samples += audio.size
        return samples / 24000

    def lector_single(texts: Sequence[str]) -> float:
        return sum(engine.synthesize([text])[0].duration for text in texts)

    def lector_batched(texts: Sequence[str]) -> float:
        return sum(chunk.duration for chunk in engine.synthesize(list(texts)))

    def lector_batch64(_: Sequence[str]) -> float:
        return sum(chunk.duration for chunk in engine.synthesize(list(all_sentences)))

    warmup = ("A short warm-up sentence.", "Another warm-up sentence, somewhat longer than the first one.")
    onnxruntime_run(warmup)
    lector_single(warmup)
    lector_batched(warmup)
    runs: dict[str, Callable[[Sequence[str]], float]] = {
        "onnxruntime int8, sentence by sentence": onnxruntime_run,
        "lector, batch 1": lector_single,
        "lector, batched": lector_batched,
    }
    if args.device == "cuda":
        lector_batch64(all_sentences)
        torch.cuda.reset_peak_memory_stats()
        runs["lector, batch 64 (one call)"] = lector_batch64
    sync = torch.cuda.synchronize if args.device == "cuda" else None
    best, audio_of = alternate(runs, sentences, args.rounds, sync=sync)
    rtf_ort, rtf_single, rtf_batched = (best[label] for label in list(runs)[:3])
    if "lector, batch 64 (one call)" in best:
        batch64 = f"{1 / best['lector, batch 64 (one call)']:.1f}"
    elif len(sentences) == len(all_sentences):
        batch64 = f"{1 / rtf_batched:.1f}"
    else:
        batch64 = "n/a"
    print(f"best RTF: onnxruntime {rtf_ort:.4f}, lector batch 1 {rtf_single:.4f}, lector batched {rtf_batched:.4f}")
    print(f"ratio lector / onnxruntime: batch 1 {rtf_single / rtf_ort:.3f}, batched {rtf_batched / rtf_ort:.3f}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak_mb:.0f} MB (one process holding both runtimes)")
    if args.device == "cuda":
        print(f"peak GPU memory {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB (allocated by torch)")
        if engine.model.graphs is not None:
            graphs = engine.model.graphs
            print(f"CUDA graphs: {graphs.recorded} shapes recorded, {graphs.replayed} replays")
    print(
        f"RESULT rtf_lector={rtf_batched:.4f} rtf_onnxruntime={rtf_ort:.4f} ratio={rtf_batched / rtf_ort:.3f} "
        f"realtime_x_batch64={batch64}"
    )
