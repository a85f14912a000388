"""What a worker process holds: database sessions, the object store, the voices, a dispatcher,
and the plain values its tasks are configured with.

Built by the composition root (``lector.worker``) on first use inside the worker process, never
at import and never before a fork: a pooled database connection or a CUDA context must not be
shared across processes. ``Lazy`` is that "once, on first use" holder.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from scheduler.queue import Dispatcher
from speech.synthesizer import Synthesizer


@dataclass(frozen=True, slots=True)
class TaskConfig:
    """The settings the tasks pass on to the lifecycle (``lector.settings.Settings`` has the defaults)."""

    job_batch_chars: int
    account_batch_window: int
    synth_group_chars: int
    assembly_workers: int  # 0: every core
    assembly_ahead: bool  # chapter-scope books are assembled on the cpu queue while synthesized
    live_playlist: bool  # done chunks become HLS segments on the cpu queue (scheduler.hls)
    presign_seconds: int
    webhook_allow_private: bool
    webhook_timeout_s: float
    visibility_timeout_s: int
    stall_after_s: int
    retention_days: float


@dataclass
class Resources:
    config: TaskConfig
    sessions: Callable[[], AbstractContextManager[Session]]
    objects: Any
    catalog: Any
    synthesizer: Synthesizer
    dispatcher: Dispatcher
    # Hears what each synthesize batch billed: (model, characters); the composition root counts it.
    on_billed: Callable[[str, int], None] | None = None
    # The QA check's speech recognizer (speech.asr.WhisperRecognizer; its models load on first use).
    recognizer: Any = None


class Lazy:
    """``build()`` once, on the first call, in whichever process calls it."""

    def __init__(self, build: Callable[[], Resources]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._built: Resources | None = None

    def __call__(self) -> Resources:
        with self._lock:
            if self._built is None:
                self._built = self._build()
            return self._built
