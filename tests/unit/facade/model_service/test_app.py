"""The model service over real loopback HTTP, with a fake engine: readiness, refusals, batching."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import httpx
import pytest

from facade import errors as e
from facade import invocations_format as wire
from facade.model_service import create_model_app
from facade.remote_engine import ModelUnavailable, RemoteEngine, VoiceNotServed
from speech.types import SynthesisOptions
from tests.support.fake_engine import ToneEngine
from tests.support.servers import ServerThread, wait_until


def test_ready_only_after_loading_and_warm_up() -> None:
    release = threading.Event()
    engine = ToneEngine()

    def factory() -> ToneEngine:
        release.wait(10)
        return engine

    with ServerThread(create_model_app(factory, voice="tone")) as server:
        assert httpx.get(server.url + "/livez").status_code == 200
        assert httpx.get(server.url + "/readyz").status_code == 503
        refused = httpx.post(server.url + "/invocations", json={"sentences": ["Hi."]})
        assert refused.status_code == 503
        assert engine.calls == []
        release.set()
        assert wait_until(lambda: httpx.get(server.url + "/readyz").status_code == 200, timeout=10)
        assert len(engine.calls) == 1  # the warm-up ran before readiness
        body = httpx.get(server.url + "/readyz").json()
        assert body["voice"] == "tone" and body["sampleRate"] == 16000


def test_a_failed_load_fails_liveness() -> None:
    def factory() -> ToneEngine:
        raise RuntimeError("weights missing")

    with ServerThread(create_model_app(factory)) as server:
        assert wait_until(lambda: httpx.get(server.url + "/livez").status_code == 500, timeout=10)
        assert "weights missing" in httpx.get(server.url + "/livez").json()["error"]
        assert httpx.get(server.url + "/readyz").status_code == 503


@pytest.fixture(scope="module")
def tone_service():  # type: ignore[no-untyped-def]
    engine = ToneEngine(delay_s=0.02, fail_on="boom")
    server = ServerThread(create_model_app(lambda: engine, voice="tone", window_ms=25, max_batch=16)).start()
    assert wait_until(lambda: httpx.get(server.url + "/readyz").status_code == 200, timeout=10)
    yield server, engine
    server.stop()


def test_remote_engine_round_trip(tone_service) -> None:  # type: ignore[no-untyped-def]
    server, _ = tone_service
    remote = RemoteEngine(server.url + "/invocations", voice="tone")
    chunks = remote.synthesize(["Hello there.", "A second sentence."], SynthesisOptions(length_scale=2.0))
    assert [c.text for c in chunks] == ["Hello there.", "A second sentence."]
    assert len(chunks[0].samples) == int(16000 * 0.01 * len("Hello there.") * 2.0)
    assert [w.word for w in chunks[1].words] == ["A", "second", "sentence."]
    assert remote.sample_rate == 16000
    assert remote.phonemize("ABC") == "abc"
    assert remote.ready()


def test_refusals(tone_service) -> None:  # type: ignore[no-untyped-def]
    server, _ = tone_service
    url = server.url + "/invocations"
    assert httpx.post(url, content=b"{not json").status_code == 400
    assert httpx.post(url, json={"sentences": "Hi"}).status_code == 400
    wrong = httpx.post(url, json={"sentences": ["Hi."], "voice": "someone-else"})
    assert wrong.status_code == 400 and "not served here" in wrong.json()["error"]
    assert wrong.json()["voice"] == "someone-else" and wrong.json()["served"] == ["tone"]
    with pytest.raises(VoiceNotServed, match="someone-else is not served .* serves tone"):
        RemoteEngine(url, voice="someone-else").synthesize(["Hi."])
    with pytest.raises(VoiceNotServed):
        RemoteEngine(url, voice="someone-else").phonemize("Hi.")
    assert httpx.post(url, json={"sentences": ["boom."]}).status_code == 500


def test_concurrent_requests_form_batches_over_http(tone_service) -> None:  # type: ignore[no-untyped-def]
    server, _ = tone_service
    before = httpx.get(server.url + "/stats").json()
    remote = RemoteEngine(server.url + "/invocations", voice="tone")
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda i: remote.synthesize([f"request {i}."]), range(16)))
    after = httpx.get(server.url + "/stats").json()
    assert [r[0].text for r in results] == [f"request {i}." for i in range(16)]
    batches, items = after["batches"] - before["batches"], after["items"] - before["items"]
    assert items == 16
    assert batches < 16


def test_a_down_service_fails_fast_and_recovery_needs_nothing() -> None:
    engine = ToneEngine()
    server = ServerThread(create_model_app(lambda: engine))
    remote = RemoteEngine(f"http://127.0.0.1:{server.port}/invocations", connect_timeout=0.5)
    start = time.monotonic()
    with pytest.raises(ModelUnavailable):
        remote.synthesize(["Hi."])
    assert time.monotonic() - start < 1.0
    assert not remote.ready()
    with server:
        assert wait_until(remote.ready, timeout=10)
        assert remote.synthesize(["Back again."])[0].text == "Back again."


def test_one_service_serves_several_voices_each_by_its_own_engine() -> None:
    """A lineup in one service (Kokoro voices share one model): each request reaches its voice's
    engine, a batch never mixes engines, and a voice outside the lineup is a 400."""

    class SlowTone(ToneEngine):
        sample_rate = 24000

    high, low = ToneEngine(delay_s=0.02), SlowTone(delay_s=0.02)
    app = create_model_app(voices={"high": lambda: high, "low": lambda: low}, window_ms=40, max_batch=16)
    with ServerThread(app) as server:
        assert wait_until(lambda: httpx.get(server.url + "/readyz").status_code == 200, timeout=10)
        ready = httpx.get(server.url + "/readyz").json()
        assert ready["voices"] == ["high", "low"] and ready["sampleRates"] == {"high": 16000, "low": 24000}
        assert len(high.calls) == 1 and len(low.calls) == 1  # each kind of engine warmed once
        high.calls.clear()
        low.calls.clear()
        url = server.url + "/invocations"
        remotes = {name: RemoteEngine(url, voice=name) for name in ("high", "low")}
        assert remotes["low"].sample_rate == 24000 and remotes["high"].sample_rate == 16000
        jobs = [("high" if i % 2 else "low", f"{'high' if i % 2 else 'low'} {i}.") for i in range(12)]
        with concurrent.futures.ThreadPoolExecutor(12) as pool:
            results = list(pool.map(lambda job: remotes[job[0]].synthesize([job[1]]), jobs))
        assert [r[0].text for r in results] == [text for _, text in jobs]
        assert all(r[0].sample_rate == (16000 if name == "high" else 24000) for r, (name, _) in zip(results, jobs, strict=True))
        for engine, name in ((high, "high"), (low, "low")):
            said = [s for sentences, _ in engine.calls for s in sentences]
            assert sorted(said) == sorted(text for n, text in jobs if n == name)  # nothing crossed over
        assert len(high.calls) + len(low.calls) < 12  # still batched, per voice
        assert remotes["low"].phonemize("ABC") == "abc"
        default = httpx.post(url, json={"sentences": ["no voice named."]})
        assert default.status_code == 200 and high.calls[-1][0] == ["no voice named."]  # the first voice
        with pytest.raises(VoiceNotServed, match="serves high, low"):
            RemoteEngine(url, voice="joe").synthesize(["Hi."])


def test_every_refusal_is_an_answer_of_the_one_error_table() -> None:
    """The service's refusals come from ``facade.errors`` in its JSON shape: its own constants,
    the table's ``InvalidInvocation`` row, and Starlette's 404/405 in the table's words (FastAPI's
    ``{"detail": ...}`` would be answered without the table)."""
    release = threading.Event()

    def factory() -> ToneEngine:
        release.wait(10)
        return ToneEngine()

    with ServerThread(create_model_app(factory, voice="tone")) as server:
        url = server.url + "/invocations"
        not_ready = httpx.post(url, json={"sentences": ["Hi."]})
        assert (not_ready.status_code, not_ready.json()) == (503, {"error": e.MODEL_NOT_READY})
        bad = httpx.post(url, json={"sentences": []})
        assert (bad.status_code, bad.json()) == (400, {"error": str(_invalid({"sentences": []}))})
        assert httpx.post(url, content=b"{not json").json() == {"error": e.MODEL_BODY_NOT_JSON}
        missing = httpx.get(server.url + "/nowhere")
        assert (missing.status_code, missing.json()) == (404, {"error": "not found"})
        assert httpx.get(url).json() == {"error": "method not allowed"}
        release.set()
        assert wait_until(lambda: httpx.get(server.url + "/readyz").status_code == 200, timeout=10)
        assert httpx.post(server.url + "/phonemize", json={"text": 3}).json() == {"error": e.PHONEMIZE_BODY}


def _invalid(payload: object) -> wire.InvalidInvocation:
    with pytest.raises(wire.InvalidInvocation) as caught:
        wire.parse_request(payload)
    return caught.value


def test_blocking_calls_run_on_the_pool_started_before_serving() -> None:
    """The API's thread policy: loading and ``/phonemize`` run on the service's own pool, whose
    threads all exist before the first request (no thread started on the event loop)."""
    loaded_on: list[str] = []

    class Recording(ToneEngine):
        def phonemize(self, text: str) -> str:
            loaded_on.append(threading.current_thread().name)
            return super().phonemize(text)

    def factory() -> Recording:
        loaded_on.append(threading.current_thread().name)
        return Recording()

    with ServerThread(create_model_app(factory, voice="tone")) as server:
        assert wait_until(lambda: httpx.get(server.url + "/readyz").status_code == 200, timeout=10)
        assert httpx.post(server.url + "/phonemize", json={"text": "ABC"}).json() == {"phonemes": "abc"}
    assert len(loaded_on) == 2
    assert all(name.startswith("model-blocking") for name in loaded_on), loaded_on
