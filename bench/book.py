"""Book benchmark: N characters of Pride and Prejudice to MP3 through the real job pipeline.

    python -m bench.book [--chars N] [--format mp3] [--voice joe] [--model mistv3]
    python -m bench.book --synthetic-hours 10      # assembly only: memory and speed on a long book
    python -m bench.book --embedded-postgres       # on a host with no PostgreSQL (a lent GPU)
    python -m bench.book --synthetic-hours 10 --threads   # assembly on threads, to compare

The real run goes planning -> synthesis -> assembly in this process with the scheduler's own
functions (``plan_job``, ``synthesize_batch``, ``assemble_job``), on a throwaway PostgreSQL
database (created on the configured server, dropped at the end) and a local object store in a
temporary directory; no Celery, so what is measured is the pipeline, not the queue. The text is
the corpus from its first chapter (``--chars`` of it, cut at a sentence end), or the whole file
with ``skipFrontMatter`` when ``--chars`` is not given.

The engine's own time is the time spent inside ``Synthesizer.synthesize`` during that same run
(the same chunks, the same calls, the same warm caches); the overhead is wall time over it. The
engine is loaded and warmed before the clock starts.

``--voice`` (and ``--model``, default: the voice's own in the catalog) picks the voice: a Kokoro
voice is ``--voice ivy``. After each book, the engine alone speaks the same sentences, as
``bench.engine`` times it ("lector, batched": every sentence in one ``synthesize`` call, on the
same cores, in this same process, right after the book so that a shared host's drifting load
hits both alike): ``overhead_vs_engine_off``/``_on`` is the book's wall time over that,
the pipeline's whole cost (planning, engine calls of ``LECTOR_SYNTH_GROUP_CHARS``, the object
store, PostgreSQL, assembly), target at most 1.10.

The book runs with assembly ahead off (assembled after the last chunk) and on (``scheduler.progressive_assembly``
follows synthesis on a thread, as a cpu worker would on the ``assemble_ahead`` messages that every
batch but the last sends; the last one's ``assemble`` encodes the last chapter), in the
loudness scope ``--loudness-scope`` (default ``chapter``: in ``book`` scope nothing is assembled
ahead), ``--rounds`` times each, alternating. The last line is ``RESULT ... overhead_off=...
overhead_on=...``; the overhead with assembly ahead is also given over the engine time of the run
without it (``overhead_on_vs_engine_off``), since assembly beside the engine can slow the engine.

``--synthetic-hours`` writes that many hours of synthetic chunks (40 s each, speech-like
modulated noise with word timings) straight to the object store and times ``assembly.render``
plus the upload alone, printing the peak resident memory of the process (no model is loaded).
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lector.settings import Settings
from store.db.session import scoped_sessions

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "pride_and_prejudice.txt"  # shipped, public domain


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _children_rss_mb() -> list[float]:
    """The assembly pool's processes, which the parent's peak RSS does not count."""
    try:
        import psutil
    except ImportError:
        return []
    return [c.memory_info().rss / 1e6 for c in psutil.Process().children(recursive=True)]


def book_text(chars: int | None, corpus: Path = CORPUS) -> tuple[str, bool]:
    """The corpus from its first chapter, cut at a sentence end after ``chars`` characters, or the
    whole file; the flag says whether front matter must be skipped (the whole file has it)."""
    book = corpus.read_text(encoding="utf-8")
    if chars is None:
        return book, True
    # The first chapter's heading, not its line in the table of contents before it.
    start = book.rindex("Chapter 1\n", 0, book.index("It is a truth universally acknowledged"))
    piece = book[start : start + chars]
    end = max(piece.rfind("."), piece.rfind("”"), piece.rfind("?"), piece.rfind("!"))
    return piece[: end + 1], False


class _TimedSynthesizer:
    """The synthesizer, with the seconds spent inside ``synthesize`` added up."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.seconds = 0.0
        self.calls: list[list[str]] = []  # the sentences of each call, for the engine-alone run
        self._lock = threading.Lock()

    def synthesize(self, voice: Any, sentences: Any, controls: Any = None) -> Any:
        began = time.perf_counter()
        try:
            return self._inner.synthesize(voice, sentences, controls)
        finally:
            with self._lock:
                self.seconds += time.perf_counter() - began
                self.calls.append(list(sentences))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextmanager
