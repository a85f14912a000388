"""The pair as an operator runs it natively: ``lector model-server`` and ``lector serve
--self-hosted`` as separate processes configured only by the environment."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from tests.integration.selfhosted.conftest import licence
from tests.support.servers import free_port, wait_until

ROOT = Path(__file__).resolve().parents[3]
MODEL_SERVER = "import typer; from lector.commands.model_server import command; typer.run(command)"
SELF_HOSTED = (
    "from lector.commands.selfhosted import serve_selfhosted; from lector.settings import Settings; "
    "raise SystemExit(serve_selfhosted(Settings()))"
)


def _spawn(code: str, args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env, cwd=ROOT, start_new_session=True,
                            stdout=log.open("ab"), stderr=subprocess.STDOUT)


def _stop(proc: subprocess.Popen[bytes]) -> int:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            return proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return -9
    return proc.returncode


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LECTOR_", "ARCANA_")) and k != "MODEL_URL"}
    base.update({"LECTOR_DATA_DIR": str(tmp_path / "data"), "LECTOR_TORCH_THREADS": "1", "LECTOR_DEVICE": "cpu",
                 "LECTOR_ENV": "test", "PYTHONUNBUFFERED": "1"})
    return base


@pytest.mark.slow
def test_native_pair(env: dict[str, str], tmp_path: Path, licence_keys: tuple[bytes, str]) -> None:
    model_port, http_port, ws_port = free_port(), free_port(), free_port()
    keys_file = tmp_path / "keys.txt"
    keys_file.write_text("# hashed at rest\nsha256:" + __import__("hashlib").sha256(b"file-key").hexdigest() + "\n")
    api_env = {**env, "MODEL_URL": f"http://127.0.0.1:{model_port}/invocations", "LECTOR_API_KEYS": "env-key",
               "LECTOR_API_KEYS_FILE": str(keys_file), "LECTOR_LICENSE": licence(licence_keys),
               "LECTOR_LICENSE_PUBLIC_KEY": licence_keys[1], "LECTOR_PORT": str(http_port),
               "LECTOR_WS_PORT": str(ws_port)}
    api = _spawn(SELF_HOSTED, [], api_env, tmp_path / "api.log")
    model: subprocess.Popen[bytes] | None = None
    base = f"http://127.0.0.1:{http_port}"
    try:
        assert wait_until(lambda: httpx.get(base + "/health").status_code == 200, timeout=60), (tmp_path / "api.log").read_text()
        assert httpx.get(base + "/health").json()["modelReachable"] is False  # no model service yet

        model = _spawn(MODEL_SERVER, ["--port", str(model_port), "--host", "127.0.0.1", "--voice", "joe"], env,
                       tmp_path / "model.log")
        assert wait_until(lambda: httpx.get(base + "/health").json()["modelReachable"] is True, timeout=120), (
            (tmp_path / "model.log").read_text())
        health = httpx.get(base + "/health").json()
        assert health["licenseStatus"] == "valid"

        body = {"text": "Running natively.", "speaker": "joe", "modelId": "mist"}
        for key in ("env-key", "file-key"):
            answer = httpx.post(base + "/", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=60)
            assert answer.status_code == 200 and "model_output" in answer.json()["audioContent"]
        audio = httpx.post(base + "/", json=body, headers={"Authorization": "Bearer env-key", "Accept": "audio/pcm"},
                           timeout=60)
        assert audio.status_code == 200 and len(audio.content) > 20000

        uri = f"ws://127.0.0.1:{ws_port}/ws3?speaker=joe&modelId=mist&audioFormat=pcm"
        with connect(uri, additional_headers={"Authorization": "Bearer env-key"}, open_timeout=10) as ws:
            ws.send(json.dumps({"text": "And over the socket."}))
            ws.send(json.dumps({"operation": "eos"}))
            kinds = [json.loads(raw)["type"] for raw in ws]
        assert kinds[-1] == "done" and "chunk" in kinds
    finally:
        api_rc = _stop(api)
        model_rc = _stop(model) if model is not None else 0
    assert api_rc == 0, (tmp_path / "api.log").read_text()[-3000:]
    # uvicorn.run re-raises SIGTERM once it has shut down gracefully
    model_log = (tmp_path / "model.log").read_text()
    assert model_rc in (0, -signal.SIGTERM) and "Application shutdown complete" in model_log, model_log[-3000:]
