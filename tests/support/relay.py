"""A TCP relay that can cut a service off and bring it back: a network partition, on loopback.

Tests point lector at the relay instead of the real PostgreSQL or S3 server. ``cut()`` closes the
listener and resets every open connection, so clients see what they would see if the server
went away (refused connects, broken sockets); ``restore()`` listens again on the same port.
The servers themselves are real and stay up: only the path to them is broken.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading


class Relay:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self._listener = self._listen(0)
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._up = threading.Event()
        self._up.set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept_loop, name=f"relay-{self.port}", daemon=True)
        self._thread.start()

    @staticmethod
    def _listen(port: int) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
        sock.settimeout(0.2)
        return sock

    def cut(self) -> None:
        """Refuse new connections and reset the open ones."""
        with self._lock:
            self._up.clear()
            self._listener.close()
            for client, server in self._pairs:
                for sock in (client, server):
                    with contextlib.suppress(OSError):
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                        sock.close()
            self._pairs.clear()

    def restore(self) -> None:
        with self._lock:
            self._listener = self._listen(self.port)
            self._up.set()

    def close(self) -> None:
        self._stop.set()
        self.cut()
        self._thread.join(timeout=5)

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            if not self._up.wait(0.2):
                continue
            listener = self._listener
            try:
                client, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                if not self._up.is_set():
                    client.close()
                    server.close()
                    continue
                self._pairs.append((client, server))
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    def _pump(self, client: socket.socket, server: socket.socket) -> None:
        selector = selectors.DefaultSelector()
        try:
            client.setblocking(False)
            server.setblocking(False)
            selector.register(client, selectors.EVENT_READ, server)
            selector.register(server, selectors.EVENT_READ, client)
            while not self._stop.is_set():
                for key, _ in selector.select(timeout=0.5):
                    source: socket.socket = key.fileobj  # type: ignore[assignment]
                    data = source.recv(65536)
                    if not data:
                        return
                    key.data.setblocking(True)
                    key.data.sendall(data)
                    key.data.setblocking(False)
        except OSError:
            return
        finally:
            selector.close()
            with self._lock:
                with contextlib.suppress(ValueError):
                    self._pairs.remove((client, server))
            for sock in (client, server):
                with contextlib.suppress(OSError):
                    sock.close()
