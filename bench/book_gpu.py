"""Book synthesis stage on one device: a whole novel, cut as a job's plan is, through ``VitsEngine``.

    python -m bench.book_gpu [--corpus PATH] [--chars N] [--device cuda] [--dtype bfloat16]
                             [--call-chars 1500] [--concurrency 1]

Only the synthesis stage of ``bench.book`` (no database, object store, Celery or assembly): the
corpus (from its first chapter, ``--chars`` of it cut at a sentence end, or the whole file with
the front matter skipped) is cut into chapters and chunks by planning's own ``split``, each chunk
becomes sentences by ``prepare`` as the synthesize task does, and the chunks, sorted by length as
planning batches them, go to the engine in calls of at most ``--call-chars`` characters (the
pipeline's engine calls are ``LECTOR_SYNTH_GROUP_CHARS``, 1,500 by default). ``--concurrency`` calls may be in flight
at once (the engine runs one forward pass at a time; the others phonemize meanwhile).
Phonemization is included, from a cold word cache; the engine is loaded and warmed up on other
text before the clock starts. The last line is
``RESULT chars=... sentences=... audio_s=... wall_s=... rtf_x=... device=...``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import time
from pathlib import Path

from bench.book import CORPUS, book_text
from lector.settings import Settings


def _calls(chunks: list[list[str]], call_chars: int) -> list[list[str]]:
    """Chunks shortest first (as planning's batches), whole chunks per call, within ``call_chars``."""
    order = sorted(range(len(chunks)), key=lambda i: (sum(map(len, chunks[i])), i))
    calls: list[list[str]] = []
    used = call_chars
    for i in order:
        size = sum(map(len, chunks[i]))
        if used + size > call_chars:
            calls.append([])
            used = 0
        calls[-1].extend(chunks[i])
        used += size
    return [c for c in calls if c]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--chars", type=int, default=None, help="characters of the book (default: all of it)")
    parser.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--threads", type=int, default=0, help="engine threads (0: every core)")
    parser.add_argument("--call-chars", type=int, default=Settings().synth_group_chars, help="characters per engine call")
    parser.add_argument("--concurrency", type=int, default=1, help="engine calls in flight at once")
    args = parser.parse_args()

    import torch

    from bench.engine import SENTENCES
    from bench.machine import describe
    from books.chapters import detect_sections
    from scheduler.planning import split
    from speech.engines.vits import VitsEngine
    from speech.synthesizer import prepare

    engine = VitsEngine.load_default(device=args.device, threads=args.threads, dtype=args.dtype)
    name = torch.cuda.get_device_name(engine.device) if engine.device.type == "cuda" else "cpu"
    engine.synthesize(list(SENTENCES))  # warm-up on other text: kernels, allocator
    engine._phonemizer._word_cache.clear()  # noqa: SLF001 - bench only: phonemize from cold

    text, skip = book_text(args.chars, args.corpus)
    began = time.perf_counter()
    pieces, _ = split(text, "en", sections=detect_sections(text, skip_front_matter=skip))
    chunks = [prepare(piece, "en") for piece in pieces]
    calls = _calls(chunks, args.call_chars)
    planned = time.perf_counter() - began
    sentences = sum(map(len, calls))
    characters = sum(len(piece) for piece in pieces)
    print(
        f"{len(text):,} characters submitted, {characters:,} in {len(pieces)} chunks, {sentences:,} sentences, "
        f"{len(calls)} engine calls of <= {args.call_chars} characters; planning and text preparation "
        f"{planned:.2f} s"
    )
    print(describe(str(engine.device), args.dtype))
    print(f"engine on {name} ({args.dtype}), torch {torch.__version__}, {args.concurrency} call(s) in flight")

    def run(call: list[str]) -> float:
        return sum(chunk.duration for chunk in engine.synthesize(call))

    start = time.perf_counter()
    audio_s = 0.0
    done = 0
    report_every = max(1, len(calls) // 10)
    with concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
        for audio in pool.map(run, calls):
            audio_s += audio
            done += 1
            if done % report_every == 0:
                elapsed = time.perf_counter() - start
                print(
                    f"  {done}/{len(calls)} calls, {audio_s:,.0f} s of audio in {elapsed:.1f} s", flush=True
                )
    wall = time.perf_counter() - start
    print(
        f"synthesis: {audio_s:,.1f} s of audio ({audio_s / 3600:.2f} h) in {wall:.1f} s: "
        f"{audio_s / wall:.0f}x realtime, {characters / wall:,.0f} characters/s"
    )
    print(
        f"RESULT chars={characters} sentences={sentences} audio_s={audio_s:.1f} wall_s={wall:.1f} "
        f"rtf_x={audio_s / wall:.1f} device={args.device}"
    )


if __name__ == "__main__":
    main()
