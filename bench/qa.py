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
- First look: the chunk's audio heard whole once (Whisper's one reading) and scored
  (``speech.asr.score``); the ``RESULT clean``, ``dropped_sentence`` and ``garbled_3_words``
  lines and the candidates score that reading alone, so a threshold is tuned on it.
- Full path (``RESULT full_path``): the product's verdict (``scheduler.qa``). The chunk is heard
  by ``speech.asr.listen`` with the sentence count ``scheduler.qa`` gives it (fewer stretches of
  sound than sentences fail it; a failed reading is heard again sentence by sentence, and by a
  second model where the language has one); a chunk that fails is rendered again sentence by
  sentence and ``scheduler.qa.REDO_SLOWER`` slower and heard again, and what fails then is
  flagged. The planted defect stays in the second rendering (the same sentence dropped, the same
  words garbled), as ``DefectEngine`` plants it on every call: a defect that a second rendering
  would mend is no miss. Sentences are rendered one call each at both renderings (a book job's
  first rendering is one call for the chunk). Every reading ``listen`` took is kept in the dump
  with the stretches of sound it found, and ``--replay`` judges them again with ``listen`` itself;
  a trial whose first look passed when measured but fails under changed rules has no second
  rendering to judge (``unknown``: measure it again).
- CPU: process CPU seconds of the engine and of the recognizer (``time.process_time``, which
  counts every thread), and their ratio: the first look's reading against the first rendering,
  and (``full_path_cpu``) every reading of the clean chunks' looks.

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


class Unrecorded(LookupError):
    """A replayed look asked for a reading the measured run did not take (the rules changed which
    readings ``speech.asr.listen`` asks for): that trial must be measured again."""


