"""``POST /v1/service-tts`` over real HTTP: every row of the vendor API contract's error tables, every Accept
value, the JSON and SSE variants, and the inputs that tend to break services."""

from __future__ import annotations

import base64
import io
import json
import uuid
from datetime import UTC, datetime, timedelta

import av
import httpx
import pytest

from store.db import accounts, keys
from store.db.session import make_engine, make_sessionmaker, session_scope

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LIST = "audio/webm;codecs=opus, audio/ogg;codecs=opus, audio/mpeg, audio/wav, audio/L16, audio/PCMU"


def _post(stack, key: str | None, body: object = None, *, accept: str | None = None, raw: bytes | None = None,  # type: ignore[no-untyped-def]
          headers: dict[str, str] | None = None) -> httpx.Response:
    h = dict(headers or {})
    if key is not None:
        h["Authorization"] = f"Bearer {key}"
    if accept is not None:
        h["Accept"] = accept
    content = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
    return httpx.post(f"{stack.api_url}/v1/service-tts", content=content,
                      headers={"Content-Type": "application/json", **h}, timeout=60)


def _plain(response: httpx.Response, status: int, message: str) -> None:
    assert (response.status_code, response.text) == (status, message)
    assert response.headers["content-type"].startswith("text/plain")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "request body is required"),
        (b"[1,2]", "payload must be an object"),
        (b"{bad json", "payload must be an object"),
        (b'{"speaker":"joe"}', "text is required"),
        (b'{"text":12,"speaker":"joe"}', "text must be a string"),
        (b'{"text":null,"speaker":"joe"}', "text must be a string"),
        (b'{"text":"","speaker":"joe"}', "text must not be empty"),
        (json.dumps({"text": "a" * 1001, "speaker": "joe"}).encode(), "text is too long"),
        (b'{"text":"hi"}', "speaker is required"),
        (b'{"text":"hi","speaker":"joe","lang":1}', "lang must be a string"),
        (b'{"text":"hi","speaker":"joe","audioFormat":{}}', "audioFormat must be a string"),
        (b'{"text":"hi","speaker":"joe","lang":"xx"}', "Language xx is not supported for model mistv3"),
    ],
)
def test_400_table(stack, api_key: str, raw: bytes, message: str) -> None:  # type: ignore[no-untyped-def]
    _plain(_post(stack, api_key, raw=raw), 400, message)


