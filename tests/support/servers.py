"""Real uvicorn servers on loopback, in threads, for tests that need an app over real sockets."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import uvicorn


def free_port() -> int:
    """A loopback port nothing listens on now (every test server and fixture takes theirs here)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _reserve(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


class ServerThread:
    """``uvicorn.Server`` for ``app`` on 127.0.0.1:``port`` in a daemon thread (its own loop).

    The port stays bound (not listening) while the server is down, so a client probing a "down"
    service gets a refusal; a free port left unbound could be picked as the client's own source
    port, and TCP then connects the client to itself.
    """

    def __init__(self, app: Any, port: int | None = None) -> None:
        self.app = app
        self._socket: socket.socket | None = _reserve(port or 0)
        self.port = int(self._socket.getsockname()[1])
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> ServerThread:
        config = uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning",
                                ws="websockets", lifespan="on")
        self.server = uvicorn.Server(config)
        sock = self._socket or _reserve(self.port)
        self._socket = None
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]},
                                       name=f"uvicorn-{self.port}", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"server on port {self.port} did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout=15)
        self.server = self.thread = None
        if self._socket is None:
            self._socket = _reserve(self.port)  # keep the port while down (see the class docstring)

    def close(self) -> None:
        """Stop and give the port back."""
        self.stop()
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def wait_until(predicate: Callable[[], bool], timeout: float = 30.0, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if predicate():
                return True
        time.sleep(interval)
    return False


def ready(url: str, path: str = "/readyz") -> bool:
    try:
        return httpx.get(url + path, timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


def api_up(base_url: str, process: Any, timeout: float) -> bool:
    """Wait until a lector API answers (its voice list is served once the app has started) or
    its ``process`` (a ``subprocess.Popen``) exits; True when it answered."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{base_url}/data/voices/all-v2.json", timeout=2).status_code == 200:
                return True
        time.sleep(0.3)
    return False
