"""The vendor's real client libraries against lector, with only the base URL and the key changed.

LiveKit Agents' Rime plugin (``livekit-plugins-rime``) and Pipecat's Rime services
(``pipecat-ai[rime]``) are driven through their public classes, the way an agent built on them
would, against the API the ``stack`` fixture runs on loopback. Each test checks the audio that
reached the client (rate, length, loudness, and what Whisper hears), so a protocol break in
lector fails here even when the client library swallows it and returns no audio.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest

from tests.support.asr import transcribe, wer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ONE_SENTENCE = "The quick brown fox jumps over the lazy dog."
TWO_SENTENCES = "The first sentence is about the weather. The second one is about the garden."


# The client libraries are imported in the tests, so that a missing one fails its tests only.
@pytest.fixture
def livekit_rime() -> Any:
    from livekit.plugins import rime

    return rime


@pytest.fixture
async def http_session() -> AsyncIterator[Any]:
    """The ``aiohttp`` session an agent hands both plugins (LiveKit's otherwise wants a job context)."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        yield session


def _connect_options() -> Any:
    from livekit.agents import APIConnectOptions

    return APIConnectOptions(max_retry=0, timeout=30)


def _pcm(chunks: list[bytes]) -> np.ndarray:
    data = b"".join(chunks)
    assert len(data) % 2 == 0, "PCM arrived with a dangling byte"
    return np.frombuffer(data, dtype="<i2")


def _assert_speech(samples: np.ndarray, rate: int, text: str, *, min_s: float, max_s: float) -> None:
    seconds = len(samples) / rate
    assert min_s < seconds < max_s, f"{seconds:.2f} s of audio for {text!r}"
    floats = samples.astype(np.float32) / 32768
    assert float(np.sqrt(np.mean(floats**2))) > 0.02, "the audio is (nearly) silent"
    assert float(np.max(np.abs(floats))) > 0.1
    heard = transcribe(floats, rate)
    assert wer(text, heard) <= 0.25, f"Whisper heard {heard!r} for {text!r}"


def _ws_base(stack: Any) -> str:
    return stack.api_url.replace("http://", "ws://")


# --- LiveKit Agents -------------------------------------------------------------------------------


async def test_livekit_http_synthesize(stack, api_key: str, livekit_rime: Any, http_session: Any) -> None:  # type: ignore[no-untyped-def]
    """``rime.TTS(...).synthesize``: POST the JSON body with ``Accept: audio/pcm`` to ``base_url``,
    stream headerless PCM back at the model's default rate (mistv3: 24 kHz)."""
    tts = livekit_rime.TTS(
        base_url=f"{stack.api_url}/v1/service-tts", model="mistv3", speaker="joe",
        api_key=api_key, http_session=http_session,
    )
    stream = tts.synthesize(ONE_SENTENCE, conn_options=_connect_options())
    try:
        events = [event async for event in stream]
    finally:
        await stream.aclose()
        await tts.aclose()
    assert events, "the plugin produced no audio"
    assert {e.frame.sample_rate for e in events} == {24000}
    assert {e.frame.num_channels for e in events} == {1}
    assert events[-1].is_final
    _assert_speech(_pcm([bytes(e.frame.data) for e in events]), 24000, ONE_SENTENCE, min_s=1.2, max_s=6.0)


async def test_livekit_http_coda_with_rate_language_and_generation_controls(stack, api_key: str, livekit_rime: Any, http_session: Any) -> None:  # type: ignore[no-untyped-def]
    """The flagship with everything the plugin puts in the body for it: a 3-letter ``lang``, an
    explicit ``samplingRate``, ``timeScaleFactor``, ``speedAlpha`` and Coda's generation controls
    (``temperature``, ``top_p``, ``repetition_penalty``, ``max_tokens``), which lector accepts
    and ignores."""
    tts = livekit_rime.TTS(
        base_url=f"{stack.api_url}/v1/service-tts", model="coda", speaker="joe", lang="eng",
        sample_rate=8000, time_scale_factor=1.0, speed_alpha=1.0, temperature=0.5, top_p=0.9,
        repetition_penalty=1.1, max_tokens=400, api_key=api_key, http_session=http_session,
    )
    stream = tts.synthesize("Short and sweet.", conn_options=_connect_options())
    try:
        events = [event async for event in stream]
    finally:
        await stream.aclose()
        await tts.aclose()
    assert {e.frame.sample_rate for e in events} == {8000}
    samples = _pcm([bytes(e.frame.data) for e in events])
    assert 0.5 < len(samples) / 8000 < 4.0


async def test_livekit_websocket_stream(stack, api_key: str, livekit_rime: Any, http_session: Any) -> None:  # type: ignore[no-untyped-def]
    """``rime.TTS(base_url="ws://...")`` streams over ``/ws3``: one text message per sentence with a
    contextId, a flush, one ``done``; word timestamps arrive as timed transcripts."""
    from livekit.agents.types import USERDATA_TIMED_TRANSCRIPT

    tts = livekit_rime.TTS(
        base_url=_ws_base(stack), model="mistv3", speaker="joe", sample_rate=16000,
        api_key=api_key, http_session=http_session,
    )
    assert tts.capabilities.streaming and tts.capabilities.aligned_transcript
    try:
        for round_ in range(2):  # the second stream reuses the pooled socket
            stream = tts.stream(conn_options=_connect_options())
            try:
                for word in TWO_SENTENCES.split(" "):  # token by token, as an LLM writes
                    stream.push_text(word + " ")
                stream.flush()
                stream.end_input()
                events = [event async for event in stream]
            finally:
                await stream.aclose()
            assert events, f"round {round_}: no audio"
            assert {e.frame.sample_rate for e in events} == {16000}
            words = [
                stamp for e in events for stamp in (e.frame.userdata.get(USERDATA_TIMED_TRANSCRIPT) or [])
            ]
            spoken = [str(w).strip().strip(".").lower() for w in words]
            assert spoken == [w.strip(".").lower() for w in TWO_SENTENCES.split()], spoken
            _assert_speech(_pcm([bytes(e.frame.data) for e in events]), 16000, TWO_SENTENCES, min_s=2.5, max_s=9.0)
    finally:
        await tts.aclose()


async def test_livekit_websocket_immediate_segment_mistv2(stack, api_key: str, livekit_rime: Any, http_session: Any) -> None:  # type: ignore[no-untyped-def]
    """``segment="immediate"`` with mistv2 at the plugin's default rate for it (22050 Hz): every
    sentence message is synthesized as it arrives; the stream still ends with the audio of all."""
    tts = livekit_rime.TTS(
        base_url=_ws_base(stack), model="mistv2", speaker="joe", segment="immediate",
        pause_between_brackets=False, api_key=api_key, http_session=http_session,
    )
    assert tts.sample_rate == 22050
    stream = tts.stream(conn_options=_connect_options())
    try:
        stream.push_text(TWO_SENTENCES)
        stream.end_input()
        events = [event async for event in stream]
    finally:
        await stream.aclose()
        await tts.aclose()
    assert {e.frame.sample_rate for e in events} == {22050}
    _assert_speech(_pcm([bytes(e.frame.data) for e in events]), 22050, TWO_SENTENCES, min_s=2.5, max_s=9.0)


# --- Pipecat ---------------------------------------------------------------------------------------


async def test_pipecat_http_service(stack, api_key: str, http_session: Any) -> None:  # type: ignore[no-untyped-def]
    """``RimeHttpTTSService`` in a minimal real pipeline. It has no base-URL argument: its vendor URL
    is an attribute set in ``__init__``, the one thing changed here besides the key."""
    from pipecat.frames.frames import ErrorFrame, TTSAudioRawFrame, TTSSpeakFrame
    from pipecat.pipeline.task import PipelineParams
    from pipecat.services.rime.tts import RimeHttpTTSService
    from pipecat.tests.utils import run_test

    service = RimeHttpTTSService(
        api_key=api_key, aiohttp_session=http_session,
        settings=RimeHttpTTSService.Settings(model="mistv3", voice="joe"),
    )
    service._base_url = f"{stack.api_url}/v1/service-tts"
    down, up = await run_test(
        service,
        frames_to_send=[TTSSpeakFrame(ONE_SENTENCE)],
        pipeline_params=PipelineParams(audio_out_sample_rate=16000),
        start_timeout=10,
    )
    errors = [f.error for f in [*down, *up] if isinstance(f, ErrorFrame)]
    assert not errors, errors
    audio = [f for f in down if isinstance(f, TTSAudioRawFrame)]
    assert audio and {f.sample_rate for f in audio} == {16000}
    _assert_speech(_pcm([f.audio for f in audio]), 16000, ONE_SENTENCE, min_s=1.2, max_s=6.0)


async def test_pipecat_websocket_service(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    """``RimeTTSService(url=".../ws3")`` in a minimal real pipeline: a spoken text frame in,
    audio frames and word timestamps out, on one socket for the whole turn."""
    from pipecat.frames.frames import (
        ErrorFrame,
        TTSAudioRawFrame,
        TTSSpeakFrame,
        TTSStoppedFrame,
        TTSTextFrame,
    )
    from pipecat.pipeline.task import PipelineParams
    from pipecat.services.rime.tts import RimeTTSService
    from pipecat.tests.utils import run_test
    from pipecat.transcriptions.language import Language

    service = RimeTTSService(
        api_key=api_key, url=f"{_ws_base(stack)}/ws3", sample_rate=16000,
        # reduceLatency goes into the query string as Python's "True"; the others as "true"
        settings=RimeTTSService.Settings(
            model="mistv3", voice="joe", language=Language.EN, reduceLatency=True, noTextNormalization=False,
        ),
    )
    down, up = await run_test(
        service,
        frames_to_send=[TTSSpeakFrame(TWO_SENTENCES)],
        pipeline_params=PipelineParams(audio_out_sample_rate=16000),
        start_timeout=10,
    )
    errors = [f.error for f in [*down, *up] if isinstance(f, ErrorFrame)]
    assert not errors, errors
    audio = [f for f in down if isinstance(f, TTSAudioRawFrame)]
    assert audio and {f.sample_rate for f in audio} == {16000}
    assert any(isinstance(f, TTSStoppedFrame) for f in down)
    words = [f.text.strip(" .").lower() for f in down if isinstance(f, TTSTextFrame)]
    assert words == [w.strip(".").lower() for w in TWO_SENTENCES.split()], words
    _assert_speech(_pcm([f.audio for f in audio]), 16000, TWO_SENTENCES, min_s=2.5, max_s=9.0)


async def test_pipecat_websocket_llm_turn(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    """An LLM turn streamed token by token: Pipecat aggregates sentences, sends each one with the
    turn's contextId, then ``{"operation": "flush"}``; the turn ends at lector's ``done`` and must
    hold the audio of every sentence."""
    from pipecat.frames.frames import (
        ErrorFrame,
        LLMFullResponseEndFrame,
        LLMFullResponseStartFrame,
        LLMTextFrame,
        TTSAudioRawFrame,
    )
    from pipecat.pipeline.task import PipelineParams
    from pipecat.services.rime.tts import RimeTTSService
    from pipecat.tests.utils import run_test

    service = RimeTTSService(
        api_key=api_key, url=f"{_ws_base(stack)}/ws3", sample_rate=16000,
        settings=RimeTTSService.Settings(model="coda", voice="joe"),
    )
    tokens = [word + " " for word in TWO_SENTENCES.split(" ")]
    down, up = await run_test(
        service,
        frames_to_send=[LLMFullResponseStartFrame(), *[LLMTextFrame(t) for t in tokens], LLMFullResponseEndFrame()],
        pipeline_params=PipelineParams(audio_out_sample_rate=16000),
        start_timeout=10,
    )
    errors = [f.error for f in [*down, *up] if isinstance(f, ErrorFrame)]
    assert not errors, errors
    audio = [f for f in down if isinstance(f, TTSAudioRawFrame)]
    _assert_speech(_pcm([f.audio for f in audio]), 16000, TWO_SENTENCES, min_s=2.5, max_s=9.0)
