"""Keeping a set of child processes alive, and stopping them all, every time.

``lector run`` (and ``lector worker --per-gpu``) start their children in their own sessions, so
a terminal's Ctrl-C or ``kill -TERM`` on the supervisor's process group reaches only the
supervisor; it is the one that stops the children. That makes stopping its job alone:

- A child that exits while the supervisor is not stopping is restarted, after a backoff that
  doubles with each restart in the last minute (``backoff_s`` up to ``max_backoff_s``). A child
  restarted ``max_restarts_per_minute`` times within a minute is crash-looping: the supervisor
  logs it and stops everything (exit code 1) rather than spin. The other children keep running
  through a restart, so the API answers while a worker comes back. ``on_restart`` is told the
  child's name after each restart (``lector run`` uses it to resume the jobs of a dead worker).
- The first SIGTERM/SIGINT/SIGHUP starts the stop; later ones (``make`` forwards a second Ctrl-C,
  an impatient operator) are logged and change nothing, so a stop in progress is never cut
  short and no child is left behind. A signal during a spawn is acted on once the child is
  recorded, so a child is never started without being stopped. (Not by blocking the signals
  around ``Popen``: a child inherits its parent's signal mask across exec, and every child then
  ignored SIGTERM and was SIGKILLed after ``stop_timeout_s``, with no graceful shutdown.)
- Stopping sends SIGTERM to each child's process group, waits up to ``stop_timeout_s``, then
  SIGKILLs the groups still there.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import FrameType

log = logging.getLogger("lector.supervisor")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
WINDOW_S = 60.0


@dataclass(slots=True)
class _Child:
    name: str
    argv: list[str]
    env: dict[str, str]
    proc: subprocess.Popen[bytes] | None = None
    restarts: deque[float] = field(default_factory=deque)  # monotonic times, the last minute's
    restart_at: float | None = None  # a restart is due then (backing off)


class Supervisor:
    """Runs ``children`` (name -> (argv, environment)) until told to stop or one crash-loops."""

    def __init__(
        self,
        children: Mapping[str, tuple[list[str], Mapping[str, str]]],
        *,
        max_restarts_per_minute: int = 5,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        stop_timeout_s: float = 15.0,
        poll_s: float = 0.2,
        on_restart: Callable[[str], None] | None = None,
    ) -> None:
        self._children = {name: _Child(name, list(argv), dict(env)) for name, (argv, env) in children.items()}
        self.max_restarts_per_minute = max_restarts_per_minute
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.stop_timeout_s = stop_timeout_s
        self.poll_s = poll_s
        self.on_restart = on_restart
        self.stopping = False
        self._watching = False
        self._stopped = False
        self._spawning = False
        self._interrupted = False  # a stop signal came during a spawn, before watching

    # --- signals ---------------------------------------------------------------------------------

    def install_signal_handlers(self) -> None:
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.stopping:
            log.info("%s received while stopping; the stop goes on", signal.Signals(signum).name)
            return
        self.stopping = True
        log.info("%s received; stopping", signal.Signals(signum).name)
        if self._watching:
            return
        if self._spawning:
            self._interrupted = True  # raised once the child is recorded (_spawn)
            return
        raise KeyboardInterrupt  # still starting up (migrations, backends): unwind to the finally

    # --- running ---------------------------------------------------------------------------------

    def add(self, name: str, argv: list[str], env: Mapping[str, str]) -> None:
        """A child to start with the others (``lector run`` knows its children only after its
        backends are up, while its signal handlers must hold from the first moment)."""
        self._children[name] = _Child(name, list(argv), dict(env))

    def _spawn(self, child: _Child) -> None:
        self._spawning = True
        try:
            child.proc = subprocess.Popen(child.argv, env={**os.environ, **child.env}, start_new_session=True)
        finally:
            self._spawning = False
        log.info("started %s (pid %d)", child.name, child.proc.pid)
        if self._interrupted:
            self._interrupted = False
            raise KeyboardInterrupt  # the signal that came during the spawn: the child is recorded

    def start(self) -> None:
        for child in self._children.values():
            if self.stopping:
                return
            self._spawn(child)

    def watch(self) -> int:
        """Restart children that die until a stop is asked (0) or one crash-loops (1)."""
        self._watching = True
        try:
            while not self.stopping:
                now = time.monotonic()
                for child in self._children.values():
                    if self.stopping:
                        break
                    if child.restart_at is not None:
                        if now >= child.restart_at:
                            child.restart_at = None
                            self._spawn(child)
                            if self.on_restart is not None:
                                self._notify(child.name)
                        continue
                    code = child.proc.poll() if child.proc is not None else None
                    if code is None:
                        continue
                    if not self._schedule_restart(child, code, now):
                        return 1
                time.sleep(self.poll_s)
            return 0
        finally:
            self._watching = False

    def _schedule_restart(self, child: _Child, code: int, now: float) -> bool:
        while child.restarts and now - child.restarts[0] > WINDOW_S:
            child.restarts.popleft()
        if len(child.restarts) >= self.max_restarts_per_minute:
            log.error("%s exited with %s, its %d. restart within a minute; it is crash-looping: stopping",
                      child.name, code, len(child.restarts) + 1)
            return False
        child.restarts.append(now)
        delay = min(self.max_backoff_s, self.backoff_s * 2 ** (len(child.restarts) - 1))
        log.warning("%s exited with %s; restarting in %.1f s (restart %d in the last minute)",
                    child.name, code, delay, len(child.restarts))
        child.restart_at = now + delay
        return True

    def _notify(self, name: str) -> None:
        assert self.on_restart is not None
        try:
            self.on_restart(name)
        except Exception:  # noqa: BLE001 - a failed hook must not take the supervisor down
            log.exception("after restarting %s", name)

    # --- stopping --------------------------------------------------------------------------------

    def stop(self) -> None:
        """SIGTERM every child's group, wait, SIGKILL what is left. Safe to call again."""
        self.stopping = True
        if self._stopped:
            return
        running = [c.proc for c in self._children.values() if c.proc is not None]
        for proc in running:
            if proc.poll() is None:
                _signal_group(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout_s
        for proc in running:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("pid %d did not stop in %.0f s: killing its group", proc.pid, self.stop_timeout_s)
            _signal_group(proc.pid, signal.SIGKILL)  # also whatever the child left in its group
            proc.wait()
        self._stopped = True


def _signal_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def supervise(
    children: Mapping[str, tuple[list[str], Mapping[str, str]]],
    *,
    on_restart: Callable[[str], None] | None = None,
    **options: float,
) -> int:
    """Start ``children``, keep them alive, stop them all on a signal; the exit code."""
    supervisor = Supervisor(children, on_restart=on_restart, **options)  # type: ignore[arg-type]
    supervisor.install_signal_handlers()
    try:
        supervisor.start()
        return supervisor.watch()
    except KeyboardInterrupt:
        return 0
    finally:
        supervisor.stop()
