"""One request's synthesis, billed once for what was made: at its end, or when the client hangs up.

Why one object: every transport (``/v1/service-tts`` and its JSON and SSE variants, the
WebSockets, the self-hosted ``/``, OpenAI's ``/v1/audio/speech``) had its own copy of "bill what
was made, also when the client goes away", each placing its threads its own way. Here the thread
policy of ``docs/architecture.md`` is kept in one place: synthesis steps run on the engine pool
(``request_resolution.in_engine_thread``), the usage row is written on the blocking pool
(``Services.offload``), never from an engine thread or the event loop, and a hang-up (which
cancels the request's task) cannot skip the billing (it runs shielded from the cancel).

A transport decides *when* the row is written (before the last bytes go out, so a client that
saw the whole response is billed even if the process dies next); this object makes sure it is
written exactly once, for the share of sentences synthesized by then (``facade.usage``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Generator, Iterator

import anyio

from facade.deps import Principal, Services
from facade.request_resolution import ResolvedRequest, in_engine_thread
from facade.usage import close_quietly, record
from facade.validation import SynthesisRequest
from speech.audio import AudioFormat
from speech.streaming import QuickStart, StreamStats, encoded_stream, pcm_stream
from speech.types import AudioChunk


class MeteredSynthesis:
    """The ``resolved`` request synthesized at ``rate`` for ``principal``, its usage recorded once.

    Stream it (``open``, then ``next`` until None, then ``finish``) or make it whole (``whole``).
    ``continues``: a later run of a WebSocket's text, which bills the break before it."""

    def __init__(
        self,
        services: Services,
        principal: Principal,
        req: SynthesisRequest,
        resolved: ResolvedRequest,
        *,
        rate: int,
        transport: str,
        continues: bool = False,
    ) -> None:
        self.services, self.principal, self.req, self.resolved = services, principal, req, resolved
        self.rate, self.transport, self.continues = rate, transport, continues
        self.stats = StreamStats()
        self.request_id = uuid.uuid4().hex
        self.billed = False
        self._chunks: Generator[bytes, None, None] | None = None

    @property
    def complete(self) -> bool:
        """Every unit of the request is synthesized (its bytes may still be on their way out)."""
        return self.stats.sentences >= len(self.resolved.units)

    def pcm(self, *, streamed: bool = False) -> Generator[AudioChunk, None, None]:
        """The audio, unit by unit, counted in ``stats`` (what the bill is made from).
        ``streamed``: the first sentence may be cut at a clause so its audio starts sooner
        (``speech.streaming.QuickStart``), unless this run continues a socket's earlier audio
        (the listener is hearing that already) or the budget is 0."""
        quick = None
        if streamed and not self.continues and self.services.speech.first_audio_s > 0:
            quick = QuickStart(self.services.speech.pace, self.services.speech.first_audio_s)
        return pcm_stream(
            self.services.speech.synthesizer, self.resolved.voice, self.resolved.units, self.resolved.controls,
            sample_rate=self.rate, stats=self.stats, quick_start=quick,
        )

    # -- streamed ----------------------------------------------------------------------------

    def open(self, fmt: AudioFormat) -> None:
        """Start the encoded stream; nothing is synthesized until ``next``."""
        self._chunks = encoded_stream(self.pcm(streamed=True), fmt, self.rate)

    async def next(self) -> bytes | None:
        """The next encoded bytes (one synthesis step on the engine pool); None at the end."""
        if self._chunks is None:
            raise RuntimeError("open() the stream first")
        return await in_engine_thread(self.services, _next, self._chunks)

    async def bill(self) -> None:
        """Write the usage row now, for what was made so far; once (later calls do nothing)."""
        if self.billed:
            return
        self.billed = True
        await self.services.offload(
            record, self.services, self.principal, self.req, self.resolved, self.stats,
            transport=self.transport, request_id=self.request_id, continues=self.continues,
        )

    async def finish(self) -> None:
        """The end of the request however it ended: bills what was made if nothing was billed
        yet (a hang-up or a failure part-way), also while the request's task is being cancelled,
        and closes the stream."""
        try:
            if not self.billed:
                with anyio.CancelScope(shield=True):  # a disconnect cancels the task; billing must still run
                    await self.bill()
        finally:
            if self._chunks is not None:
                close_quietly(self._chunks)

    # -- whole -------------------------------------------------------------------------------

    async def whole(self, encode: Callable[[Iterator[AudioChunk]], bytes]) -> bytes:
        """``encode(pcm)`` on the engine pool, then the bill, also when synthesis failed part-way."""
        try:
            return await in_engine_thread(self.services, encode, self.pcm())
        finally:
            await self.finish()


def encoded_whole(fmt: AudioFormat, rate: int) -> Callable[[Iterator[AudioChunk]], bytes]:
    """``whole``'s ``encode`` for a format that streams: the stream's bytes, joined."""

    def encode(pcm: Iterator[AudioChunk]) -> bytes:
        return b"".join(encoded_stream(pcm, fmt, rate))

    return encode


def _next(chunks: Iterator[bytes]) -> bytes | None:
    return next(chunks, None)
