"""Dynamic batching: sentences of concurrent requests that arrive within a short window run as
one ``engine.synthesize`` call.

One collector task reads an asyncio queue; one inference thread runs the engine. The window is
measured from the moment the *first* sentence of a batch arrived, so no sentence is held longer
than ``window_ms`` for batching's sake; a batch also closes as soon as it holds ``max_batch``
sentences. While the inference thread is busy, newcomers queue (the engine can only do one thing
at a time) and form the next batch, which then leaves at once: their window has already passed.

Sentences that ask for different scales cannot share one forward pass (the engine takes one
``SynthesisOptions`` per call), and sentences for different voices cannot either (a VITS voice
and a Kokoro voice are different models; two Kokoro voices are one model with different style
packs, but ``KokoroEngine`` holds one pack), so a collected batch is split by engine, options and
input kind; each group is one call and counts as one batch. Voice names that share one engine
(one loaded weights file) share its groups. ``window_ms=0`` with ``max_batch=1`` turns batching
off.

Shared by the model service (``facade.model_service``, requests on its event loop) and the
in-process engines of a GPU host (``speech.batched_engine``, calls from request threads), so
that both batch alike: one batcher, not two copies.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from speech.engines.base import Engine
from speech.types import AudioChunk, SynthesisOptions

log = logging.getLogger("lector.batcher")


@dataclass(slots=True)
class BatchStats:
    """Counters for tests, the bench and ``GET /stats``."""

    batches: int = 0  # engine.synthesize calls
    items: int = 0  # sentences run
    largest: int = 0
    recent_sizes: deque[int] = field(default_factory=lambda: deque(maxlen=4096))
    observe: Callable[[int], None] | None = None  # a metric of batch sizes (the model service's)

    def record(self, size: int) -> None:
        self.batches += 1
        self.items += size
        self.largest = max(self.largest, size)
        self.recent_sizes.append(size)
        if self.observe is not None:
            self.observe(size)

    def to_json(self) -> dict[str, object]:
        return {
            "batches": self.batches, "items": self.items, "largest": self.largest,
            "meanBatch": round(self.items / self.batches, 3) if self.batches else 0.0,
        }


@dataclass(slots=True)
class _Item:
    sentence: str
    options: SynthesisOptions
    future: asyncio.Future[tuple[AudioChunk, int]]  # (chunk, size of the batch it ran in)
    arrived: float
    ipa: bool = False  # the sentence is phonemes (``engine.synthesize_phonemes``)
    engine: Engine | None = None  # the voice's engine (None: the default one)


class Batcher:
    """Queue in, one inference thread out. Create, ``start()`` inside the event loop, ``stop()``.

    ``engine`` is the one voice served, or a mapping of voice names to their engines (the first
    is the default, for requests that name no voice)."""

    def __init__(
        self,
        engine: Engine | Mapping[str, Engine],
        *,
        window_ms: float = 5.0,
        max_batch: int = 16,
        observe: Callable[[int], None] | None = None,
    ) -> None:
        if max_batch < 1 or window_ms < 0:
            raise ValueError("max_batch must be at least 1 and window_ms not negative")
        self.engines: dict[str, Engine] = {}  # empty: one engine, whatever name a request gives
        if isinstance(engine, Mapping):
            if not engine:
                raise ValueError("a batcher needs at least one engine")
            self.engines = dict(engine)
            engine = next(iter(self.engines.values()))
        self.engine: Engine = engine
        self.window = window_ms / 1000.0
        self.max_batch = max_batch
        self.stats = BatchStats(observe=observe)
        self._queue: asyncio.Queue[_Item] | None = None
        self._task: asyncio.Task[None] | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="inference")

    def start(self) -> None:
        self._queue = asyncio.Queue()
        self._task = asyncio.get_running_loop().create_task(self._collect(), name="batcher")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._queue is not None:
            while not self._queue.empty():
                item = self._queue.get_nowait()
                if not item.future.done():
                    item.future.set_exception(RuntimeError("model service is stopping"))
        self._executor.shutdown(wait=False, cancel_futures=True)

    def engine_for(self, voice: str | None) -> Engine | None:
        """The engine of ``voice`` (the default for ``None``); ``None`` if it is not served here."""
        if voice is None or not self.engines:
            return self.engine
        return self.engines.get(voice)

    def submit(
        self, sentences: Sequence[str], options: SynthesisOptions, *, ipa: bool = False, voice: str | None = None
    ) -> list[asyncio.Future[tuple[AudioChunk, int]]]:
        """One future per sentence, resolved with its chunk when its batch has run. With ``ipa``
        the sentences are phonemes; they batch with other phoneme requests only. ``voice`` picks
        the engine (``KeyError`` if it is not served); sentences batch with their engine's only."""
        if self._queue is None:
            raise RuntimeError("batcher not started")
        engine = self.engine_for(voice)
        if engine is None:
            raise KeyError(voice)
        loop = asyncio.get_running_loop()
        now = loop.time()
        futures = []
        for sentence in sentences:
            future: asyncio.Future[tuple[AudioChunk, int]] = loop.create_future()
            self._queue.put_nowait(_Item(sentence, options, future, now, ipa, engine))
            futures.append(future)
        return futures

    async def run_direct(
        self, sentences: Sequence[str], options: SynthesisOptions, engine: Engine | None = None, *, ipa: bool = False
    ) -> list[AudioChunk]:
        """One engine call on the inference thread, outside the queue (the warm-up, and calls
        already as large as a batch: a window would only delay them)."""
        loop = asyncio.get_running_loop()
        target = engine or self.engine
        run = target.synthesize_phonemes if ipa else target.synthesize  # type: ignore[attr-defined]
        chunks: list[AudioChunk] = await loop.run_in_executor(self._executor, run, list(sentences), options)
        return chunks

    async def _collect(self) -> None:
        assert self._queue is not None
        queue = self._queue
        loop = asyncio.get_running_loop()
        while True:
            first = await queue.get()
            batch = [first]
            deadline = first.arrived + self.window
            while len(batch) < self.max_batch:
                if not queue.empty():
                    batch.append(queue.get_nowait())
                    continue
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                try:
                    batch.append(await asyncio.wait_for(queue.get(), remaining))
                except TimeoutError:
                    break
            await self._run(batch)

    async def _run(self, batch: list[_Item]) -> None:
        groups: dict[tuple[int, SynthesisOptions, bool], list[_Item]] = {}
        engines: dict[int, Engine] = {}
        for item in batch:
            if not item.future.cancelled():
                engine = item.engine or self.engine
                engines[id(engine)] = engine
                groups.setdefault((id(engine), item.options, item.ipa), []).append(item)
        loop = asyncio.get_running_loop()
        for (engine_id, options, ipa), items in groups.items():
            sentences = [item.sentence for item in items]
            engine = engines[engine_id]
            run = engine.synthesize_phonemes if ipa else engine.synthesize  # type: ignore[attr-defined]
            try:
                chunks = await loop.run_in_executor(self._executor, run, sentences, options)
                if len(chunks) != len(items):
                    raise RuntimeError(f"engine returned {len(chunks)} chunks for {len(items)} sentences")
            except Exception as exc:  # noqa: BLE001 - every waiting request gets the failure
                log.exception("batch of %d failed", len(items))
                for item in items:
                    if not item.future.done():
                        item.future.set_exception(exc)
                continue
            self.stats.record(len(items))
            for item, chunk in zip(items, chunks, strict=True):
                if not item.future.done():
                    item.future.set_result((chunk, len(items)))
