"""``POST /v1/audio/speech`` driven by the official ``openai`` Python client, unmodified: only its
base URL points at lector (the whole service under ``lector serve``, real PostgreSQL). The
English ``joe`` voice keeps it fast: ``tts-1`` maps every OpenAI voice onto it."""

from __future__ import annotations

import io
import uuid
import wave

import av
import httpx
import openai
import pytest
from sqlalchemy import func, select

from store.db import Usage
from store.db.keys import authenticate
from store.db.session import make_engine, make_sessionmaker, session_scope

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TEXT = "The quick brown fox jumps over the lazy dog. It was a bright cold day."


@pytest.fixture
def client(stack, api_key: str) -> openai.OpenAI:  # type: ignore[no-untyped-def]
    return openai.OpenAI(api_key=api_key, base_url=f"{stack.api_url}/v1", max_retries=0)


def _billed(pg_url: str, key: str) -> int:
    engine = make_engine(pg_url)
    try:
        with session_scope(make_sessionmaker(engine)) as session:
            account, _ = authenticate(session=session, key=key)
            total = session.execute(select(func.coalesce(func.sum(Usage.characters), 0))
                                    .where(Usage.account_id == account.id)).scalar_one()
            return int(total)
    finally:
        engine.dispose()


def _decoded_seconds(data: bytes) -> float:
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.audio[0]
        samples = sum(frame.samples for frame in container.decode(stream))
        return samples / stream.rate


def test_wav_through_the_openai_client_is_real_speech_and_billed(client, pg_url: str, api_key: str) -> None:  # type: ignore[no-untyped-def]
    before = _billed(pg_url, api_key)
    response = client.audio.speech.create(model="tts-1", voice="alloy", input=TEXT, response_format="wav")
    data = response.read()
    with wave.open(io.BytesIO(data)) as wav:
        assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) == (24000, 1, 2)
    assert _decoded_seconds(data) > 2.0  # two sentences of speech, not a header
    assert _billed(pg_url, api_key) - before == len(TEXT)


@pytest.mark.parametrize(("fmt", "container"), [("mp3", "mp3"), ("opus", "ogg"), ("flac", "flac"), ("aac", "aac")])
def test_every_container_format_decodes(client, fmt: str, container: str) -> None:  # type: ignore[no-untyped-def]
    with client.audio.speech.with_streaming_response.create(
        model="tts-1", voice="echo", input="Hello there.", response_format=fmt
    ) as response:
        # streamed as made, except FLAC, whose header wants the length
        assert ("content-length" in response.headers) == (fmt == "flac")
        data = response.read()
    with av.open(io.BytesIO(data)) as opened:
        assert opened.format.name == container
    assert _decoded_seconds(data) > 0.3


def test_pcm_streams_and_speed_shortens_it(client) -> None:  # type: ignore[no-untyped-def]
    lengths = {}
    for speed in (1.0, 2.0):
        with client.audio.speech.with_streaming_response.create(
            model="tts-1", voice="joe", input=TEXT, response_format="pcm", speed=speed
        ) as response:
            assert response.headers["transfer-encoding"] == "chunked"  # streamed, not one sized body
            assert "content-length" not in response.headers
            parts = list(response.iter_bytes(4096))
        lengths[speed] = sum(len(p) for p in parts)
    assert lengths[2.0] < 0.75 * lengths[1.0]


def test_lector_voice_and_model_names_are_accepted(client) -> None:  # type: ignore[no-untyped-def]
    data = client.audio.speech.create(model="mistv3", voice="joe", input="Hello.", response_format="wav").read()
    assert _decoded_seconds(data) > 0.2


def test_errors_have_openai_shape(client, stack) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(openai.BadRequestError) as bad_voice:
        client.audio.speech.create(model="tts-1", voice="nobody", input="Hello.")
    assert bad_voice.value.body == {"message": "speaker nobody is not a voice of model mistv3",
                                    "type": "invalid_request_error", "param": None, "code": None}
    with pytest.raises(openai.BadRequestError) as bad_format:
        client.audio.speech.create(model="tts-1", voice="alloy", input="Hello.", response_format="ogg")  # type: ignore[arg-type]
    assert bad_format.value.body["param"] == "response_format"
    with pytest.raises(openai.BadRequestError) as bad_model:
        client.audio.speech.create(model="tts-9", voice="alloy", input="Hello.")
    assert bad_model.value.body["message"] == "modelId tts-9 is not supported"
    with pytest.raises(openai.BadRequestError) as bad_speed:
        client.audio.speech.create(model="tts-1", voice="alloy", input="Hello.", speed=9)
    assert bad_speed.value.body["param"] == "speed"

    stranger = openai.OpenAI(api_key="lk_" + uuid.uuid4().hex, base_url=f"{stack.api_url}/v1", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as denied:
        stranger.audio.speech.create(model="tts-1", voice="alloy", input="Hello.")
    assert denied.value.body == {"message": "invalid api key", "type": "authentication_error", "param": None,
                                 "code": "invalid_api_key"}
    # The route alone speaks OpenAI's shape: the vendor route keeps its plain-text errors.
    plain = httpx.post(f"{stack.api_url}/v1/service-tts", json={"text": "hi"},
                       headers={"Authorization": f"Bearer {stranger.api_key}"}, timeout=30)
    assert (plain.status_code, plain.text) == (401, "invalid api key")
