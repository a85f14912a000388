"""``lector jobs``: submit a Markdown book as an upload, wait with the progress bar, list, get,
download the audio and the subtitles, against the real stack (typer's CliRunner, real HTTP)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import av
import pytest
from typer.testing import CliRunner

from lector.commands import jobs
from tests.support.corpus import CORPUS

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BOOK = "# Short\n\n## One\n\nThe first part is here.\n\n## Two\n\nAnd the second part follows it.\n"


def test_submit_wait_list_get_and_download(stack, api_key: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    book = tmp_path / "short.md"
    book.write_text(BOOK)
    runner = CliRunner()
    common = ["--url", stack.api_url, "--key", api_key]
    submitted = runner.invoke(jobs.app, ["submit", str(book), "--format", "m4b", "--title", "Short", "--skip-front-matter", "--wait", *common])
    assert submitted.exit_code == 0, submitted.output
    job_id = submitted.stdout.strip().splitlines()[-1]
    # The progress display ends on the final state: status, chunks done of total, realtime factor.
    shown = re.search(r"succeeded .* (\d+)/(\d+) chunks ([\d.]+)x realtime", submitted.output)
    assert shown is not None and shown[1] == shown[2] != "0", submitted.output
    assert float(shown[3]) > 0

    got = runner.invoke(jobs.app, ["get", job_id, *common])
    assert got.exit_code == 0, got.output
    job = json.loads(got.stdout)
    assert (job["status"], job["format"], job["title"]) == ("succeeded", "m4b", "Short")

    listed = runner.invoke(jobs.app, ["list", *common])
    assert listed.exit_code == 0 and job_id[:8] in listed.stdout

    audio = tmp_path / "short.m4b"
    assert runner.invoke(jobs.app, ["download", job_id, str(audio), *common]).exit_code == 0
    with av.open(io.BytesIO(audio.read_bytes())) as container:
        assert [c["metadata"]["title"] for c in container.chapters()] == ["One", "Two"]
    srt = tmp_path / "short.srt"
    assert runner.invoke(jobs.app, ["download", job_id, str(srt), "--subtitles", "srt", *common]).exit_code == 0
    assert "The first part is here." in srt.read_text()


def test_cancel_from_the_command_line(stack, api_key: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = CORPUS.read_text(encoding="utf-8")
    start = text.index("It is a truth universally acknowledged")
    book = tmp_path / "long.txt"
    book.write_text(text[start : start + 30000])
    runner = CliRunner()
    common = ["--url", stack.api_url, "--key", api_key]
    submitted = runner.invoke(jobs.app, ["submit", str(book), "--format", "mp3", *common])
    assert submitted.exit_code == 0, submitted.output
    job_id = submitted.stdout.strip().splitlines()[-1]
    canceled = runner.invoke(jobs.app, ["cancel", job_id, *common])
    assert canceled.exit_code == 0, canceled.output
    assert canceled.output.strip() == "canceled"
    job = json.loads(runner.invoke(jobs.app, ["get", job_id, *common]).stdout)
    assert job["status"] == "canceled"
    assert job["progress"]["chunksDone"] < max(job["progress"]["chunksTotal"], 1)