class _Recording:
    """A recogniser that keeps every reading ``speech.asr.listen`` asks for, in order, with the
    length of the audio it was given and the CPU seconds it took, so ``--replay`` can hand them back
    (``_Replaying``)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[list[Any]] = []  # [kind, samples, text, cpu_s]

    def _keep(self, kind: str, samples: np.ndarray, read: Any) -> Any:
        started = time.process_time()
        text = read()
        self.calls.append([kind, len(samples), text, time.process_time() - started])
        return text

    def transcribe(self, samples: np.ndarray, sample_rate: int, lang: str) -> str:
        text: str = self._keep("transcribe", samples, lambda: self.inner.transcribe(samples, sample_rate, lang))
        return text

    def second_opinion(self, samples: np.ndarray, sample_rate: int, lang: str) -> str | None:
        text: str | None = self._keep("second", samples, lambda: self.inner.second_opinion(samples, sample_rate, lang))
        return text


class _Replaying:
    """The readings a ``_Recording`` kept, handed back in the same order; a reading that was not
    taken raises ``Unrecorded``."""

    def __init__(self, calls: list[list[Any]]) -> None:
        self.calls = list(calls)

    def _next(self, kind: str, samples: np.ndarray) -> Any:
        if not self.calls or self.calls[0][0] != kind or self.calls[0][1] != len(samples):
            raise Unrecorded(f"{kind} of {len(samples)} samples")
        return self.calls.pop(0)[2]

    def transcribe(self, samples: np.ndarray, sample_rate: int, lang: str) -> str:
        text: str = self._next("transcribe", samples)
        return text

    def second_opinion(self, samples: np.ndarray, sample_rate: int, lang: str) -> str | None:
        text: str | None = self._next("second", samples)
        return text


def _look(recognizer: Any, audio: np.ndarray, rate: int, text: str, lang: str, scale: float) -> tuple[dict[str, Any], bool]:
    """The product's look at one chunk (``speech.asr.listen`` with the sentence count
    ``scheduler.qa`` gives it), recorded for ``--replay``: the stretches of sound it found and every
    reading it took."""
    from scheduler.qa import spoken_sentences
    from scheduler.synthesis import SENTENCE_GAP_MS
    from speech.asr import listen, sentence_spans

    gap_s = SENTENCE_GAP_MS / 1000
    recording = _Recording(recognizer)
    hearing = listen(recording, audio, rate, text, lang, gap_s=gap_s, sentences=spoken_sentences(text, lang))
    look = {
        "scale": scale,
        "samples": len(audio),
        "spans": [list(span) for span in sentence_spans(audio, rate, gap_s)],
        "calls": recording.calls,
        "passed": hearing.passed,
        "heard": hearing.heard,
    }
    return look, hearing.passed


def replay_look(look: dict[str, Any], rate: int, text: str, lang: str) -> bool:
    """A recorded look judged again under the current rules by ``speech.asr.listen`` itself: audio
    with sound where the look found it, the readings it took handed back. Raises ``Unrecorded``
    where the rules now ask for a reading the run did not take."""
    from scheduler.qa import spoken_sentences
    from scheduler.synthesis import SENTENCE_GAP_MS
    from speech.asr import listen

    audio = np.zeros(look["samples"], dtype=np.float32)
    for start, end in look["spans"]:
        audio[start:end] = 0.5
    replaying = _Replaying(look["calls"])
    hearing = listen(replaying, audio, rate, text, lang, gap_s=SENTENCE_GAP_MS / 1000, sentences=spoken_sentences(text, lang))
    return hearing.passed


def measure(args: argparse.Namespace, *, engine: Any = None, recognizer: Any = None) -> dict[str, Any]:
    """Synthesize, plant defects and transcribe: the run's record (what ``report`` scores).
    ``engine`` and ``recognizer``: stand-ins for the voice's engine and Whisper (tests)."""
    from bench.machine import describe
    from scheduler.qa import REDO_SLOWER
    from scheduler.synthesis import join_sentences
    from speech.synthesizer import Controls, prepare
    from speech.types import SynthesisOptions
    from tests.support.defects import garble

    sentences = [
        line.strip()
        for line in (DATA / f"qa_sentences_{args.lang}.txt").read_text().splitlines()
        if line.strip()
    ]
    if args.limit:
        sentences = sentences[: args.limit]
    if engine is None:
        from speech.engines.registry import load_engine
        from speech.voices import Catalog

        engine = load_engine(Catalog.load().resolve(args.model, args.speaker, args.lang), threads=args.threads)
    if recognizer is None:
        from speech.asr import WhisperRecognizer

        recognizer = WhisperRecognizer(cache_root=Path(".lector") / "asr", cpu_threads=args.threads)
    rate = engine.sample_rate
    cpu = {"synth_cpu": 0.0, "synth_audio": 0.0, "asr_cpu": 0.0, "asr_audio": 0.0, "redo_synth_cpu": 0.0,
           "redo_synth_audio": 0.0}
    every = max(args.garble_every, 1)
    to_garble = [i for i in range(len(sentences)) if i % every == every // 2]
    renderings: dict[tuple[int, float, bool], np.ndarray] = {}
    first_scales: set[float] = set()

    def rendering(i: int, time_scale: float, garbled: bool = False) -> np.ndarray:
        """Sentence ``i`` said alone at ``time_scale`` (garbled: :func:`garble`'s words instead),
        rendered once. Every sentence is its own call: the second rendering's strategy
        (``scheduler.qa.redo_chunks``) at both looks."""
        key = (i, time_scale, garbled)
        if key not in renderings:
            text = garble(sentences[i], lang=args.lang) if garbled else sentences[i]
            options = SynthesisOptions(length_scale=Controls(time_scale=time_scale).length_scale())
            started = time.process_time()
            pieces = engine.synthesize(prepare(text, args.lang), options)
            spent = time.process_time() - started
            samples, _ = join_sentences(pieces, rate)
            redo = time_scale not in first_scales
            cpu["redo_synth_cpu" if redo else "synth_cpu"] += spent
            cpu["redo_synth_audio" if redo else "synth_audio"] += len(samples) / rate
            renderings[key] = samples
        return renderings[key]

    trials: list[dict[str, Any]] = []

    def chunk_audio(group: list[int], time_scale: float, dropped: int | None, garbled: int | None) -> np.ndarray:
        parts = [rendering(j, time_scale, j == garbled) for j in group if j != dropped]
        gap = np.zeros(int(0.25 * rate), dtype=np.float32)  # synthesis.SENTENCE_GAP_MS
        return np.concatenate([p for part in parts if len(part) for p in (part, gap)][:-1] or [gap])

    def hear(group: list[int], label: str, time_scale: float, dropped: int | None = None, garbled: int | None = None) -> None:
        """The first look (the whole chunk's reading, what the first-look figures score), then the
        product's path: ``listen`` and, where it fails, the chunk rendered again sentence by sentence
        and ``REDO_SLOWER`` slower and heard again. The planted defect stays in the second
        rendering, as ``DefectEngine`` plants it again on every call."""
        text = " ".join(sentences[i] for i in group)
        audio = chunk_audio(group, time_scale, dropped, garbled)
        look, passed = _look(recognizer, audio, rate, text, args.lang, time_scale)
        whole = look["calls"][0]
        cpu["asr_cpu"] += whole[3]
        cpu["asr_audio"] += len(audio) / rate
        looks = [look]
        if not passed:
            again = chunk_audio(group, time_scale * REDO_SLOWER, dropped, garbled)
            looks.append(_look(recognizer, again, rate, text, args.lang, time_scale * REDO_SLOWER)[0])
        trials.append(
            {
                "label": label,
                "sentences": group,
                "text": text,
                "heard": whole[2],
                "seconds": len(audio) / rate,
                "looks": looks,
            }
        )

    speeds = [float(s) for s in args.speeds.split(",")]
    first_scales.update(speeds)
    for n, speed in enumerate(speeds):
        shift = (n * args.chunk) // max(len(speeds), 1)
        order = list(range(shift, len(sentences))) + list(range(shift))
        for at in range(0, len(order), args.chunk):
            hear(order[at : at + args.chunk], "clean", speed)

    normal = 1.0 if 1.0 in speeds else speeds[0]
    for at in range(0, len(sentences), args.chunk):
        group = list(range(at, min(at + args.chunk, len(sentences))))
        if len(group) < 2:
            continue
        for i in group:
            hear(group, "dropped", normal, dropped=i)
            if i in to_garble:
                hear(group, "garbled", normal, garbled=i)
    return {
        "machine": describe("cpu", "n/a"),
        "lang": args.lang,
        "voice": args.speaker,
        "model": recognizer.model_name(args.lang),
        "sentences": len(sentences),
        "rate": rate,
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
    report_full_path(run, keep, clean_seconds, verbose=verbose)


def full_verdict(trial: dict[str, Any], rate: int, lang: str) -> tuple[bool, bool] | None:
    """``(failed the first look, failed after the second rendering)`` of a trial under the product's
    whole path and the current rules (``replay_look``); None where the run did not record it (a dump
    from before) or took none of the readings the rules now ask for (measure it again)."""
    looks = trial.get("looks")
    if not looks:
        return None
    try:
        if replay_look(looks[0], rate, trial["text"], lang):
            return False, False
        if len(looks) < 2:
            return None
        return True, not replay_look(looks[1], rate, trial["text"], lang)
    except Unrecorded:
        return None


def report_full_path(run: dict[str, Any], keep: Any, clean_seconds: float, *, verbose: bool = False) -> None:
    """The verdicts after the product's whole path (``scheduler.qa``): ``speech.asr.listen`` (the
    sentences counted in the stretches of sound, a failed reading heard again sentence by sentence,
    a second model where the language has one), and a chunk that still fails rendered again
    sentence by sentence, ``REDO_SLOWER`` slower, and heard again; what fails then is flagged. A
    planted defect is planted again in the second rendering."""
    from scheduler.qa import spoken_sentences

    lang, rate = run["lang"], run.get("rate", 0)
    by_count = 0  # drops whose first look had fewer stretches of sound than sentences (caught whatever was heard)
    tally: dict[str, list[int]] = {label: [0, 0, 0, 0] for label in ("clean", "dropped", "garbled")}  # trials, again, failed, unknown
    clean_cpu = 0.0  # the recogniser's CPU seconds on the clean chunks, every reading of every look
    for trial in run["trials"]:
        if not keep(trial["sentences"]):
            continue
        label = trial["label"]
        verdict = full_verdict(trial, rate, lang) if rate else None
        counts = tally[label]
        counts[0] += 1
        if label == "clean":
            clean_cpu += sum(call[3] for look in trial.get("looks", []) for call in look["calls"])
        if verdict is None:
            counts[3] += 1
            continue
        counts[1] += verdict[0]
        counts[2] += verdict[1]
        if label == "dropped":
            by_count += len(trial["looks"][0]["spans"]) < spoken_sentences(trial["text"], lang)
        if verbose or verdict[1] == (label == "clean"):
            looks = trial["looks"]
            print(f"full path {label:8} {'FLAGGED' if verdict[1] else 'passes'} after {len(looks)} look(s)")  # noqa: T201
            print(f"         text:  {trial['text']}")  # noqa: T201
            for n, look in enumerate(looks, 1):
                print(f"         look {n} (time scale {look['scale']:.2f}): {look['heard']}")  # noqa: T201
    if not any(counts[0] > counts[3] for counts in tally.values()):
        print("RESULT full_path not recorded (a dump from before the full path: measure again)")  # noqa: T201
        return
    clean, dropped, garbled = tally["clean"], tally["dropped"], tally["garbled"]
    hours = max(clean_seconds / 3600, 1e-9)
    print(  # noqa: T201
        f"RESULT full_path clean chunks={clean[0]} rendered_again={clean[1]} false_alarms={clean[2]}"
        f" per_hour={clean[2] / hours:.2f} unknown={clean[3]}"
    )
    print(  # noqa: T201
        f"RESULT full_path dropped_sentence caught={dropped[2]}/{dropped[0]} first_look={dropped[1]}"
        f" unknown={dropped[3]} by_count={by_count} garbled_3_words caught={garbled[2]}/{garbled[0]} first_look={garbled[1]}"
        f" unknown={garbled[3]}"
    )
    cpu = run["cpu"]
    synth, full = cpu["synth_cpu"] / cpu["synth_audio"], clean_cpu / max(clean_seconds, 1e-9)
    print(  # noqa: T201
        f"RESULT full_path_cpu clean asr_per_audio_s={full:.3f} share_of_synthesis={full / synth:.2f}"
        f" (every reading of the clean chunks' looks; their second renderings' synthesis apart)"
        f" redo_synth_cpu_s={cpu.get('redo_synth_cpu', 0.0):.1f} (every trial's)"
    )


if __name__ == "__main__":
    main()
