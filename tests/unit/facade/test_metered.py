"""facade/metered.py: every transport's "bill what was made, also when the client hangs up".

Billed once, for the share of sentences made; the row written on the blocking pool (never an
engine thread, never the event loop); a hang-up (a cancelled task) cannot skip it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from facade.deps import Principal, Services, Speech, Usage
from facade.metered import MeteredSynthesis, encoded_whole
from facade.request_resolution import ResolvedRequest, resolve
from facade.serving_pools import ServingPools
from facade.usage import billed_share
from facade.validation import SynthesisRequest
from speech.audio import AudioFormat
from speech.billing import billed_characters
from speech.synthesizer import Synthesizer
from speech.types import AudioChunk
from speech.voices import Catalog
from tests.support.fake_engine import ToneEngine

TEXT = "One sentence here. Another one there. And a third to end."
PRINCIPAL = Principal(None, None, "metered", None, None, 0, "")


class Recorder:
    """The usage sink: each record with the thread that wrote it."""

    def __init__(self) -> None:
        self.rows: list[tuple[dict[str, Any], str]] = []

    def __call__(self, row: dict[str, Any]) -> None:
        self.rows.append((row, threading.current_thread().name))


class ThreadNoting(ToneEngine):
    def __init__(self) -> None:
        super().__init__()
        self.threads: list[str] = []

    def synthesize(self, sentences, options=None):  # type: ignore[no-untyped-def]
        self.threads.append(threading.current_thread().name)
        return super().synthesize(sentences, options)


@pytest.fixture
def setup() -> Iterator[tuple[Services, Recorder, ThreadNoting]]:
    engine, sink = ThreadNoting(), Recorder()
    services = Services(
        speech=Speech(catalog=Catalog.load(), synthesizer=Synthesizer(lambda voice: engine)), usage=Usage(sink=sink),
        pools=ServingPools(engine_slots=1, blocking_slots=2),
    )
    close = services.pools.open()
    yield services, sink, engine
    close()


def _metered(services: Services, *, continues: bool = False) -> tuple[MeteredSynthesis, ResolvedRequest]:
    req = SynthesisRequest(text=TEXT, speaker="joe", model_id="mistv3", lang="en")
    resolved = resolve(services, req, PRINCIPAL, endpoint="service-tts")
    assert len(resolved.units) == 3
    return MeteredSynthesis(services, PRINCIPAL, req, resolved, rate=16000, transport="http", continues=continues), resolved


def _characters(sink: Recorder) -> list[int]:
    return [row["characters"] for row, _ in sink.rows]


async def test_a_stream_read_to_its_end_is_billed_once_for_the_whole_text(setup) -> None:  # type: ignore[no-untyped-def]
    services, sink, engine = setup
    metered, _ = _metered(services)
    metered.open(AudioFormat.PCM)
    while await metered.next() is not None:
        if metered.complete:
            await metered.bill()
    await metered.bill()
    await metered.finish()
    assert _characters(sink) == [billed_characters(TEXT)]
    loop = threading.current_thread().name
    (_, writer), = sink.rows
    assert writer.startswith("blocking") and writer != loop  # the row: on the blocking pool
    assert engine.threads and all(name.startswith("engine") for name in engine.threads)  # steps: the engine pool


async def test_a_hang_up_bills_the_share_that_was_made(setup) -> None:  # type: ignore[no-untyped-def]
    services, sink, _ = setup
    metered, resolved = _metered(services)
    metered.open(AudioFormat.MP3)
    assert await metered.next() is not None  # the first sentence went out; then the client left
    await metered.finish()
    await metered.finish()  # a second end changes nothing
    made = metered.stats.sentences
    assert 0 < made < len(resolved.units)
    assert _characters(sink) == [billed_share(TEXT, made, len(resolved.units))]
    assert _characters(sink)[0] < billed_characters(TEXT)


async def test_a_cancelled_request_is_still_billed(setup) -> None:  # type: ignore[no-untyped-def]
    """A disconnect cancels the request's task: the bill runs shielded from it."""
    services, sink, _ = setup
    metered, resolved = _metered(services)
    metered.open(AudioFormat.PCM)
    await metered.next()
    with anyio.CancelScope() as scope:
        scope.cancel()
        await metered.finish()
    assert _characters(sink) == [billed_share(TEXT, metered.stats.sentences, len(resolved.units))]


