"""The vendor API contract's 400 table, rule by rule, at the parser (the HTTP tests check the same over the wire)."""

from __future__ import annotations

import json

import pytest

from facade import errors as e
from facade.validation import MAX_TEXT_CHARS, parse_json_body, parse_request


def _error(payload: object) -> tuple[int, str]:
    with pytest.raises(e.ApiError) as info:
        raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        parse_request(parse_json_body(raw))
    return info.value.status, info.value.message


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"", "request body is required"),
        (b"   ", "request body is required"),
        ([1, 2], "payload must be an object"),
        ("text", "payload must be an object"),
        (b"{not json", "payload must be an object"),
        ({"speaker": "joe"}, "text is required"),
        ({"text": 5, "speaker": "joe"}, "text must be a string"),
        ({"text": {"a": 1}, "speaker": "joe"}, "text must be a string"),
        ({"text": None, "speaker": "joe"}, "text must be a string"),
        ({"text": "", "speaker": "joe"}, "text must not be empty"),
        ({"text": "x" * (MAX_TEXT_CHARS + 1), "speaker": "joe"}, "text is too long"),
        ({"text": "hello"}, "speaker is required"),
        ({"text": "hello", "speaker": "joe", "lang": 3}, "lang must be a string"),
        ({"text": "hello", "speaker": "joe", "audioFormat": 3}, "audioFormat must be a string"),
    ],
)
def test_contract_400_messages(payload: object, message: str) -> None:
    assert _error(payload) == (400, message)


def test_exactly_1000_characters_pass() -> None:
    req = parse_request({"text": "a" * MAX_TEXT_CHARS, "speaker": "joe"})
    assert len(req.text) == MAX_TEXT_CHARS


def test_length_counts_characters_not_bytes() -> None:
    req = parse_request({"text": "é" * MAX_TEXT_CHARS, "speaker": "joe"})
    assert len(req.text.encode()) == 2 * MAX_TEXT_CHARS


@pytest.mark.parametrize(("given", "expected"), [(0.1, 0.4), (9, 2.5), (1.7, 1.7), (None, 1.0)])
def test_time_scale_is_clamped_without_error(given: float | None, expected: float) -> None:
    payload = {"text": "hi", "speaker": "joe"}
    if given is not None:
        payload["timeScaleFactor"] = given
    assert parse_request(payload).time_scale == pytest.approx(expected)


def test_booleans_arrive_as_strings_on_websockets() -> None:
    req = parse_request({"text": "hi", "speaker": "joe", "noTextNormalization": "true", "pauseBetweenBrackets": "false"})
    assert req.no_text_normalization is True
    assert req.pause_between_brackets is False


def test_no_limit_for_jobs() -> None:
    assert len(parse_request({"text": "a" * 5000, "speaker": "joe"}, max_chars=None).text) == 5000
