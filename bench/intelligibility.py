"""What Whisper base hears from a Kokoro voice, sentence by sentence: the tuning tool behind the
figures of ``tests/integration/speech/test_kokoro_intelligibility.py``.

    PYTHONPATH=$PWD nice -n 10 .venv/bin/python -m bench.intelligibility fr julien \
        [--set dev|heldout] [--pack jm_kumo=0.9,jf_alpha=0.1] [--phonemes-only] [--quiet]

Tune on ``--set dev`` (``tests/data/intelligibility_dev.toml``, the default) and only confirm on
``--set heldout`` (the test's own sentences). Per sentence it prints the character error rate,
the text, what Whisper heard and the Kokoro phonemes the voice was given, so that a change is
aimed at the sounds that fail instead of guessed. The last line is the score the test computes
(error weighted by sentence length): ``RESULT <lang> <voice> <set> cer=<x> n=<sentences> pack=<pack> dtype=<dtype>`` (``--dtype``
defaults to the test's ``auto``), between two ``MACHINE`` lines (``bench.machine``: the CPU and
the load before and after the voice was spoken, with the kernel set).
Several speakers may be named at once (one model load); ``--pack`` replaces the catalog pack of
every named speaker (``name=weight,...``; a pack name alone is that pack) and may be
repeated to compare packs in one run; any of Kokoro v1.0's 54 packs may be named (the archive
``make install`` builds), or a pack file of one's own by path (``file.npz#name``).
Speech goes through the service's path: ``prepare``, the catalog voice, ``load_engine(auto)``;
scoring is ``tests/support/asr_multilingual`` (Whisper base), so it runs from a checkout.

What Whisper heard is kept in ``.lector/intelligibility/<lang>.json``, keyed by the voice, its
pack, the precision, the kernel set (``ATEN_CPU_CAPABILITY``) and the exact phonemes the engine
was given: a front-end fix then re-speaks only the sentences whose phonemes it changed (one
voice pair took 6-12 minutes a set on a loaded 2-core machine). ``--fresh`` speaks everything
again. A cached figure is one draw of the voice's noise, as a fresh one is.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SETS = {
    "dev": REPO / "tests" / "data" / "intelligibility_dev.toml",
    "heldout": REPO / "tests" / "data" / "intelligibility.toml",
}


CACHE = REPO / ".lector" / "intelligibility"


def _key(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]


def _load_cache(lang: str) -> dict[str, str]:
    path = CACHE / f"{lang}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _save_cache(lang: str, heard: dict[str, str]) -> None:
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{lang}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(heard, ensure_ascii=False, indent=0), encoding="utf-8")
    tmp.replace(path)


def _pack(spec: str) -> str | tuple[tuple[str, float], ...]:
    if "=" not in spec:
        return spec
    parts = [item.split("=") for item in spec.split(",")]
    total = sum(float(w) for _, w in parts)
    return tuple((name.strip(), float(w) / total) for name, w in parts)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("lang")
    parser.add_argument("speakers", nargs="+")
    parser.add_argument("--set", choices=sorted(SETS), default="dev")
    parser.add_argument(
        "--pack", action="append", help="replace the catalog pack: name=weight,name=weight (repeatable)"
    )
    parser.add_argument("--dtype", default="auto", help="the engine's precision (the test uses auto)")
    parser.add_argument("--phonemes-only", action="store_true", help="print the phonemes, speak nothing")
    parser.add_argument("--quiet", action="store_true", help="only the RESULT lines")
    parser.add_argument("--fresh", action="store_true", help="speak every sentence again")
    args = parser.parse_args()

    from speech.engines.kokoro.phonemes import KokoroPhonemizer
    from speech.synthesizer import prepare
    from speech.text.languages import espeak_voice
    from speech.voices.catalog import Catalog
    from tests.support.asr_multilingual import cer, sentences, transcribe

    written = sentences(args.lang, source=SETS[args.set])  # with their other renderings (Urdu for Hindi)
    texts = [sentence.text for sentence in written]
    phonemizer = KokoroPhonemizer(args.lang, espeak_voice(args.lang))
    if args.phonemes_only:
        for text in texts:
            print(text)  # noqa: T201
            print("   ", phonemizer.phonemize(text))  # noqa: T201
        return

    from bench.machine import describe
    from speech.engines.registry import load_engine

    catalog = Catalog.load()
    cached = _load_cache(args.lang)  # --fresh replaces the entries it speaks again, and keeps the rest
    kernels = os.environ.get("ATEN_CPU_CAPABILITY", "native")
    runs = [(speaker, pack) for pack in args.pack or [None] for speaker in args.speakers]
    for speaker, pack in runs:
        voice = catalog.voice("coda", speaker)
        if pack:
            voice = dataclasses.replace(voice, pack=_pack(pack))
        engine = load_engine(voice, dtype=args.dtype)
        print(describe("cpu", args.dtype), f"kernels={kernels}", flush=True)  # noqa: T201
        gap = np.zeros(int(0.25 * engine.sample_rate), dtype=np.float32)
        edits = 0.0
        total = 0
        for sentence in written:
            text = sentence.text
            prepared = prepare(text, args.lang)
            said = "\n".join(engine.phonemize(s) for s in prepared)
            key = _key(speaker, str(voice.pack), args.dtype, kernels, said)
            if key in cached and not args.fresh:
                heard = cached[key]
            else:
                chunks = engine.synthesize(prepared)
                audio = np.concatenate([part for chunk in chunks for part in (chunk.samples, gap)])
                heard = transcribe(audio, engine.sample_rate, args.lang)
                cached[key] = heard
                _save_cache(args.lang, cached)
            score = cer(sentence.renderings, heard, args.lang)
            edits += score * len(text)
            total += len(text)
            if not args.quiet:
                print(f"{score:.3f}  {text}\n       heard: {heard}")  # noqa: T201
                print(f"       phon:  {phonemizer.phonemize(text)}")  # noqa: T201
        label = pack or str(voice.pack)
        print(  # noqa: T201
            f"RESULT {args.lang} {speaker} {args.set} cer={edits / total:.3f} n={len(texts)}"
            f" pack={label} dtype={args.dtype}",
            flush=True,
        )  # noqa: T201
        print(describe("cpu", args.dtype), f"kernels={kernels}", flush=True)  # noqa: T201


if __name__ == "__main__":
    main()
