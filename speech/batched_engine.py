"""An engine whose calls from many threads meet in one ``Batcher`` (``speech.batcher``).

On a GPU one sentence is bound by kernel launches and host syncs, not by the device, so a
process serving concurrent streams in-process (no ``MODEL_URL``) should run their sentences
together, as the model service does. The API serves each request on a thread of its own and
calls ``Synthesizer`` synchronously; this wrapper hands each call to the model service's own
``Batcher``, running on an event loop of its own thread, and waits for its chunks. Sentences
from different requests and sockets that arrive within ``window_ms`` share a forward pass.

A call of at least ``max_batch`` sentences (a book's synthesize task) is already a batch: it
skips the window and runs as it is, on the same single inference thread, so it never
competes with the window's batches for the device.

Everything else (``sample_rate``, ``phonemize``, ``device``, ...) is the wrapped engine's.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

from speech.batcher import Batcher
from speech.engines.base import Engine
from speech.types import AudioChunk, SynthesisOptions


class BatchedEngine:
    """``engine`` behind a ``Batcher``; thread-safe, and batches concurrent calls (see module)."""

    batches_calls = True  # Synthesizer: do not serialize calls, the batcher gathers them

    def __init__(self, engine: Engine, *, window_ms: float = 5.0, max_batch: int = 16) -> None:
        self.inner = engine
        self.batcher = Batcher(engine, window_ms=window_ms, max_batch=max_batch)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="batcher-loop", daemon=True)
        self._thread.start()
        self._await(self._start())

    async def _start(self) -> None:
        self.batcher.start()

    def _await(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    @property
    def sample_rate(self) -> int:
        return self.inner.sample_rate

    def phonemize(self, text: str) -> str:
        return self.inner.phonemize(text)

    def synthesize(self, sentences: Sequence[str], options: SynthesisOptions | None = None) -> list[AudioChunk]:
        return self._call(sentences, options, ipa=False)

    def __getattr__(self, name: str) -> Any:
        # synthesize_phonemes exists exactly when the wrapped engine has it (Synthesizer asks).
        if name == "synthesize_phonemes" and callable(getattr(self.inner, name, None)):
            return lambda phonemes, options=None: self._call(phonemes, options, ipa=True)
        if name.startswith("_") or name in ("inner", "batcher", "batches_calls"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _call(self, sentences: Sequence[str], options: SynthesisOptions | None, ipa: bool) -> list[AudioChunk]:
        options = options or SynthesisOptions()
        if not sentences:
            return []
        if len(sentences) >= self.batcher.max_batch:
            return self._await(self.batcher.run_direct(sentences, options, ipa=ipa))  # type: ignore[no-any-return]

        async def queued() -> list[AudioChunk]:
            futures = self.batcher.submit(sentences, options, ipa=ipa)
            return [chunk for chunk, _ in await asyncio.gather(*futures)]

        return self._await(queued())  # type: ignore[no-any-return]

    def stop(self) -> None:
        """Stop the batcher and its loop; the wrapped engine stays usable on its own."""
        if self._loop.is_running():
            self._await(self.batcher.stop())
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
            self._loop.close()

    def close(self) -> None:
        """``stop``, then close the wrapped engine."""
        self.stop()
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()