def _database(settings: Settings) -> Iterator[str]:
    import psycopg
    from psycopg import sql
    from sqlalchemy.engine import make_url

    from lector.wiring import resolved_database_url
    from store.db.migrate import upgrade

    server = resolved_database_url(settings)
    parsed = make_url(server)
    host = parsed.host or parsed.query.get("host") or "127.0.0.1"  # a unix socket (pgserver) comes as ?host=
    admin = (
        f"host={host} port={parsed.port or 5432} user={parsed.username or 'postgres'}"
        + (f" password={parsed.password}" if parsed.password else "")
        + " dbname=postgres"
    )
    name = f"lector_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = parsed.set(database=name).render_as_string(hide_password=False)
    try:
        upgrade(url)
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@dataclass(frozen=True, slots=True)
class _Run:
    wall: float
    plan: float
    synthesis: float
    assembly: float
    engine: float
    chars: int
    chunks: int
    audio_s: float
    size: int
    status: str

    @property
    def overhead(self) -> float:
        return self.wall / self.engine


class _AheadWorker:
    """What a cpu worker does with ``assemble_ahead`` messages: one at a time, in the background;
    a message sent while one waits adds nothing (the waiting one will see the newer chunks)."""

    def __init__(self, run: Any) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self._run = run
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bench-ahead")
        self._waiting: Any = None

    def send(self) -> None:
        if self._waiting is None or self._waiting.running() or self._waiting.done():
            self._waiting = self._pool.submit(self._run)

    def drain(self) -> None:
        self._pool.shutdown(wait=True)
        if self._waiting is not None:
            self._waiting.result()  # an error in the background is an error of the run


def _one_book(
    settings: Settings, synthesizer: _TimedSynthesizer, catalog: Any, text: str, skip: bool, fmt: str,
    scope: str, workers: int, *, ahead: bool, extra: dict[str, Any] | None = None, speaker: str = "joe",
) -> _Run:
    from scheduler import assembly, intake, planning, progressive_assembly, synthesis
    from store.db import accounts
    from store.db import jobs as job_repo
    from store.db.session import make_engine, make_sessionmaker
    from store.objects.local import LocalObjectStore

    synthesizer.seconds = 0.0
    synthesizer.calls.clear()
    with _database(settings) as url, tempfile.TemporaryDirectory(prefix="lector-bench-") as tmp:
        engine = make_engine(url)
        sessions = scoped_sessions(make_sessionmaker(engine))
        objects = LocalObjectStore(Path(tmp) / "objects")
        with sessions() as session:
            account = accounts.create_account(session=session, name=f"bench-{uuid.uuid4().hex[:8]}")
            spec = intake.JobSpec(
                text=text, speaker=speaker, lang="en", format=fmt, skip_front_matter=skip,
                title="Pride and Prejudice", author="Jane Austen", loudness_scope=None if scope == "book" else scope,
                **{"model_id": "mistv3", **(extra or {})},  # bench.cast: a cast, and the model of its voices
            )
            job, _ = intake.submit_job(session=session, objects=objects, account_id=account.id, spec=spec)
            job_id = job.id
        follower = _AheadWorker(lambda: progressive_assembly.advance_job(
            sessions=sessions, objects=objects, job_id=job_id, workers=workers,
            out_rate=assembly.DEFAULT_RATE, target_lufs=assembly.TARGET_LUFS,
        ))

        began = time.perf_counter()
        with sessions() as session:
            todo = planning.plan_job(
                session=session, objects=objects, job_id=job_id, batch_chars=settings.job_batch_chars, window=1 << 30
            )
        planned = time.perf_counter()
        for batch in todo:
            result = synthesis.synthesize_batch(
                sessions=sessions, objects=objects, synthesizer=synthesizer,
                catalog=catalog, job_id=job_id, indices=batch.indices, group_chars=settings.synth_group_chars,
            )
            if ahead and not result.complete:  # as lifecycle.after_batch: the last batch sends assemble
                follower.send()
        synthesized = time.perf_counter()
        follower.drain()  # a step ahead still running: assemble would wait for it (the job's assembly lock)
        assert assembly.assemble_job(sessions=sessions, objects=objects, job_id=job_id, workers=workers)
        done = time.perf_counter()
        with sessions() as session:
            job = job_repo.get_job(session=session, job_id=job_id, account_id=None)
            billed = sum(c.characters for c in job_repo.list_chunks(session=session, job_id=job_id))
            assert job.result_key is not None, job.status  # assemble_job said it succeeded
            run = _Run(
                wall=done - began, plan=planned - began, synthesis=synthesized - planned, assembly=done - synthesized,
                engine=synthesizer.seconds, chars=billed, chunks=job.chunks_total,
                audio_s=float(job.audio_seconds or 0.0), size=objects._path(job.result_key).stat().st_size,  # noqa: SLF001
                status=job.status,
            )
        engine.dispose()
    return run


