"""The JSON WebSockets (/ws3, /ws2) and the raw one (/ws), driven by a real client library the
way LiveKit's and Pipecat's plugins drive the vendor's: query-string parameters, one text
message per sentence with a contextId, flush, eos."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _ws_url(stack: Any, path: str, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return stack.api_url.replace("http://", "ws://") + path + ("?" + query if query else "")


async def _events(ws: Any, until_done: int, timeout: float = 60, *, until: str = "done") -> list[dict[str, Any]]:
    """Events up to the ``until_done``-th event of type ``until``."""
    events: list[dict[str, Any]] = []
    done = 0
    while done < until_done:
        message = json.loads(await asyncio.wait_for(ws.recv(), timeout))
        events.append(message)
        done += message["type"] == until
    return events


async def test_ws3_livekit_style_session(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    url = _ws_url(stack, "/ws3", speaker="joe", modelId="mistv3", audioFormat="pcm", samplingRate="16000", segment="never")
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {api_key}"}) as ws:
        await ws.send(json.dumps({"text": "Hello from the first context. ", "contextId": "c1"}))
        await ws.send(json.dumps({"operation": "flush", "contextId": "c1"}))
        first = await _events(ws, 1)
        await ws.send(json.dumps({"text": "And a second one. ", "contextId": "c2"}))
        await ws.send(json.dumps({"operation": "eos"}))
        second = await _events(ws, 1)
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 10)
    for events, context in ((first, "c1"), (second, "c2")):
        kinds = [e["type"] for e in events]
        assert kinds[0] == "chunk" and kinds[-2:] == ["timestamps", "done"]
        assert {e["contextId"] for e in events} == {context}
        audio = b"".join(base64.b64decode(e["data"]) for e in events if e["type"] == "chunk")
        assert 0.5 < len(audio) / 2 / 16000 < 5.0
        stamps = next(e for e in events if e["type"] == "timestamps")["word_timestamps"]
        assert len(stamps["words"]) == len(stamps["start"]) == len(stamps["end"]) >= 3
        assert stamps["start"] == sorted(stamps["start"])


async def test_ws3_by_sentence_synthesizes_each_sentence(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    url = _ws_url(stack, "/ws3", speaker="joe", audioFormat="mulaw")
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {api_key}"}) as ws:
        await ws.send(json.dumps({"text": "One sentence here. Another"}))
        events = await _events(ws, 1, until="timestamps")  # audio before any flush
        assert events[0]["type"] == "chunk" and "done" not in [e["type"] for e in events]
        words = events[-1]["word_timestamps"]["words"]
        assert [w.strip(".").lower() for w in words] == ["one", "sentence", "here"]
        await ws.send(json.dumps({"text": " sentence follows."}))
        events = await _events(ws, 1, until="timestamps")
        words = events[-1]["word_timestamps"]["words"]
        assert [w.strip(".").lower() for w in words] == ["another", "sentence", "follows"]
        await ws.send(json.dumps({"operation": "flush"}))  # nothing buffered: done for what was spoken
        assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == {"type": "done", "contextId": None}


@pytest.mark.parametrize("segment", ["bySentence", "immediate"])
async def test_ws3_done_answers_the_flush_not_each_sentence(stack, api_key: str, segment: str) -> None:  # type: ignore[no-untyped-def]
    """LiveKit's plugin sends one message per sentence (each ending in a space), then one flush, and
    ends the turn at the first ``done``; Pipecat closes the turn's audio at ``done``. So sentences
    synthesized as they arrive send chunks and timestamps, and exactly one ``done`` follows the
    flush, after the audio of every sentence before it."""
    url = _ws_url(stack, "/ws3", speaker="joe", modelId="coda", audioFormat="pcm", samplingRate="16000", segment=segment)
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {api_key}"}) as ws:
        await ws.send(json.dumps({"text": "The first sentence is here. ", "contextId": "turn-1"}))
        await ws.send(json.dumps({"text": "The second follows it. ", "contextId": "turn-1"}))
        await ws.send(json.dumps({"operation": "flush", "contextId": "turn-1"}))
        events = await _events(ws, 1)
        await ws.send(json.dumps({"operation": "eos"}))
        tail = []
        with pytest.raises(ConnectionClosed):
            while True:
                tail.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
    kinds = [e["type"] for e in events]
    assert kinds.count("done") == 1 and kinds[-1] == "done"
    assert kinds.count("timestamps") == 2
    assert {e["contextId"] for e in events} == {"turn-1"}
    words = [w.strip(".").lower() for e in events if e["type"] == "timestamps" for w in e["word_timestamps"]["words"]]
    assert words == ["the", "first", "sentence", "is", "here", "the", "second", "follows", "it"]
    audio = b"".join(base64.b64decode(e["data"]) for e in events if e["type"] == "chunk")
    assert 1.5 < len(audio) / 2 / 16000 < 6.0
    assert tail == []  # eos with nothing new since the done: no second done, the socket closes


async def test_ws3_bad_message_is_an_error_event_and_socket_stays(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    url = _ws_url(stack, "/ws3", speaker="joe", segment="immediate")
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {api_key}"}) as ws:
        await ws.send("not json")
        error = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert error == {"type": "error", "message": "payload must be an object", "contextId": None}
        await ws.send(json.dumps({"text": "Still here."}))
        events = await _events(ws, 1, until="timestamps")
        assert events[0]["type"] == "chunk"


async def test_ws3_clear_drops_the_buffer(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    url = _ws_url(stack, "/ws3", speaker="joe", segment="never")
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {api_key}"}) as ws:
        await ws.send(json.dumps({"text": "This text is dropped. "}))
        await ws.send(json.dumps({"operation": "clear"}))
        await ws.send(json.dumps({"text": "Kept."}))
        await ws.send(json.dumps({"operation": "flush"}))
        events = await _events(ws, 1)
        words = next(e for e in events if e["type"] == "timestamps")["word_timestamps"]["words"]
        assert [w.strip(".").lower() for w in words] == ["kept"]


@pytest.mark.parametrize(
    ("headers", "status", "body"),
    [
        ({}, 401, "missing headers"),
        ({"Authorization": "Bearer "}, 401, "empty apikey"),
        ({"Authorization": "Bearer lk_" + "y" * 40}, 401, "invalid api key"),
    ],
)
async def test_auth_fails_at_the_upgrade(stack, headers: dict[str, str], status: int, body: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidStatus) as info:
        async with websockets.connect(_ws_url(stack, "/ws3", speaker="joe"), additional_headers=headers):
            pass
    assert info.value.response.status_code == status
    assert info.value.response.body.decode() == body


async def test_unknown_language_fails_at_the_upgrade(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidStatus) as info:
        async with websockets.connect(
            _ws_url(stack, "/ws3", speaker="joe", lang="xx"), additional_headers={"Authorization": f"Bearer {api_key}"}
        ):
            pass
    assert info.value.response.status_code == 400
    assert info.value.response.body.decode() == "Language xx is not supported for model mistv3"


async def test_raw_ws_text_in_audio_out(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    url = _ws_url(stack, "/ws", speaker="joe", audioFormat="pcm", samplingRate="8000")
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {api_key}"}) as ws:
        await ws.send("Hello world")
        await ws.send("<EOS>")
        audio = bytearray()
        with pytest.raises(ConnectionClosed):
            while True:
                frame = await asyncio.wait_for(ws.recv(), 30)
                assert isinstance(frame, bytes)
                audio.extend(frame)
    assert 0.4 < len(audio) / 2 / 8000 < 4.0


async def test_failure_after_open_closes_with_1011_and_the_http_reason(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    async with websockets.connect(_ws_url(stack, "/ws3", speaker="joe"),
                                  additional_headers={"Authorization": f"Bearer {api_key}"}) as ws:
        await ws.send(json.dumps({"text": "a" * 1001}))
        with pytest.raises(ConnectionClosed) as info:
            await asyncio.wait_for(ws.recv(), 10)
    assert info.value.rcvd is not None
    assert (info.value.rcvd.code, info.value.rcvd.reason) == (1011, "400: text is too long")


async def test_connection_rate_per_account_is_429(stack, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    import uuid

    from store.db import accounts, keys
    from store.db.session import make_engine, make_sessionmaker, session_scope

    engine = make_engine(pg_url)
    with session_scope(make_sessionmaker(engine)) as session:
        account = accounts.create_account(session=session, name=f"ws-{uuid.uuid4().hex[:6]}", ws_connections_per_minute=2)
        key = keys.create_key(session=session, account_id=account.id)[1]
    engine.dispose()
    headers = {"Authorization": f"Bearer {key}"}
    url = _ws_url(stack, "/ws3", speaker="joe")
    async with websockets.connect(url, additional_headers=headers), websockets.connect(url, additional_headers=headers):
        with pytest.raises(InvalidStatus) as info:
            async with websockets.connect(url, additional_headers=headers):
                pass
    assert info.value.response.status_code == 429
    assert info.value.response.body.decode() == "Currently at websocket limit"


async def test_hang_up_mid_synthesis_bills_what_was_made(stack, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    import uuid

    from sqlalchemy import text as sql

    from store.db import accounts, keys
    from store.db.session import make_engine, make_sessionmaker, session_scope

    engine = make_engine(pg_url)
    with session_scope(make_sessionmaker(engine)) as session:
        account = accounts.create_account(session=session, name=f"hang-{uuid.uuid4().hex[:6]}")
        key = keys.create_key(session=session, account_id=account.id)[1]
        account_id = account.id
    text = " ".join(f"Sentence number {n} is here to take some time." for n in range(1, 11))
    async with websockets.connect(_ws_url(stack, "/ws3", speaker="joe", segment="never"),
                                  additional_headers={"Authorization": f"Bearer {key}"}) as ws:
        await ws.send(json.dumps({"text": text}))
        await ws.send(json.dumps({"operation": "flush"}))
        first = json.loads(await asyncio.wait_for(ws.recv(), 30))
        assert first["type"] == "chunk"
    rows: list[tuple[int, str]] = []
    for _ in range(100):
        with engine.connect() as conn:
            rows = [tuple(r) for r in conn.execute(sql("SELECT characters, transport FROM usage WHERE account_id = :a"),
                                                   {"a": account_id}).all()]
        if rows:
            break
        await asyncio.sleep(0.2)
    engine.dispose()
    assert len(rows) == 1 and rows[0][1] == "ws"
    assert 0 < rows[0][0] < len(text)


async def test_a_failing_run_closes_with_1011_before_eos(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    """A run that fails after the upgrade (here: phonemes for a formant voice) must close the socket
    at once with the HTTP answer as reason; a client waiting for ``done`` would otherwise hang."""
    url = _ws_url(stack, "/ws3", speaker="walter", audioFormat="pcm", phonemizeBetweenBrackets="true", segment="never")
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {api_key}"}) as ws:
        await ws.send(json.dumps({"text": "Say {h ə l oʊ} now. ", "contextId": "p"}))
        await ws.send(json.dumps({"operation": "flush", "contextId": "p"}))
        with pytest.raises(ConnectionClosed) as info:
            while True:
                await asyncio.wait_for(ws.recv(), 30)
    assert info.value.rcvd is not None
    assert info.value.rcvd.code == 1011
    assert info.value.rcvd.reason == "400: speaker walter does not accept phonemes between brackets"


async def test_phonemes_between_brackets_are_spoken_on_ws3(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    url = _ws_url(stack, "/ws3", speaker="joe", audioFormat="pcm", samplingRate="16000",
                  phonemizeBetweenBrackets="true", segment="never")
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {api_key}"}) as ws:
        await ws.send(json.dumps({"text": "{həlˈoʊ wˈɜːld}"}))
        await ws.send(json.dumps({"operation": "flush"}))
        events = await _events(ws, 1)
    audio = b"".join(base64.b64decode(e["data"]) for e in events if e["type"] == "chunk")
    assert 0.4 < len(audio) / 2 / 16000 < 3.0


@pytest.mark.parametrize(("path", "endpoint"), [("/ws3", "ws3"), ("/ws2", "ws2"), ("/ws", "ws")])
async def test_an_account_limited_to_one_socket_endpoint_can_synthesize_there(  # type: ignore[no-untyped-def]
    stack, pg_url: str, path: str, endpoint: str
) -> None:
    """Endpoint permissions are checked under the socket's own name at the upgrade *and* for each
    run, so an account allowed only ``ws3`` (or ``ws2``, ``ws``) is served, and refused elsewhere."""
    import uuid

    from store.db import accounts, keys
    from store.db.session import make_engine, make_sessionmaker, session_scope

    engine = make_engine(pg_url)
    with session_scope(make_sessionmaker(engine)) as session:
        account = accounts.create_account(session=session, name=f"ep-{uuid.uuid4().hex[:6]}", allowed_endpoints=[endpoint])
        key = keys.create_key(session=session, account_id=account.id)[1]
    engine.dispose()
    headers = {"Authorization": f"Bearer {key}"}
    params = {"speaker": "joe", "audioFormat": "pcm", "samplingRate": "16000"}
    async with websockets.connect(_ws_url(stack, path, **params), additional_headers=headers) as ws:
        if path == "/ws":
            await ws.send("Allowed here.")
            await ws.send("<EOS>")
            audio = b""
            with pytest.raises(ConnectionClosed):
                while True:
                    audio += await asyncio.wait_for(ws.recv(), 30)
            assert ws.close_code == 1000
        else:
            await ws.send(json.dumps({"text": "Allowed here. "}))
            await ws.send(json.dumps({"operation": "flush"}))
            events = await _events(ws, 1)
            audio = b"".join(base64.b64decode(e["data"]) for e in events if e["type"] == "chunk")
    assert len(audio) / 2 / 16000 > 0.3
    other = "/ws2" if path != "/ws2" else "/ws3"
    with pytest.raises(InvalidStatus) as refused:
        async with websockets.connect(_ws_url(stack, other, **params), additional_headers=headers):
            pass
    assert refused.value.response.status_code == 403
    assert refused.value.response.body == b"access forbidden"


async def test_raw_ws_flush_and_clear(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    """``<CLEAR>`` drops unflushed text; ``<FLUSH>`` speaks what is buffered without a sentence end."""
    url = _ws_url(stack, "/ws", speaker="joe", audioFormat="pcm", samplingRate="16000")
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {api_key}"}) as ws:
        await ws.send("this text is dropped")
        await ws.send("<CLEAR>")
        await ws.send("two words")
        await ws.send("<FLUSH>")
        first = await asyncio.wait_for(ws.recv(), 30)
        assert isinstance(first, bytes) and first
        await ws.send("<EOS>")
        audio = first
        with pytest.raises(ConnectionClosed):
            while True:
                audio += await asyncio.wait_for(ws.recv(), 30)
    seconds = len(audio) / 2 / 16000
    assert 0.3 < seconds < 1.8  # "two words", not the dropped sentence as well
