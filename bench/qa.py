"""Calibration of the QA check (``scheduler.qa``): false alarms per hour of clean audio, and the
share of planted defects caught, on sentences of our own; and the check's CPU cost as a share of
synthesis.

    PYTHONPATH=$PWD nice -n 10 .venv/bin/python -m bench.qa [--speaker joe] [--lang en]
        [--speeds 0.9,1.0,1.15] [--chunk 6] [--threads 2] [--verbose] [--dump run.json]
    PYTHONPATH=$PWD .venv/bin/python -m bench.qa --replay run.json [--part first|second]

What it does, through the product's own parts (``speech.asr``, ``scheduler.synthesis.join_sentences``):

- Every sentence of ``bench/data/qa_sentences_<lang>.txt`` is synthesized once per speed (the
  voice's time scale), and once garbled (``tests.support.defects.garble``: three words of its
  middle replaced by other words; in Japanese, nine characters by three Japanese words).
  ``--garble-every 6`` garbles one sentence of six only: the garbled renderings are half of the
  synthesis, and on a loaded machine a language's run takes that much less.
- Clean chunks: the sentences in groups of ``--chunk`` (about 600 characters, as the planner
  cuts), the grouping shifted at each speed. Each is heard and scored against its text; a chunk
  that fails is a false alarm. Reported per hour of clean audio.
- Dropped sentence: each sentence in turn is left out of its chunk's audio (what
  ``tests.support.defects.DefectEngine`` does to a job), the text kept. Caught when the chunk
  fails. Garbled: the same with the garbled rendering in its place.
- CPU: process CPU seconds of the engine and of the recognizer (``time.process_time``, which
  counts every thread), and their ratio.

The last lines are ``RESULT`` lines with the figures, after the ``MACHINE`` line. On a shared
machine, CPU seconds still count only this process's work, but contention slows both sides; say
so with the figures.

``--dump`` writes what was heard for every chunk, with the CPU figures, to a JSON file;
``--replay`` scores such a file again under the current rules (``speech.asr.scoring``) without
synthesizing or transcribing anything: a rule is tuned on one run's transcripts. ``--part``
keeps the chunks drawn from the first or the second half of the sentences only, so a rule tuned
on one half is checked on the other.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parent / "data"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--speaker", default="joe")
    parser.add_argument("--model", default="mistv3")
    parser.add_argument("--lang", default="en")
    parser.add_argument(
        "--speeds", default="0.9,1.0,1.15", help="time scales of the clean renderings (>1 slower)"
    )
    parser.add_argument("--chunk", type=int, default=6, help="sentences per chunk")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N sentences")
    parser.add_argument(
        "--garble-every", type=int, default=1, help="garble every Nth sentence only (1: all; saves synthesis)"
    )
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument(
        "--dump", type=Path, help="write every chunk's text and what was heard to this JSON file"
    )
    parser.add_argument("--replay", type=Path, help="score a --dump file again under the current rules")
    parser.add_argument("--part", choices=("all", "first", "second"), default="all", help="with --replay")
    args = parser.parse_args()
    if args.replay:
        run = json.loads(args.replay.read_text(encoding="utf-8"))
    else:
        run = measure(args)
        if args.dump:
            args.dump.write_text(json.dumps(run, ensure_ascii=False, indent=1), encoding="utf-8")
    report(run, args.part, verbose=args.verbose)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Synthesize, plant defects and transcribe: the run's record (what ``report`` scores)."""
    from bench.machine import describe
    from scheduler.synthesis import join_sentences
    from speech.asr import WhisperRecognizer
    from speech.engines.registry import load_engine
    from speech.synthesizer import Controls, prepare
    from speech.types import SynthesisOptions
    from speech.voices import Catalog
    from tests.support.defects import garble

    sentences = [
        line.strip()
        for line in (DATA / f"qa_sentences_{args.lang}.txt").read_text().splitlines()
        if line.strip()
    ]
    if args.limit:
        sentences = sentences[: args.limit]
    voice = Catalog.load().resolve(args.model, args.speaker, args.lang)
    engine = load_engine(voice, threads=args.threads)
    recognizer = WhisperRecognizer(cache_root=Path(".lector") / "asr", cpu_threads=args.threads)
    rate = engine.sample_rate
    cpu = {"synth_cpu": 0.0, "synth_audio": 0.0, "asr_cpu": 0.0, "asr_audio": 0.0}

    def render(texts: list[str], time_scale: float) -> list[np.ndarray]:
        options = SynthesisOptions(length_scale=Controls(time_scale=time_scale).length_scale())
        out = []
        for text in texts:
            started = time.process_time()
            pieces = engine.synthesize(prepare(text, args.lang), options)
            cpu["synth_cpu"] += time.process_time() - started
            samples, _ = join_sentences(pieces, rate)
            cpu["synth_audio"] += len(samples) / rate
            out.append(samples)
        return out

    trials: list[dict[str, Any]] = []

    def hear(parts: list[np.ndarray], group: list[int], label: str) -> None:
        gap = np.zeros(int(0.25 * rate), dtype=np.float32)  # synthesis.SENTENCE_GAP_MS
        audio = np.concatenate([p for part in parts if len(part) for p in (part, gap)][:-1] or [gap])
        started = time.process_time()
        heard = recognizer.transcribe(audio, rate, args.lang)
        cpu["asr_cpu"] += time.process_time() - started
        cpu["asr_audio"] += len(audio) / rate
        texts = [sentences[i] for i in group]
        trials.append(
            {
                "label": label,
                "sentences": group,
                "text": " ".join(texts),
                "heard": heard,
                "seconds": len(audio) / rate,
            }
        )

    speeds = [float(s) for s in args.speeds.split(",")]
    normal: list[np.ndarray] = []
    for n, speed in enumerate(speeds):
        rendered = render(sentences, speed)
        if speed == 1.0 or not normal:
            normal = rendered
        shift = (n * args.chunk) // max(len(speeds), 1)
        order = list(range(shift, len(sentences))) + list(range(shift))
        for at in range(0, len(order), args.chunk):
            group = order[at : at + args.chunk]
            hear([rendered[i] for i in group], group, "clean")

    every = max(args.garble_every, 1)
    to_garble = [i for i in range(len(sentences)) if i % every == every // 2]
    garbled = dict(
        zip(to_garble, render([garble(sentences[i], lang=args.lang) for i in to_garble], 1.0), strict=True)
    )
    for at in range(0, len(sentences), args.chunk):
        group = list(range(at, min(at + args.chunk, len(sentences))))
        if len(group) < 2:
            continue
        for i in group:
            hear([normal[j] for j in group if j != i], group, "dropped")
            if i in garbled:
                hear([garbled[j] if j == i else normal[j] for j in group], group, "garbled")
    return {
        "machine": describe("cpu", "n/a"),
        "lang": args.lang,
        "voice": args.speaker,
        "model": recognizer.model_name(args.lang),
        "sentences": len(sentences),
        "cpu": cpu,
        "trials": trials,
    }


def report(run: dict[str, Any], part: str = "all", *, verbose: bool = False) -> None:
    """Score every chunk of ``run`` under the current rules and print the figures."""
    from speech.asr import Threshold, score, threshold

    lang, half = run["lang"], run["sentences"] / 2

    def keep(group: list[int]) -> bool:
        return part == "all" or (max(group) < half if part == "first" else min(group) >= half)

    limit = threshold(lang)
    scores: dict[str, list[Any]] = {"clean": [], "dropped": [], "garbled": []}
    clean_seconds = 0.0
    for trial in run["trials"]:
        if not keep(trial["sentences"]):
            continue
        label = trial["label"]
        result = score(trial["text"], trial["heard"], lang)
        failed = result.fails(limit)
        scores[label].append(result)
        if label == "clean":
            clean_seconds += trial["seconds"]
        if verbose or (failed and label == "clean") or (not failed and label != "clean"):
            print(
                f"{label:8} {'FAIL' if failed else 'pass'} {result.metric}={result.rate:.3f} run={result.missing_run} wrong={result.wrong_run}"
            )  # noqa: T201
            print(f"         text:  {trial['text']}\n         heard: {trial['heard']}")  # noqa: T201

    clean, dropped, garbled = scores["clean"], scores["dropped"], scores["garbled"]
    false_alarms = sum(r.fails(limit) for r in clean)
    dropped_caught, garbled_caught = (
        sum(r.fails(limit) for r in dropped),
        sum(r.fails(limit) for r in garbled),
    )
    trials = len(dropped)
    print(run["machine"])  # noqa: T201
    print(  # noqa: T201
        f"RESULT clean lang={lang} voice={run['voice']} part={part} chunks={len(clean)} audio_min={clean_seconds / 60:.1f}"
        f" false_alarms={false_alarms} per_hour={false_alarms / max(clean_seconds / 3600, 1e-9):.2f}"
        f" threshold={limit.rate}/{limit.missing_run}/{limit.wrong_run}"
    )
    if clean:
        print(  # noqa: T201
            f"RESULT clean_worst rate={max(r.rate for r in clean):.3f} missing_run={max(r.missing_run for r in clean)}"
            f" wrong_runs={sorted(r.wrong_run for r in clean)}"
        )
    print(
        f"RESULT dropped_sentence caught={dropped_caught}/{trials} share={dropped_caught / max(trials, 1):.3f}"
    )  # noqa: T201
    print(
        f"RESULT garbled_3_words caught={garbled_caught}/{len(garbled)} share={garbled_caught / max(len(garbled), 1):.3f}"
    )  # noqa: T201
    for share, missing, wrong in (
        (limit.rate, limit.missing_run, 0),
        (0.2, 5, 0),
        (0.25, 6, 4),
        (0.25, 6, 5),
        (0.3, 8, 0),
    ):
        candidate = Threshold(share, missing, wrong)
        print(  # noqa: T201
            f"CANDIDATE rate>{share} missing_run>={missing} wrong_run>={wrong or '-'}:"
            f" false_alarms={sum(r.fails(candidate) for r in clean)}/{len(clean)}"
            f" dropped={sum(r.fails(candidate) for r in dropped)}/{len(dropped)}"
            f" garbled={sum(r.fails(candidate) for r in garbled)}/{len(garbled)}"
        )
    cpu = run["cpu"]
    synth, asr = cpu["synth_cpu"] / cpu["synth_audio"], cpu["asr_cpu"] / cpu["asr_audio"]
    print(  # noqa: T201
        f"RESULT cpu lang={lang} model={run['model']} voice={run['voice']}"
        f" synth_cpu_s={cpu['synth_cpu']:.1f} (per audio s {synth:.3f})"
        f" asr_cpu_s={cpu['asr_cpu']:.1f} (per audio s {asr:.3f})"
        f" qa_share_of_synthesis={asr / synth:.2f}"
    )


if __name__ == "__main__":
    main()