def _engine_alone(synthesizer: _TimedSynthesizer, voice: Any, calls: list[list[str]], model: str) -> float:
    """Seconds the engine takes for the book's sentences in one call (``bench.engine``'s
    "lector, batched"), outside the pipeline."""
    from speech.synthesizer import Controls

    sentences = [s for call in calls for s in call]
    began = time.perf_counter()
    synthesizer.synthesize(voice, sentences, Controls())
    return time.perf_counter() - began


def run_book(
    settings: Settings, chars: int | None, fmt: str, corpus: Path = CORPUS, scope: str = "chapter", count: int = 1,
    speaker: str = "joe", model: str | None = None,
) -> None:
    """The book with assembly after synthesis (ahead off) and alongside it (on), ``count`` times
    each in one process, then the engine alone on its sentences; the run with the median overhead
    of each is printed."""
    from books import parallel
    from lector.wiring import build_catalog, build_synthesizer
    from speech.synthesizer import Controls

    text, skip = book_text(chars, corpus)
    catalog = build_catalog(settings)
    synthesizer = _TimedSynthesizer(build_synthesizer(settings))
    model = model or ("coda" if speaker in {v.speaker for v in catalog.voices_of("coda")} else "mistv3")
    voice = catalog.resolve(model, speaker, "en")
    engine_device = getattr(synthesizer.engine(voice), "device", "cpu")
    synthesizer.synthesize(voice, ["Warming up the voice before the clock starts."], Controls())
    workers = settings.assembly_workers or parallel.default_workers()
    parallel.warm(workers)  # a cpu worker keeps its pool from one book to the next
    rss_before = _rss_mb()
    rounds: dict[bool, list[_Run]] = {False: [], True: []}
    alone_after: dict[bool, list[float]] = {False: [], True: []}  # the engine alone, right after each book
    for n in range(max(1, count)):  # off, on, on, off, ...: a shared machine's load drifts
        for ahead in (False, True) if n % 2 == 0 else (True, False):
            rounds[ahead].append(
                _one_book(settings, synthesizer, catalog, text, skip, fmt, scope, workers, ahead=ahead,
                          speaker=speaker, extra={"model_id": model})
            )
            calls = list(synthesizer.calls)
            alone_after[ahead].append(_engine_alone(synthesizer, voice, calls, model))
    vs_engine = {
        ahead: sorted(r.wall / a for r, a in zip(rounds[ahead], alone_after[ahead], strict=True))[len(rounds[ahead]) // 2]
        for ahead in rounds
    }
    alone = min(min(times) for times in alone_after.values())
    runs = {ahead: sorted(done, key=lambda r: r.overhead)[len(done) // 2] for ahead, done in rounds.items()}

    import torch

    from bench.machine import describe

    print(describe(str(engine_device), settings.engine_dtype))
    first = runs[False]
    print(f"voice {speaker} ({model}, {type(synthesizer.engine(voice)).__name__}, torch threads "
          f"{torch.get_num_threads()}); device {engine_device}; format {fmt}; loudness scope {scope}; {settings.job_batch_chars} characters a "
          f"task, {settings.synth_group_chars} an engine call; assembly on {workers} "
          f"{'processes' if parallel.uses_processes(workers) else 'threads'}")
    print(f"characters: {len(text):,} submitted, {first.chars:,} billed (speech.billing), in {first.chunks} chunks")
    print(f"audio: {first.audio_s:.1f} s ({first.audio_s / 3600:.2f} h); file {first.size / 1e6:.1f} MB")
    for ahead, run in runs.items():
        each = " ".join(f"{r.overhead:.3f}" for r in rounds[ahead])
        print(
            f"assembly ahead {'on ' if ahead else 'off'}: job {run.status}; wall {run.wall:.1f} s (plan {run.plan:.2f} s, "
            f"synthesis {run.synthesis:.1f} s, after the last chunk {run.assembly:.1f} s); engine {run.engine:.1f} s; "
            f"overhead (wall / engine) {run.overhead:.3f} (median of {each}); realtime factor {run.audio_s / run.wall:.1f}x"
        )
    on, off = runs[True], runs[False]
    sentences = sum(map(len, calls))
    print(f"engine alone, the same {sentences} sentences in one call (bench.engine's batched run), right after "
          f"each book: off {' '.join(f'{a:.1f}' for a in alone_after[False])} s, on "
          f"{' '.join(f'{a:.1f}' for a in alone_after[True])} s; the books' {len(calls)} engine calls took "
          f"{off.engine:.1f} s (off) and {on.engine:.1f} s (on); book wall over the engine alone after it "
          f"(median): off {vs_engine[False]:.3f}, on {vs_engine[True]:.3f}")
    print(f"peak RSS {_rss_mb():.0f} MB (before the books {rss_before:.0f} MB)")
    print(
        f"RESULT chars={off.chars} audio_s={off.audio_s:.1f} scope={scope} overhead_off={off.overhead:.3f} "
        f"overhead_on={on.overhead:.3f} tail_off_s={off.assembly:.1f} tail_on_s={on.assembly:.1f} "
        f"wall_on_over_off={on.wall / off.wall:.3f} overhead_on_vs_engine_off={on.wall / off.engine:.3f} "
        f"voice={speaker} engine_alone_s={alone:.1f} overhead_vs_engine_off={vs_engine[False]:.3f} "
        f"overhead_vs_engine_on={vs_engine[True]:.3f}"
    )


def _synthetic_chunk(rng: np.random.Generator, rate: int, seconds: float) -> np.ndarray:
    n = int(rate * seconds)
    t = np.arange(n, dtype=np.float32) / rate
    envelope = 0.5 + 0.5 * np.sin(2 * np.pi * 3.0 * t) ** 2  # syllable-rate amplitude
    noise = rng.standard_normal(n).astype(np.float32) * 0.08
    return (noise * envelope + 0.1 * np.sin(2 * np.pi * 140.0 * t) * envelope).astype(np.float32)


def run_synthetic(hours: float, fmt: str) -> None:
    from books import parallel
    from books.chunks import chunk_audio_key, chunk_meta_key
    from books.layout import ChapterMark, Layout
    from scheduler import assembly
    from scheduler.job_params import JobParams
    from scheduler.objects import plan_key
    from store.objects.local import LocalObjectStore

    rate, seconds = 22050, 40.0
    count = int(hours * 3600 / (seconds + 0.5))
    rng = np.random.default_rng(7)
    job_id = uuid.uuid4()
    with tempfile.TemporaryDirectory(prefix="lector-bench-") as tmp:
        objects = LocalObjectStore(Path(tmp) / "objects")
        base = _synthetic_chunk(rng, rate, seconds)
        words = [{"word": f"word{k}", "start": k * 0.4, "end": k * 0.4 + 0.3} for k in range(int(seconds / 0.4) - 1)]
        text = " ".join(f"word{k}" for k in range(len(words))) + "."
        for index in range(count):
            pcm = (np.roll(base, index * 997) * 32767).astype("<i2")
            objects.put_bytes(chunk_audio_key(job_id, index), pcm.tobytes())
            meta = {"sample_rate": rate, "duration_s": seconds, "words": words, "text": text}
            objects.put_bytes(chunk_meta_key(job_id, index), json.dumps(meta).encode())
        pauses = [0] + [2000 if i % 25 == 0 else 500 for i in range(1, count)]
        chapters = [ChapterMark(f"Chapter {i // 25 + 1}", i) for i in range(0, count, 25)]
        objects.put_bytes(plan_key(job_id), Layout(pauses, chapters).to_json())
        del base
        workers = parallel.default_workers()
        parallel.warm(workers)
        rss_before = _rss_mb()
        began = time.perf_counter()
        work = Path(tmp) / "work"
        work.mkdir()
        rendered = assembly.render(
            objects, job_id, JobParams(speaker="joe", model_id="mistv3", lang="en", format=fmt, normalize=False),
            work, workers=workers,
        )
        rendered_s = time.perf_counter() - began
        objects.put_file(f"jobs/{job_id}/audio.{fmt}", rendered.audio)
        wall = time.perf_counter() - began
        size = rendered.audio.stat().st_size
    peak = _rss_mb()
    children = _children_rss_mb()
    from bench.machine import describe

    print(describe("cpu", "n/a (assembly only)"))
    print(f"synthetic book: {count} chunks of {seconds:.0f} s at {rate} Hz, {len(chapters)} chapters, format {fmt}, "
          f"{workers} assembly {'processes' if parallel.uses_processes(workers) else 'threads'}")
    print(f"audio {rendered.duration_s / 3600:.2f} h; file {size / 1e6:.0f} MB; render {rendered_s:.1f} s, "
          f"with upload {wall:.1f} s ({rendered.duration_s / wall:.0f}x realtime)")
    print(f"peak RSS {peak:.0f} MB (before assembly {rss_before:.0f} MB)"
          + (f"; each assembly process at most {max(children):.0f} MB now" if children else ""))
    print(f"RESULT synthetic_hours={rendered.duration_s / 3600:.2f} wall_s={wall:.1f} peak_rss_mb={peak:.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=None, help="characters of the book (default: all of it)")
    parser.add_argument("--format", default="mp3", choices=["mp3", "opus", "wav", "flac", "m4b"])
    parser.add_argument("--loudness-scope", default="chapter", choices=["chapter", "book"],
                        help="chapter: assembled while synthesis runs (ahead on) or after (off); book: one gain")
    parser.add_argument("--rounds", type=int, default=1, help="books with assembly ahead off and on, each")
    parser.add_argument("--synthetic-hours", type=float, default=None, help="assembly only, on synthetic chunks")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the book's text file")
    parser.add_argument("--voice", default="joe", help="the speaker (a Kokoro voice: ivy)")
    parser.add_argument("--model", default=None, help="the voice's model (default: coda for a Kokoro voice, else mistv3)")
    parser.add_argument("--embedded-postgres", action="store_true",
                        help="run PostgreSQL here with pgserver (a GPU host has none)")
    parser.add_argument("--threads", action="store_true",
                        help="assemble on threads instead of worker processes (to compare)")
    args = parser.parse_args()
    if args.threads:
        from books import parallel

        parallel.THREADS_UP_TO = 1 << 20  # type: ignore[misc]  # the bench's switch; Final to the service
    settings = Settings()
    if args.embedded_postgres:
        from pgserver.postgres_server import get_server  # the package does not re-export it

        server = get_server(tempfile.mkdtemp(prefix="lector-bench-pg-"), cleanup_mode="stop")
        url = server.get_uri().replace("postgresql://", "postgresql+psycopg://", 1)
        settings = settings.model_copy(update={"database_url": url})
    if args.synthetic_hours:
        run_synthetic(args.synthetic_hours, args.format)
    else:
        run_book(settings, args.chars, args.format, args.corpus, args.loudness_scope, args.rounds, args.voice, args.model)


if __name__ == "__main__":
    main()