async def test_nothing_made_bills_nothing(setup) -> None:  # type: ignore[no-untyped-def]
    services, sink, _ = setup
    metered, _ = _metered(services)
    metered.open(AudioFormat.PCM)
    await metered.finish()
    assert sink.rows == [] and metered.billed


async def test_a_whole_file_is_billed_also_when_it_fails_part_way(setup) -> None:  # type: ignore[no-untyped-def]
    services, sink, engine = setup
    metered, _ = _metered(services)
    whole = await metered.whole(encoded_whole(AudioFormat.WAV, 16000))
    assert whole[:4] == b"RIFF" and _characters(sink) == [billed_characters(TEXT)]

    def two_then_fail(pcm: Iterator[AudioChunk]) -> bytes:
        next(pcm), next(pcm)
        raise RuntimeError("encoder broke")

    failing, resolved = _metered(services)
    with pytest.raises(RuntimeError, match="encoder broke"):
        await failing.whole(two_then_fail)
    assert _characters(sink)[1] == billed_share(TEXT, 2, len(resolved.units))
    assert sink.rows[1][1].startswith("blocking")  # not the engine thread the encoder ran on


async def test_a_later_websocket_run_bills_the_break_before_it(setup) -> None:  # type: ignore[no-untyped-def]
    services, sink, _ = setup
    metered, _ = _metered(services, continues=True)
    await metered.whole(encoded_whole(AudioFormat.PCM, 16000))
    assert _characters(sink) == [billed_characters(TEXT, continues=True)]


CLAUSED = "Once upon a time, in a land far away, there lived a king. The end."


def _claused(services: Services, *, continues: bool = False) -> tuple[MeteredSynthesis, ResolvedRequest]:
    req = SynthesisRequest(text=CLAUSED, speaker="joe", model_id="mistv3", lang="en")
    resolved = resolve(services, req, PRINCIPAL, endpoint="service-tts")
    # 10 ms a character: the default 0.3 s budget holds 30, so the 57-character first sentence is cut at its first comma.
    services.speech.pace.record(resolved.voice.key, 100, 1.0)
    return MeteredSynthesis(services, PRINCIPAL, req, resolved, rate=16000, transport="http", continues=continues), resolved


async def test_a_stream_starts_with_its_first_sentence_cut_at_a_clause(setup) -> None:  # type: ignore[no-untyped-def]
    services, sink, engine = setup
    metered, resolved = _claused(services)
    metered.open(AudioFormat.PCM)
    while await metered.next() is not None:
        pass
    await metered.finish()
    said = [sentences for sentences, _ in engine.calls]
    assert said[0] == ["Once upon a time,"]
    assert " ".join(s[0] for s in said) == CLAUSED
    assert _characters(sink) == [billed_characters(CLAUSED)]
    assert [w.word for w in metered.stats.words] == CLAUSED.split()


async def test_whole_files_and_later_socket_runs_are_not_cut(setup) -> None:  # type: ignore[no-untyped-def]
    services, _, engine = setup
    await _claused(services)[0].whole(encoded_whole(AudioFormat.WAV, 16000))
    continued, _ = _claused(services, continues=True)
    continued.open(AudioFormat.PCM)  # the socket's listener is hearing its earlier audio already
    while await continued.next() is not None:
        pass
    await continued.finish()
    whole = [["Once upon a time, in a land far away, there lived a king."], ["The end."]]
    assert [sentences for sentences, _ in engine.calls] == whole * 2


async def test_a_hang_up_after_a_first_piece_bills_its_sentence(setup) -> None:  # type: ignore[no-untyped-def]
    services, sink, _ = setup
    metered, resolved = _claused(services)
    metered.open(AudioFormat.PCM)
    assert await metered.next()  # the first piece went out; then the client left
    await metered.finish()
    assert metered.stats.sentences == 0 and metered.stats.partial
    assert _characters(sink) == [billed_share(CLAUSED, 1, len(resolved.units))] and _characters(sink)[0] > 0
