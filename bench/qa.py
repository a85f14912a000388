"""Calibration of the QA check (``scheduler.qa``): false alarms per hour of clean audio, and the
share of planted defects caught, on sentences of our own; and the check's CPU cost as a share of
synthesis.

    PYTHONPATH=$PWD nice -n 10 .venv/bin/python -m bench.qa [--speaker joe] [--lang en]
        [--speeds 0.9,1.0,1.15] [--chunk 6] [--threads 2] [--verbose]

What it does, through the product's own parts (``speech.asr``, ``scheduler.synthesis.join_sentences``):

- Every sentence of ``bench/data/qa_sentences_<lang>.txt`` is synthesized once per speed (the
  voice's time scale), and once garbled (``tests.support.defects.garble``: three words of its
  middle replaced by other words).
- Clean chunks: the sentences in groups of ``--chunk`` (about 600 characters, as the planner
  cuts), the grouping shifted at each speed. Each is heard and scored against its text; a chunk
  that fails is a false alarm. Reported per hour of clean audio.
- Dropped sentence: each sentence in turn is left out of its chunk's audio (what
  ``tests.support.defects.DefectEngine`` does to a job), the text kept. Caught when the chunk
  fails. Garbled: the same with the garbled rendering in its place.
- CPU: process CPU seconds of the engine and of the recognizer (``time.process_time``, which
  counts every thread), and their ratio.

The last lines are ``RESULT`` lines with the figures. On a shared machine, CPU seconds still
count only this process's work, but contention slows both sides; say so with the figures.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parent / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--speaker", default="joe")
    parser.add_argument("--model", default="mistv3")
    parser.add_argument("--lang", default="en")
    parser.add_argument("--speeds", default="0.9,1.0,1.15", help="time scales of the clean renderings (>1 slower)")
    parser.add_argument("--chunk", type=int, default=6, help="sentences per chunk")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N sentences")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    from scheduler.synthesis import join_sentences
    from speech.asr import Threshold, WhisperRecognizer, score, threshold
    from speech.engines.registry import load_engine
    from speech.synthesizer import Controls, prepare
    from speech.types import SynthesisOptions
    from speech.voices import Catalog
    from tests.support.defects import garble

    sentences = [line.strip() for line in (DATA / f"qa_sentences_{args.lang}.txt").read_text().splitlines() if line.strip()]
    if args.limit:
        sentences = sentences[: args.limit]
    voice = Catalog.load().resolve(args.model, args.speaker, args.lang)
    engine = load_engine(voice, threads=args.threads)
    recognizer = WhisperRecognizer(cache_root=Path(".lector") / "asr", cpu_threads=args.threads)
    limit = threshold(args.lang)
    rate = engine.sample_rate

    synth_cpu = 0.0
    synth_audio = 0.0

    def render(texts: list[str], time_scale: float) -> list[np.ndarray]:
        nonlocal synth_cpu, synth_audio
        options = SynthesisOptions(length_scale=Controls(time_scale=time_scale).length_scale())
        out = []
        for text in texts:
            started = time.process_time()
            pieces = engine.synthesize(prepare(text, args.lang), options)
            synth_cpu += time.process_time() - started
            samples, _ = join_sentences(pieces, rate)
            synth_audio += len(samples) / rate
            out.append(samples)
        return out

    asr_cpu = 0.0
    asr_audio = 0.0
    scores: dict[str, list[Any]] = {"clean": [], "dropped": [], "garbled": []}

    def fails(parts: list[np.ndarray], texts: list[str], label: str) -> bool:
        nonlocal asr_cpu, asr_audio
        gap = np.zeros(int(0.25 * rate), dtype=np.float32)  # synthesis.SENTENCE_GAP_MS
        audio = np.concatenate([p for part in parts if len(part) for p in (part, gap)][:-1] or [gap])
        started = time.process_time()
        heard = recognizer.transcribe(audio, rate, args.lang)
        asr_cpu += time.process_time() - started
        asr_audio += len(audio) / rate
        result = score(" ".join(texts), heard, args.lang)
        failed = result.fails(limit)
        scores[label].append(result)
        if args.verbose or (failed and label == "clean") or (not failed and label != "clean"):
            print(f"{label:8} {'FAIL' if failed else 'pass'} {result.metric}={result.rate:.3f} run={result.missing_run} wrong={result.wrong_run}")  # noqa: T201
            print(f"         text:  {' '.join(texts)}\n         heard: {heard}")  # noqa: T201
        return failed

    speeds = [float(s) for s in args.speeds.split(",")]
    clean_seconds = 0.0
    false_alarms = clean_chunks = 0
    normal: list[np.ndarray] = []
    for n, speed in enumerate(speeds):
        rendered = render(sentences, speed)
        if speed == 1.0 or not normal:
            normal = rendered
        shift = (n * args.chunk) // max(len(speeds), 1)
        order = list(range(shift, len(sentences))) + list(range(shift))
        for at in range(0, len(order), args.chunk):
            group = order[at : at + args.chunk]
            parts = [rendered[i] for i in group]
            clean_chunks += 1
            clean_seconds += sum(len(p) for p in parts) / rate + 0.25 * (len(parts) - 1)
            false_alarms += fails(parts, [sentences[i] for i in group], "clean")

    garbled = render([garble(s) for s in sentences], 1.0)
    dropped_caught = garbled_caught = trials = 0
    for at in range(0, len(sentences), args.chunk):
        group = list(range(at, min(at + args.chunk, len(sentences))))
        if len(group) < 2:
            continue
        texts = [sentences[i] for i in group]
        for i in group:
            trials += 1
            dropped_caught += fails([normal[j] for j in group if j != i], texts, "dropped")
            garbled_caught += fails([garbled[j] if j == i else normal[j] for j in group], texts, "garbled")

    hours = clean_seconds / 3600
    clean, dropped, garbled_scores = scores["clean"], scores["dropped"], scores["garbled"]
    print(  # noqa: T201
        f"RESULT clean lang={args.lang} voice={args.speaker} chunks={clean_chunks} audio_min={clean_seconds / 60:.1f}"
        f" false_alarms={false_alarms} per_hour={false_alarms / hours:.2f}"
        f" threshold={limit.rate}/{limit.missing_run}/{limit.wrong_run}"
    )
    print(  # noqa: T201
        f"RESULT clean_worst rate={max(r.rate for r in clean):.3f} missing_run={max(r.missing_run for r in clean)}"
        f" wrong_runs={sorted(r.wrong_run for r in clean)}"
    )
    print(f"RESULT dropped_sentence caught={dropped_caught}/{trials} share={dropped_caught / max(trials, 1):.3f}")  # noqa: T201
    print(f"RESULT garbled_3_words caught={garbled_caught}/{trials} share={garbled_caught / max(trials, 1):.3f}")  # noqa: T201
    for share, missing, wrong in ((limit.rate, limit.missing_run, 0), (0.2, 5, 0), (0.25, 6, 4), (0.25, 6, 5), (0.3, 8, 0)):
        candidate = Threshold(share, missing, wrong)  # not ``rate``: that is the voice's sample rate
        print(  # noqa: T201
            f"CANDIDATE rate>{share} missing_run>={missing} wrong_run>={wrong or '-'}:"
            f" false_alarms={sum(r.fails(candidate) for r in clean)}/{len(clean)}"
            f" dropped={sum(r.fails(candidate) for r in dropped)}/{len(dropped)}"
            f" garbled={sum(r.fails(candidate) for r in garbled_scores)}/{len(garbled_scores)}"
        )
    print(  # noqa: T201
        f"RESULT cpu lang={args.lang} model={recognizer.model_name(args.lang)} voice={args.speaker}"
        f" synth_cpu_s={synth_cpu:.1f} (per audio s {synth_cpu / synth_audio:.3f})"
        f" asr_cpu_s={asr_cpu:.1f} (per audio s {asr_cpu / asr_audio:.3f})"
        f" qa_share_of_synthesis={(asr_cpu / asr_audio) / (synth_cpu / synth_audio):.2f}"
    )


if __name__ == "__main__":
    main()