def test_unknown_speaker_is_a_clear_400(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    response = _post(stack, api_key, {"text": "hi", "speaker": "nobody"})
    assert response.status_code == 400
    assert "nobody" in response.text and "mistv3" in response.text


def test_huge_body_is_refused_not_crashed(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    _plain(_post(stack, api_key, {"text": "word " * 400_000, "speaker": "joe"}), 400, "text is too long")


def test_1000_characters_pass(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    text = ("This sentence is exactly as long as it needs to be. " * 20)[:999] + "."
    assert len(text) == 1000
    assert _post(stack, api_key, {"text": text, "speaker": "joe"}).status_code == 200


def test_401_table(stack) -> None:  # type: ignore[no-untyped-def]
    _plain(_post(stack, None, {"text": "hi", "speaker": "joe"}), 401, "Missing Authorization header")
    _plain(_post(stack, None, {"text": "hi", "speaker": "joe"}, headers={"Authorization": "Bearer"}), 401, "empty apikey")
    _plain(_post(stack, "lk_" + "z" * 40, {"text": "hi", "speaker": "joe"}), 401, "invalid api key")
    _plain(_post(stack, "nonsense", {"text": "hi", "speaker": "joe"}), 401, "invalid api key")


def _account_key(pg_url: str, **kwargs: object) -> str:
    engine = make_engine(pg_url)
    try:
        with session_scope(make_sessionmaker(engine)) as session:
            account = accounts.create_account(session=session, name=f"t-{uuid.uuid4().hex[:8]}", **kwargs)  # type: ignore[arg-type]
            return keys.create_key(session=session, account_id=account.id)[1]
    finally:
        engine.dispose()


def test_expired_subscription_is_401(stack, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    key = _account_key(pg_url, subscription_valid_until=datetime.now(UTC) - timedelta(days=1))
    _plain(_post(stack, key, {"text": "hi", "speaker": "joe"}), 401, "invalid subscription")


def test_model_outside_the_account_is_403(stack, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    key = _account_key(pg_url, allowed_models=["coda"])
    _plain(_post(stack, key, {"text": "hi", "speaker": "joe", "modelId": "mistv3"}), 403, "access forbidden")
    assert _post(stack, key, {"text": "hi", "speaker": "joe", "modelId": "coda"}).status_code == 200


@pytest.mark.parametrize("accept", ["audio/flac", "application/json", "text/html", "audio/ogg;codecs=vorbis"])
def test_406_for_types_we_cannot_stream(stack, api_key: str, accept: str) -> None:  # type: ignore[no-untyped-def]
    response = _post(stack, api_key, {"text": "hi", "speaker": "joe"}, accept=accept)
    _plain(response, 406, f'modelId "mistv3" can only be returned as streamed audio; set Accept to one of: {LIST}')


@pytest.mark.parametrize(
    ("accept", "content_type", "container"),
    [
        ("audio/webm;codecs=opus", "audio/webm;codecs=opus", "webm"),
        ("audio/ogg;codecs=opus", "audio/ogg;codecs=opus", "ogg"),
        ("audio/mpeg", "audio/mpeg", "mp3"),
        ("audio/mp3", "audio/mpeg", "mp3"),
        ("audio/wav", "audio/wav", "wav"),
        ("audio/L16", "audio/L16;rate=24000;channels=1", None),
        ("audio/pcm", "audio/L16;rate=24000;channels=1", None),
        ("*/*", "audio/L16;rate=24000;channels=1", None),
        ("audio/PCMU", "audio/PCMU;rate=8000;channels=1", None),
        ("audio/x-mulaw", "audio/PCMU;rate=8000;channels=1", None),
    ],
)
def test_every_accept_value(stack, api_key: str, accept: str, content_type: str, container: str | None) -> None:  # type: ignore[no-untyped-def]
    response = _post(stack, api_key, {"text": "Testing every format.", "speaker": "joe"}, accept=accept)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == content_type
    if container is None:
        width = 1 if "PCMU" in content_type else 2
        rate = int(content_type.split("rate=")[1].split(";")[0])
        seconds = len(response.content) / width / rate
    else:
        with av.open(io.BytesIO(response.content), format=container) as f:
            stream = f.streams.audio[0]
            samples = sum(frame.samples for frame in f.decode(stream))
            seconds = samples / stream.rate
    assert 0.8 < seconds < 4.0


def test_mist_json_variant(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    response = _post(stack, api_key, {"text": "Json please.", "speaker": "joe", "modelId": "mist", "audioFormat": "wav"},
                     accept="application/json")
    assert response.status_code == 200
    audio = base64.b64decode(response.json()["audioContent"])
    assert audio[:4] == b"RIFF"


def test_mistv2_server_sent_events(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    response = _post(stack, api_key, {"text": "Events please.", "speaker": "joe", "modelId": "mistv2"},
                     accept="text/event-stream")
    assert response.status_code == 200
    events = [block for block in response.text.split("\n\n") if block.strip()]
    names = [block.split("\n")[0].removeprefix("event: ") for block in events]
    assert names[0] == "chunk" and names[-2:] == ["timestamps", "done"]
    pcm = b"".join(base64.b64decode(json.loads(b.split("data: ", 1)[1])["data"]) for b in events if b.startswith("event: chunk"))
    assert len(pcm) / 2 / 16000 > 0.5  # mistv2's pcm default rate is 16 kHz


@pytest.mark.parametrize(
    "text",
    ["Emoji 🎉 party, zero\u200bwidth and RTL مرحبا.", "\ud800 lone surrogate.", "!!!", "\u0000 nul char.", "12345678901234567890"],
)
def test_odd_unicode_never_500(stack, api_key: str, text: str) -> None:  # type: ignore[no-untyped-def]
    raw = json.dumps({"text": text, "speaker": "joe"}).encode()
    response = _post(stack, api_key, raw=raw)
    assert response.status_code in (200, 400), response.text


#: joe draws its phoneme durations with noise: one short sentence once read 10% apart at the
#: same scale, so a length compared within 10% is the sum of two renders of a paragraph.
SCALED = {"text": "Speed test sentence for clamping. The quick brown fox jumps over the lazy dog, "
                  "and then it runs across the field toward the old stone wall.",
          "speaker": "joe", "samplingRate": 8000}


def _scaled_length(stack, key: str, **extra: object) -> int:  # type: ignore[no-untyped-def]
    return sum(len(_post(stack, key, {**SCALED, **extra}).content) for _ in range(2))


def test_time_scale_out_of_range_is_clamped(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    normal = _scaled_length(stack, api_key)
    slow = _scaled_length(stack, api_key, timeScaleFactor=99)
    maximum = _scaled_length(stack, api_key, timeScaleFactor=2.5)
    # Clamped to 2.5, no error. Short phonemes round up to whole frames at either speed, so the
    # whole stretches 1.8-2.6x: compare with 2.5 itself.
    assert 1.7 < slow / normal < 2.8
    assert abs(slow - maximum) / maximum < 0.1


def _seconds(stack, key: str, body: dict[str, object]) -> float:  # type: ignore[no-untyped-def]
    response = _post(stack, key, {"speaker": "joe", "samplingRate": 8000, **body})
    assert response.status_code == 200, response.text
    return len(response.content) / 2 / 8000


def test_pause_between_brackets(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    base = _seconds(stack, api_key, {"text": "Wait for it."})
    paused = _seconds(stack, api_key, {"text": "Wait <1500> for it.", "pauseBetweenBrackets": True})
    assert 1.2 < paused - base < 2.2  # the pause, give or take the split into two stretches


def test_inline_speed_alpha_slows_the_bracketed_words(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    normal = _seconds(stack, api_key, {"text": "This part is normal. [This part is spoken at another speed.]",
                                       "inlineSpeedAlpha": "1"})
    slow = _seconds(stack, api_key, {"text": "This part is normal. [This part is spoken at another speed.]",
                                     "inlineSpeedAlpha": "0.5"})
    assert slow > normal * 1.3  # mistv3: speedAlpha below 1 is slower


def test_markup_brackets_are_text_when_the_flag_is_off(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    assert _post(stack, api_key, {"text": "Keep <200> as text.", "speaker": "joe"}).status_code == 200


def _usage_rows(pg_url: str, key: str) -> list[tuple[int, str]]:
    from sqlalchemy import text as sql

    from store.db.keys import hash_key

    engine = make_engine(pg_url)
    with engine.connect() as conn:
        rows = conn.execute(sql("SELECT u.characters, u.transport FROM usage u JOIN api_keys k ON k.id = u.api_key_id "
                                "WHERE k.key_hash = :h ORDER BY u.id"), {"h": hash_key(key)}).all()
    engine.dispose()
    return [tuple(r) for r in rows]  # type: ignore[misc]


def test_one_usage_row_per_request_with_its_characters(stack, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    key = _account_key(pg_url)
    text = "Billing counts characters. Each request is billed on its own."
    for _ in range(2):  # a retried request is billed again (the vendor API contract)
        assert _post(stack, key, {"text": text, "speaker": "joe"}).status_code == 200
    assert _usage_rows(pg_url, key) == [(len(text), "http"), (len(text), "http")]


def test_a_client_that_hangs_up_is_billed_for_what_was_synthesized(stack, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    import time

    key = _account_key(pg_url)
    text = " ".join(f"This is sentence number {n} of a long request." for n in range(1, 13))
    with httpx.stream("POST", f"{stack.api_url}/v1/service-tts", headers={"Authorization": f"Bearer {key}"},
                      json={"text": text, "speaker": "joe"}, timeout=60) as response:
        next(response.iter_raw())  # the first sentence arrived; hang up
    deadline = time.monotonic() + 30
    while not (rows := _usage_rows(pg_url, key)):
        assert time.monotonic() < deadline, "the cut-short request was never billed"
        time.sleep(0.2)
    (characters, transport), = rows
    assert transport == "http"
    assert 0 < characters < len(text)


def test_time_scale_zero_is_clamped_to_the_minimum(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    """0 is a number below the range, not "absent": it clamps to 0.4 (faster), not to 1.0."""
    normal = _scaled_length(stack, api_key)
    fast = _scaled_length(stack, api_key, timeScaleFactor=0)
    minimum = _scaled_length(stack, api_key, timeScaleFactor=0.4)
    assert fast / normal < 0.7  # 1.0 would give about 1
    assert abs(fast - minimum) / minimum < 0.1  # the same as the minimum; the next step up (0.5) is 25% longer


def test_phonemes_between_brackets_are_spoken(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    words = _seconds(stack, api_key, {"text": "Before. After."})
    with_ipa = _seconds(stack, api_key, {"text": "Before. {həlˈoʊ wˈɜːld} After.", "phonemizeBetweenBrackets": True})
    assert 0.4 < with_ipa - words < 2.0  # the two phoneme words, spoken between the sentences


def test_phonemes_for_a_voice_without_phoneme_input_are_a_clear_400(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    response = _post(stack, api_key, {"text": "Say {h ə l oʊ}.", "speaker": "walter", "phonemizeBetweenBrackets": True})
    _plain(response, 400, "speaker walter does not accept phonemes between brackets")


@pytest.mark.parametrize("audio_format", ["pcm", "flac", "nonsense"])
def test_json_variant_with_an_unknown_audio_format_is_a_400(stack, api_key: str, audio_format: str) -> None:  # type: ignore[no-untyped-def]
    response = _post(stack, api_key, {"text": "Json please.", "speaker": "joe", "modelId": "mist", "audioFormat": audio_format},
                     accept="application/json")
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/plain")
    assert audio_format in response.text


@pytest.mark.parametrize("model", ["coda", "arcana"])
def test_json_is_406_for_models_without_a_json_representation(stack, api_key: str, model: str) -> None:  # type: ignore[no-untyped-def]
    response = _post(stack, api_key, {"text": "hi", "speaker": "joe", "modelId": model}, accept="application/json")
    assert response.status_code == 406
    assert response.text.startswith(f'modelId "{model}" can only be returned as streamed audio')
