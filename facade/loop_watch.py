"""Names what blocks the API's event loop.

One event loop serves every stream, WebSocket and probe of an API process, so anything that
holds it (a synchronous call, a long pure-Python step, the GIL kept by a thread) delays all of
them at once, and the request that suffers is rarely the one to blame. uvicorn runs on uvloop,
where asyncio's debug mode (slow-callback warnings) does not apply, so a thread of its own
watches the loop: it asks the loop to answer every ``interval_s``; when no answer comes within
``threshold_s`` it takes the loop thread's stack at that moment, and when the loop answers it
logs one warning with how long the loop stalled and where it was. The count goes to
``lector_event_loop_stalls_total``.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
import traceback

from prometheus_client import Counter

log = logging.getLogger("lector.facade.loop")

STALLS = Counter("lector_event_loop_stalls_total", "times the API's event loop did not answer within the threshold")
# Frames kept from the loop thread's stack: the blocking call and what led to it.
STACK_FRAMES = 12


class LoopWatch:
    """Started on the loop's own thread (the lifespan), stopped at shutdown."""

    def __init__(self, loop: asyncio.AbstractEventLoop, threshold_s: float, interval_s: float = 0.02) -> None:
        self._loop = loop
        self._threshold_s = threshold_s
        self._interval_s = interval_s
        self._loop_thread = threading.get_ident()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lector-loop-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            answered = threading.Event()
            asked = time.monotonic()
            try:
                self._loop.call_soon_threadsafe(answered.set)
            except RuntimeError:  # the loop closed under us: shutdown
                return
            if answered.wait(self._threshold_s):
                continue
            stack = self._loop_stack()
            while not answered.wait(0.5):
                if self._stop.is_set():
                    return
            stalled_ms = (time.monotonic() - asked) * 1000
            STALLS.inc()
            log.warning("event loop stalled %.0f ms; its thread was at:\n%s", stalled_ms, stack)

    def _loop_stack(self) -> str:
        frame = sys._current_frames().get(self._loop_thread)
        if frame is None:
            return "(no frame)"
        return "".join(traceback.format_stack(frame)[-STACK_FRAMES:]).rstrip()
