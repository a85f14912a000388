"""``lector license keygen|issue|verify`` end to end on files, as the vendor uses it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import typer
from typer.testing import CliRunner

from lector.commands.license import app

runner = CliRunner()
CLEAN = {k: "" for k in os.environ if k.startswith("LECTOR_LICENSE")}


def _app() -> typer.Typer:
    return app


def test_keygen_issue_verify(tmp_path: Path) -> None:
    made = runner.invoke(_app(), ["keygen", "--out", str(tmp_path)], env=CLEAN)
    assert made.exit_code == 0, made.output
    public = made.output.strip()
    private = tmp_path / "license-private.pem"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert (tmp_path / "license-public.txt").read_text().strip() == public
    assert runner.invoke(_app(), ["keygen", "--out", str(tmp_path)], env=CLEAN).exit_code == 1  # no silent overwrite

    out = tmp_path / "acme.lic"
    issued = runner.invoke(_app(), ["issue", "--customer", "ACME", "--key", str(private), "--days", "30",
                                    "--model", "mist", "--model", "arcana", "--out", str(out)], env=CLEAN)
    assert issued.exit_code == 0, issued.output
    checked = runner.invoke(_app(), ["verify", str(out), "--public-key", public], env=CLEAN)
    assert checked.exit_code == 0, checked.output
    assert "valid: ACME" in checked.output and "mist, arcana" in checked.output

    from_env = runner.invoke(_app(), ["verify"], env={**CLEAN, "LECTOR_LICENSE_FILE": str(out),
                                                      "LECTOR_LICENSE_PUBLIC_KEY": public})
    assert from_env.exit_code == 0, from_env.output

    expired = runner.invoke(_app(), ["issue", "--customer", "ACME", "--key", str(private), "--expires", "2020-01-01"],
                            env=CLEAN)
    refused = runner.invoke(_app(), ["verify", expired.output.strip(), "--public-key", public], env=CLEAN)
    assert refused.exit_code == 1 and "expired" in refused.output

    other = runner.invoke(_app(), ["keygen", "--out", str(tmp_path / "other")], env=CLEAN).output.strip()
    forged = runner.invoke(_app(), ["verify", str(out), "--public-key", other], env=CLEAN)
    assert forged.exit_code == 1 and "signature" in forged.output
