"""RemoteSynthesizer: routing, the cloud's local/remote split, and no per-voice lock in the way."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from facade.model_service import create_model_app
from facade.remote_engine import RemoteSynthesizer, remote_synthesizer
from speech.synthesizer import Controls, Synthesizer
from tests.support.fake_engine import ToneEngine
from tests.support.servers import ServerThread, wait_until


@dataclass(frozen=True)
class FakeVoice:
    speaker: str
    engine: str = "vits"
    lang: str = "en"

    @property
    def key(self) -> str:
        return f"{self.engine}:{self.speaker}"


@pytest.fixture(scope="module")
def tone() -> Iterator[tuple[ServerThread, ToneEngine]]:
    engine = ToneEngine(delay_s=0.05)
    server = ServerThread(create_model_app(lambda: engine, voice="tone", window_ms=30)).start()
    assert wait_until(lambda: httpx.get(server.url + "/readyz").status_code == 200, timeout=10)
    yield server, engine
    server.close()


def test_concurrent_calls_for_one_voice_reach_the_service_together(tone: tuple[ServerThread, ToneEngine]) -> None:
    server, engine = tone
    synthesizer = remote_synthesizer(server.url + "/invocations")
    voice = FakeVoice("tone")
    engine.calls.clear()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: synthesizer.synthesize(voice, [f"call {i}."]), range(8)))
    assert [r[0].text for r in results] == [f"call {i}." for i in range(8)]
    assert len(engine.calls) < 8  # a per-voice lock would have made it 8 calls of one
    synthesizer.close()


def test_cloud_split_keeps_formant_voices_local(tone: tuple[ServerThread, ToneEngine]) -> None:
    server, engine = tone
    local_engine = ToneEngine()
    synthesizer = remote_synthesizer(server.url + "/invocations", local=Synthesizer(lambda voice: local_engine))
    engine.calls.clear()
    synthesizer.synthesize(FakeVoice("tone", engine="vits"), ["to the GPU host."])
    synthesizer.synthesize(FakeVoice("tone", engine="kokoro"), ["Kokoro too."])
    synthesizer.synthesize(FakeVoice("walter", engine="espeak"), ["in process."])
    assert [c[0] for c in engine.calls] == [["to the GPU host."], ["Kokoro too."]]
    assert [c[0] for c in local_engine.calls] == [["in process."]]
    assert synthesizer.engine(FakeVoice("walter", engine="espeak")) is local_engine


def test_route_sees_the_serving_model(tone: tuple[ServerThread, ToneEngine]) -> None:
    server, _ = tone
    seen: list[tuple[str, str]] = []

    def route(voice: FakeVoice, controls: Controls) -> str:
        seen.append((voice.speaker, controls.route))
        return server.url + "/invocations"

    synthesizer = RemoteSynthesizer(route)
    chunks = synthesizer.synthesize(FakeVoice("tone"), ["Hi."], Controls(time_scale=2.0, route="arcana"))
    assert seen == [("tone", "arcana")]
    assert len(chunks[0].samples) == int(16000 * 0.01 * 3 * 2.0)  # the time scale reached the engine
