"""``lector lexicons`` and ``lector jobs submit --lexicon`` against the real stack."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lector.commands import jobs, lexicons
from tests.fixtures.stack import make_key

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PLS = ('<?xml version="1.0" encoding="UTF-8"?>\n<lexicon version="1.0" '
       'xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">\n'
       "<lexeme><grapheme>{g}</grapheme><alias>{a}</alias></lexeme>\n</lexicon>")


def test_put_list_get_delete_and_a_job_that_names_the_lexicon(stack, pg_url: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    key = make_key(pg_url, "lexcli")
    common = ["--url", stack.api_url, "--key", key]
    runner = CliRunner()
    document = tmp_path / "names.pls"
    document.write_text(PLS.format(g="Nguyen", a="Win"))
    put = runner.invoke(lexicons.app, ["put", "names", str(document), "--default", *common])
    assert put.exit_code == 0, put.output
    assert put.stdout.strip() == "names version 1: 1 lexemes (en)"
    document.write_text(PLS.format(g="Nguyen", a="Nwin"))
    assert runner.invoke(lexicons.app, ["put", "names", str(document), *common]).stdout.strip().startswith("names version 2")
    listed = runner.invoke(lexicons.app, ["list", *common])
    assert listed.exit_code == 0 and "names" in listed.stdout and "yes" in listed.stdout  # still the default
    older = runner.invoke(lexicons.app, ["get", "names", "--version", "1", *common])
    assert older.exit_code == 0 and "<alias>Win</alias>" in older.stdout

    book = tmp_path / "book.txt"
    book.write_text("Mr Nguyen reads.")
    submitted = runner.invoke(jobs.app, ["submit", str(book), "--lexicon", "names", "--wait", *common])
    assert submitted.exit_code == 0, submitted.output
    job_id = submitted.stdout.strip().splitlines()[-1]
    job = json.loads(runner.invoke(jobs.app, ["get", job_id, *common]).stdout)
    assert (job["status"], job["lexicons"]) == ("succeeded", [{"name": "names", "version": 2}])

    assert runner.invoke(lexicons.app, ["delete", "names", *common]).exit_code == 0
    missing = runner.invoke(lexicons.app, ["get", "names", *common])
    assert missing.exit_code == 1 and "404" in missing.output
    broken = tmp_path / "broken.pls"
    broken.write_text(PLS.format(g="", a="x"))
    refused = runner.invoke(lexicons.app, ["put", "broken", str(broken), *common])
    assert refused.exit_code == 1 and "<grapheme> is empty" in refused.output
