"""Engine benchmark: lector's PyTorch VITS against Piper's own runtime on the same voice and text.

    python -m bench.engine [--quick] [--device cpu|cuda] [--dtype float32|bfloat16] [--runtime auto|torch|onnxruntime]
    python -m bench.engine --engine kokoro [--quick] [--device cpu|cuda] [--dtype auto|float32|int8|bfloat16]

``--engine kokoro`` runs ``bench.engine_kokoro`` (Kokoro against onnxruntime on its int8 graph).

Both sides synthesize the same English sentences with the default voice at its default scales,
phonemization included, using every core. onnxruntime runs sentence by sentence, as Piper does;
lector runs once sentence by sentence (batch 1) and once with all sentences in one call
(sorted and batched by the engine). The three runs alternate over rounds and each keeps its
best round, so other load on the machine skews them alike.
RTF = synthesis seconds / audio seconds.

``--runtime`` is the VITS engine's runtime as ``LECTOR_VITS_RUNTIME`` sets it (default auto:
the voice's graph on onnxruntime on CPU in float32, our PyTorch modules on GPUs). "lector" is
the engine as lector serves it; on CPU a further run, "lector torch, batched", times our
PyTorch modules, so that the bench shows both and why the choice is made.

``--device cuda`` runs lector's engine on the GPU; onnxruntime stays the reference, on its CUDA
provider where the installed onnxruntime has one, else on the CPU (the provider is printed).
On cuda a fourth run times the 64 sentences in one ``synthesize`` call (batch 64), with the
phonemizer's word cache emptied first so that phonemization is counted in full; on cpu the
batched run over all 64 sentences is that same call, so its figure is reused (``--quick``:
not measured). The last line is
``RESULT rtf_lector=<batched> rtf_onnxruntime=<y> ratio=<x/y> realtime_x_batch64=<audio s / wall s>
runtime=<lector's runtime> rtf_lector_torch=<PyTorch batched, or n/a>``, after a ``MACHINE`` line
(``bench.machine``).
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from collections.abc import Callable, Sequence

import numpy as np

from bench.rounds import alternate, onnxruntime_session

# Sentences from Jane Austen's Pride and Prejudice (public domain), 22 to 263 characters.
SENTENCES: tuple[str, ...] = (
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.",
    '"But it is," returned she; "for Mrs. Long has just been here, and she told me all about it."',
    '"Is he married or single?"',
    'But it is very likely that he may fall in love with one of them, and therefore you must visit him as soon as he comes."',
    '"I see no occasion for that.',
    '"My dear, you flatter me.',
    '"In such cases, a woman has not often much beauty to think of."',
    '"It is more than I engage for, I assure you."',
    '"They have none of them much to recommend them," replied he; "they are all silly and ignorant like other girls; but Lizzy has something more of quickness than her sisters."',
    "They are my old friends.",
    "She was a woman of mean understanding, little information, and uncertain temper.",
    "He had always intended to visit him, though to the last always assuring his wife that he should not go; and till the evening after the visit was paid she had no knowledge of it.",
    "She has two nieces of her own.",
    'She is a selfish, hypocritical woman, and I have no opinion of her."',
    "\"Don't keep coughing so, Kitty, for Heaven's sake!",
    "Have a little compassion on my nerves.",
    '"To-morrow fortnight."',
    "A fortnight's acquaintance is certainly very little.",
    "If I had known as much this morning I certainly would not have called on him.",
    'It is very unlucky; but as I have actually paid the visit, we cannot escape the acquaintance now."',
    "The astonishment of the ladies was just what he wished; that of Mrs. Bennet perhaps surpassing the rest; though, when the first tumult of joy was over, she began to declare that it was what she had expected all the while.",
    "Sir William had been delighted with him.",
    "To be fond of dancing was a certain step towards falling in love; and very lively hopes of Mr. Bingley's heart were entertained.",
    "What a contrast between him and his friend!",
    "At such an assembly as this it would be insupportable.",
    "Mr. Bingley followed his advice.",
    "She told the story, however, with great spirit among her friends; for she had a lively, playful disposition, which delighted in anything ridiculous.",
    "Mr. Bingley had danced with her twice, and she had been distinguished by his sisters.",
    "They returned, therefore, in good spirits to Longbourn, the village where they lived, and of which they were the principal inhabitants.",
    "But, however, he did not admire her at all; indeed, nobody can, you know; and he seemed quite struck with Jane as she was going down the dance.",
    'Then the two third he danced with Miss King, and the two fourth with Maria Lucas, and the two fifth with Jane again, and the two sixth with Lizzy, and the Boulanger—"',
    "For God's sake, say no more of his partners.",
    "I never in my life saw anything more elegant than their dresses.",
    'I did not expect such a compliment."',
    "Well, he certainly is very agreeable, and I give you leave to like him.",
    "You never see a fault in anybody.",
    '"I would not wish to be hasty in censuring anyone; but I always speak what I think."',
    'Miss Bingley is to live with her brother, and keep his house; and I am much mistaken if we shall not find a very charming neighbour in her."',
    "They were in fact very fine ladies; not deficient in good humour when they were pleased, nor in the power of making themselves agreeable when they chose it, but proud and conceited.",
    "He was at the same time haughty, reserved, and fastidious, and his manners, though well-bred, were not inviting.",
    "Miss Bennet he acknowledged to be pretty, but she smiled too much.",
    '"You began the evening well, Charlotte," said Mrs. Bennet with civil self-command to Miss Lucas.',
    '"Yes; but he seemed to like his second better."',
    '"Perhaps you mean what I overheard between him and Mr. Robinson; did not I mention it to you?',
    '"Mr. Darcy is not so well worth listening to as his friend, is he?—poor Eliza!—to be only just tolerable."',
    'Mrs. Long told me last night that he sat close to her for half-an-hour without once opening his lips."',
    'But I can guess how it was; everybody says that he is eat up with pride, and I dare say he had heard somehow that Mrs. Long does not keep a carriage, and had come to the ball in a hack chaise."',
    '"I believe, ma\'am, I may safely promise you never to dance with him."',
    "A person may be proud without being vain.",
    "The ladies of Longbourn soon waited on those of Netherfield.",
    "Miss Bennet's pleasing manners grew on the goodwill of Mrs. Hurst and Miss Bingley; and though the mother was found to be intolerable, and the younger sisters not worth speaking to, a wish of being better acquainted with them was expressed towards the two eldest.",
    "We can all begin freely—a slight preference is natural enough; but there are very few of us who have heart enough to be really in love without encouragement.",
    'Bingley likes your sister undoubtedly; but he may never do more than like her, if she does not help him on."',
    "She has known him only a fortnight.",
    'On Miss Lucas\'s persevering, however, she added, "Very well, if it must be so, it must."',
    "Her performance was pleasing, though by no means capital.",
    "And, taking her hand, he would have given it to Mr. Darcy who, though extremely surprised, was not unwilling to receive it, when she instantly drew back, and said with some discomposure to Sir William:",
    '"You excel so much in the dance, Miss Eliza, that it is cruel to deny me the happiness of seeing you; and though this gentleman dislikes the amusement in general, he can have no objection, I am sure, to oblige us for one half-hour."',
    "The insipidity, and yet the noise—the nothingness, and yet the self-importance of all those people!",
    'How long has she been such a favourite?—and pray, when am I to wish you joy?"',
    "The village of Longbourn was only one mile from Meryton; a most convenient distance for the young ladies, who were usually tempted thither three or four times a week, to pay their duty to their aunt and to a milliner's shop just over the way.",
    "At present, indeed, they were well supplied both with news and happiness by the recent arrival of a militia regiment in the neighbourhood; it was to remain the whole winter, and Meryton was the headquarters.",
    '"From all that I can collect by your manner of talking, you must be two of the silliest girls in the country.',
    'I have suspected it some time, but I am now convinced."',
)
WARMUP = ("A short warm-up sentence.", "Another warm-up sentence, somewhat longer than the first one.")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="vits", choices=["vits", "kokoro"], help="which engine to measure")
    parser.add_argument("--quick", action="store_true", help="a fifth of the sentences (under a minute)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds of the three runs (default 2)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--dtype",
        default=None,
        choices=["auto", "float32", "bfloat16", "int8"],
        help="lector's decoder precision (bfloat16: AMX CPUs, GPUs; int8 and auto: Kokoro only); "
        "default float32 for vits, auto for kokoro",
    )
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where lector's engine runs")
    parser.add_argument(
        "--runtime",
        default="auto",
        choices=["auto", "torch", "onnxruntime"],
        help="VITS runtime (auto: onnxruntime on CPU in float32, PyTorch otherwise)",
    )
    parser.add_argument(
        "--token-budget", type=int, default=None, help="padded ids per forward pass (engine's default)"
    )
    parser.add_argument(
        "--max-batch", type=int, default=None, help="sentences per forward pass (engine's default)"
    )
    parser.add_argument(
        "--kernels",
        default="auto",
        choices=["auto", "eager", "compiled", "graphs"],
        help="Kokoro: the decoder's elementwise chains eager or fused by torch.compile (auto: fused on GPUs); "
        "graphs: fused and replayed from CUDA graphs (GPUs)",
    )
    parser.add_argument(
        "--convolutions",
        default="auto",
        choices=["auto", "direct", "spectral"],
        help="Kokoro: the generator's long convolutions direct or in the frequency domain "
        "(auto: spectral in float32 on a CPU)",
    )
    parser.add_argument(
        "--reference-sentences",
        type=int,
        default=None,
        help="Kokoro: time onnxruntime on the first N sentences only (its RTF is a rate; a slow "
        "CPU beside a GPU can take minutes a round)",
    )
    args = parser.parse_args(argv)
    sentences = list(SENTENCES[::5] if args.quick else SENTENCES)
    args.rounds = args.rounds or 2
    if args.engine == "kokoro":
        from bench import engine_kokoro

        args.dtype = args.dtype or "auto"
        engine_kokoro.main(args, sentences, SENTENCES)
        return
    args.dtype = args.dtype or "float32"
    if args.dtype not in ("float32", "bfloat16"):
        parser.error("--dtype for vits is float32 or bfloat16")

    import onnxruntime
    import torch

    from bench.machine import describe
    from speech.engines.vits import VitsEngine
    from speech.engines.vits.engine import default_voice_paths, resolve_runtime
    from speech.text.phonemize import EspeakPhonemizer

    model_path, config_path = default_voice_paths()
    runtime = resolve_runtime(args.runtime, args.device, args.dtype)

    def load(runtime: str) -> VitsEngine:
        return VitsEngine.load(
            model_path,
            config_path,
            device=args.device,
            threads=args.threads,
            dtype=args.dtype,
            token_budget=args.token_budget,
            max_batch=args.max_batch,
            runtime=runtime,
        )

    engine = load(runtime)
    # On CPU with onnxruntime chosen, our PyTorch modules are timed too (the road not taken).
    torch_engine = load("torch") if runtime != "torch" else None
    session = onnxruntime_session(str(model_path), args.threads, args.device)
    phonemizer = EspeakPhonemizer()
    config = engine.config
    scales = np.array([config.noise_scale, config.length_scale, config.noise_w], dtype=np.float32)
    rate = engine.sample_rate
    print(describe(args.device, args.dtype))
    print(
        f"{len(sentences)} sentences, {sum(map(len, sentences))} characters; {args.threads} threads; "
        f"torch {torch.__version__} ({args.dtype}), onnxruntime {onnxruntime.__version__}; "
        f"lector's VITS runtime: {runtime}"
    )
    if args.device == "cuda":
        print(
            f"lector on {torch.cuda.get_device_name(engine.device)} (token budget {engine.token_budget}, "
            f"max batch {engine.max_batch}); onnxruntime on {session.get_providers()[0]} "
            f"(available: {', '.join(onnxruntime.get_available_providers())})"
        )

    def onnxruntime_run(texts: Sequence[str]) -> float:
        samples = 0
        for text in texts:
            ids, _ = config.phoneme_ids(phonemizer.phonemize(text, config.espeak_voice))
            audio = session.run(
                None,
                {
                    "input": np.array([ids], dtype=np.int64),
                    "input_lengths": np.array([len(ids)], dtype=np.int64),
                    "scales": scales,
                },
            )[0]
            samples += audio.size
        return samples / rate

    def lector_single(texts: Sequence[str]) -> float:
        return sum(engine.synthesize([text])[0].duration for text in texts)

    def lector_batched(texts: Sequence[str]) -> float:
        return sum(chunk.duration for chunk in engine.synthesize(list(texts)))

    def lector_torch_batched(texts: Sequence[str]) -> float:
        assert torch_engine is not None
        return sum(chunk.duration for chunk in torch_engine.synthesize(list(texts)))

    def lector_batch64(_: Sequence[str]) -> float:
        # Always the 64 sentences in one call, whatever --quick chose; the word cache is emptied
        # so that each round phonemizes every word again.
        engine._phonemizer._word_cache.clear()  # noqa: SLF001 - bench only
        return sum(chunk.duration for chunk in engine.synthesize(list(SENTENCES)))

    onnxruntime_run(WARMUP)
    lector_single(WARMUP)
    lector_batched(WARMUP)
    if torch_engine is not None:
        lector_torch_batched(WARMUP)

    # Rounds alternate the runs so that load from other processes hits them alike; each run
    # keeps its best round.
    runs: dict[str, Callable[[Sequence[str]], float]] = {
        "onnxruntime, sentence by sentence": onnxruntime_run,
        "lector, batch 1": lector_single,
        "lector, batched": lector_batched,
    }
    if torch_engine is not None:
        runs["lector torch, batched"] = lector_torch_batched
    if args.device == "cuda":
        lector_batch64(SENTENCES)  # warm-up at the measured shapes (kernels, allocator)
        runs["lector, batch 64 (one call)"] = lector_batch64
    best, audio_of = alternate(runs, sentences, args.rounds)
    rtf_ort, rtf_single, rtf_batched = (best[label] for label in list(runs)[:3])
    if args.device == "cuda":
        # What of the batch-64 call is phonemization alone (on the CPU, one thread, cold word cache).
        engine._phonemizer._word_cache.clear()  # noqa: SLF001 - bench only
        start = time.perf_counter()
        for text in SENTENCES:
            engine.phonemize(text)
            engine._phonemizer.phonemize_words(text, config.espeak_voice)  # noqa: SLF001 - bench only
        phonemize_s = time.perf_counter() - start
        batch64_s = best["lector, batch 64 (one call)"] * audio_of["lector, batch 64 (one call)"]
        print(
            f"phonemization of the 64 sentences alone: {phonemize_s:.3f} s "
            f"({100 * phonemize_s / batch64_s:.0f}% of the batch-64 call's best {batch64_s:.3f} s)"
        )
    if "lector, batch 64 (one call)" in best:
        batch64 = f"{1 / best['lector, batch 64 (one call)']:.1f}"
    elif len(sentences) == len(SENTENCES):
        batch64 = f"{1 / rtf_batched:.1f}"  # the batched run was this very call
    else:
        batch64 = "n/a"
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"best RTF: onnxruntime {rtf_ort:.4f}, lector batch 1 {rtf_single:.4f}, lector batched {rtf_batched:.4f}"
    )
    print(
        f"ratio lector / onnxruntime: batch 1 {rtf_single / rtf_ort:.3f}, batched {rtf_batched / rtf_ort:.3f}"
    )
    rtf_torch = best.get("lector torch, batched")
    if rtf_torch is not None:
        print(f"lector torch batched {rtf_torch:.4f}: ratio to onnxruntime {rtf_torch / rtf_ort:.3f}")
    print(f"peak RSS {peak_mb:.0f} MB (one process holding every runtime)")
    if batch64 != "n/a":
        audio64 = audio_of.get("lector, batch 64 (one call)", audio_of["lector, batched"])
        print(f"batch 64 (one call, {audio64:.1f} s of audio): {batch64}x realtime")
    print(
        f"RESULT rtf_lector={rtf_batched:.4f} rtf_onnxruntime={rtf_ort:.4f} ratio={rtf_batched / rtf_ort:.3f} "
        f"realtime_x_batch64={batch64} runtime={runtime} "
        f"rtf_lector_torch={'n/a' if rtf_torch is None else f'{rtf_torch:.4f}'}"
    )


if __name__ == "__main__":
    main()
