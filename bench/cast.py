"""The time a cast adds to a book's render: the same chapters of Pride and Prejudice read by one
voice, by a cast whose every voice is that voice (what splitting at speakers, matching and
attribution cost alone), and by a cast of different engines (joe's VITS narrating, Kokoro voices
for the Bennets: the engines' own speeds count too).

    python -m bench.cast [--chars 6000]

The same pipeline as ``bench.book`` (plan, synthesis, assembly in this process, a throwaway
database), assembly after synthesis, book loudness scope, MP3.
"""

from __future__ import annotations

import argparse
from typing import Any

from bench.book import _one_book, _TimedSynthesizer, book_text
from lector.settings import Settings

CASTS: dict[str, dict[str, Any] | None] = {
    "one voice": None,
    "cast, all joe": {"narrator": "joe", "dialogue": "joe", "characters": {
        "Mrs. Bennet": {"voice": "joe", "aliases": ["his wife", "his lady", "her mother"]},
        "Mr. Bennet": {"voice": "joe", "aliases": ["her father", "her husband"]}}},
    "cast, joe + Kokoro": {"narrator": "joe", "dialogue": "ivy", "characters": {
        "Mrs. Bennet": {"voice": "nora", "aliases": ["his wife", "his lady", "her mother"]},
        "Mr. Bennet": {"voice": "owen", "aliases": ["her father", "her husband"]}}},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=6000)
    args = parser.parse_args()
    from books import parallel
    from lector.wiring import build_catalog, build_synthesizer
    from speech.synthesizer import Controls

    settings = Settings()
    text, skip = book_text(args.chars)
    catalog = build_catalog(settings)
    synthesizer = _TimedSynthesizer(build_synthesizer(settings))
    for speaker in ("joe", "nora", "owen", "ivy"):  # every voice loaded and warm before any clock starts
        synthesizer.synthesize(catalog.resolve("coda", speaker, "en"), ["Warming up the voice."], Controls())
    workers = settings.assembly_workers or parallel.default_workers()
    from bench.machine import describe

    print(describe("cpu", settings.engine_dtype))
    # A first book warms what the first run would otherwise pay for (the assembly pool, caches).
    _one_book(settings, synthesizer, catalog, text, skip, "mp3", "book", workers, ahead=False, extra={"model_id": "coda"})
    runs = {}
    for name, cast in CASTS.items():
        extra = {"model_id": "coda"} | ({"cast": cast} if cast else {})
        runs[name] = run = _one_book(settings, synthesizer, catalog, text, skip, "mp3", "book", workers, ahead=False,
                                     extra=extra)
        print(f"{name}: job {run.status}; {run.chunks} chunks; wall {run.wall:.1f} s (plan {run.plan:.2f} s, synthesis "
              f"{run.synthesis:.1f} s, assembly {run.assembly:.1f} s); engine {run.engine:.1f} s; audio {run.audio_s:.1f} s")
    base = runs["one voice"]
    for name, run in runs.items():
        print(f"RESULT {name}: wall x{run.wall / base.wall:.2f}, non-engine time {run.wall - run.engine:.1f} s "
              f"(one voice {base.wall - base.engine:.1f} s), plan {run.plan - base.plan:+.2f} s")


if __name__ == "__main__":
    main()
