"""Streaming latency: time to first byte and total time of ``POST /v1/service-tts``.

Runs the real API (``lector serve`` in a subprocess, on a throwaway PostgreSQL database) and
measures, per format, one- and five-sentence requests alone and with N concurrent streams.
Beside it, in the same run, the engine's own compute time for the first sentence (in-process), and
per request the server's own first-sentence time from its ``Server-Timing`` header: time to first
byte minus that, request by request, is lector's overhead (target: under 15 ms at p50, alone).

    python -m bench.latency [--quick] [--concurrency 16]

With ``--piper-python PY`` (a Python that has ``piper-tts`` and ``flask``, installed apart from
lector: it is an outside reference, not a dependency), Piper's own HTTP server runs on the same
voice file and is timed on the same texts, alone and concurrently. It answers a whole WAV per
request, so its time to first byte is its total time.

Last line: ``RESULT ttfb_p50_ms=... engine_first_ms=... overhead_p50_ms=...`` (plus
``piper_ttfb_p50_ms=...`` with Piper).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psycopg

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
    ttfb = sorted(s[0] for s in samples)
    p95 = ttfb[max(int(len(ttfb) * 0.95) - 1, 0)]
    print(f"{label:24} {text:5} {concurrency:>4} {statistics.median(ttfb):9.1f} {p95:9.1f} "
          f"{statistics.median(s[1] for s in samples):10.1f}")


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
            with ThreadPoolExecutor(concurrency) as pool:
                samples = list(pool.map(lambda _: once(client, ONE), range(concurrency)))
            _row("piper http (wav)", "one", concurrency, samples)
    finally:
        server.terminate()
        server.wait(timeout=30)
    return statistics.median(alone)


def _engine_first_sentence_ms(repeats: int) -> float:
    from speech.engines.vits import VitsEngine
    from speech.synthesizer import prepare

    engine = VitsEngine.load_default()
    sentence = prepare(ONE, "en")
    engine.synthesize(sentence)  # warm-up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        engine.synthesize(sentence)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats and formats")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--piper-python", default=os.environ.get("PIPER_PYTHON"),
                        help="a Python with piper-tts and flask: time Piper's own HTTP server beside lector")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    formats = FORMATS[:3] if args.quick else FORMATS

    db = f"lector_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{db}"')
    url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{db}"
    from store.db import accounts, keys
    from store.db.migrate import upgrade
    from store.db.session import make_engine, make_sessionmaker, session_scope

    upgrade(url)
    engine = make_engine(url)
    with session_scope(make_sessionmaker(engine)) as session:
        account = accounts.create_account(session=session, name="bench", ws_connections_per_minute=10_000)
        key = keys.create_key(session=session, account_id=account.id)[1]
    engine.dispose()

    port = 18765
    env = {**os.environ, "LECTOR_DATABASE_URL": url, "LECTOR_REDIS_URL": "redis://127.0.0.1:6379/15",
           "LECTOR_DATA_DIR": f"/tmp/{db}"}
    server = subprocess.Popen([str(Path(sys.executable).with_name("lector")), "serve", "--port", str(port)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    api = f"http://127.0.0.1:{port}/v1/service-tts"
    try:
        with httpx.Client(timeout=300) as client:
            for _ in range(120):
                try:
                    client.get(f"http://127.0.0.1:{port}/data/voices/all-v2.json")
                    break
                except httpx.HTTPError:
                    time.sleep(0.5)
            _request(client, api, key, ONE, "audio/L16")  # loads the voice
            print(f"{'format':24} {'text':5} {'conc':>4} {'ttfb p50':>9} {'ttfb p95':>9} {'total p50':>10}")
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
                    with ThreadPoolExecutor(args.concurrency) as pool:
                        samples = list(pool.map(lambda _, t=text, a=accept: _request(client, api, key, t, a),
                                                range(args.concurrency)))
                    _row(accept, label, args.concurrency, samples)
    finally:
        server.terminate()
        server.wait(timeout=30)
        with psycopg.connect(ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
    engine_ms = _engine_first_sentence_ms(repeats)
    p50 = statistics.median(alone_ttfb)
    overhead = statistics.median(t - s for t, s in zip(alone_ttfb, alone_synth, strict=True))
    print(f"engine compute, first sentence (in-process, same text): {engine_ms:.1f} ms")
    print(f"server's first-sentence time (Server-Timing synth, p50): {statistics.median(alone_synth):.1f} ms")
    piper = f" piper_ttfb_p50_ms={_piper(args.piper_python, repeats, args.concurrency):.1f}" if args.piper_python else ""
    print(f"RESULT ttfb_p50_ms={p50:.1f} engine_first_ms={engine_ms:.1f} overhead_p50_ms={overhead:.1f}{piper}")


if __name__ == "__main__":
    main()
