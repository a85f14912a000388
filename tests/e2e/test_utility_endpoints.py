"""/oov, /textnorm and /phonemize over real HTTP, with their error shapes."""

from __future__ import annotations

import httpx
import pytest

pytestmark = [pytest.mark.integration]


def _post(stack, path: str, key: str | None, body: object) -> httpx.Response:  # type: ignore[no-untyped-def]
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.post(f"{stack.api_url}{path}", json=body, headers=headers, timeout=30)


def test_textnorm_spells_numbers(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    response = _post(stack, "/textnorm", api_key, {"text": "Call 555-0123 at 3:45 pm about $20.", "lang": "en"})
    assert response.status_code == 200
    normalized = response.json()["normalized"]
    assert "twenty dollars" in normalized
    assert not any(ch.isdigit() for ch in normalized)


def test_textnorm_errors_are_json(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    missing = _post(stack, "/textnorm", api_key, {"lang": "en"})
    assert (missing.status_code, missing.json()) == (400, {"error": "text is required"})
    unauth = _post(stack, "/textnorm", None, {"text": "x"})
    assert (unauth.status_code, unauth.json()) == (401, {"error": "Missing Authorization header"})


def test_phonemize_returns_the_engine_phonemes(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    response = _post(stack, "/phonemize", api_key, {"text": "hello world", "lang": "en", "speaker": "joe"})
    assert response.status_code == 200
    assert "həlˈoʊ" in response.json()["phonemes"]
    bad = _post(stack, "/phonemize", api_key, {"text": "hello", "lang": "xx"})
    assert bad.status_code == 400 and "error" in bad.json()


def test_oov_lists_words_outside_the_dictionary(stack, api_key: str) -> None:  # type: ignore[no-untyped-def]
    response = _post(stack, "/oov", api_key, {"text": "The cat zorblaxed the flumpington."})
    assert response.status_code == 200
    words = [w.lower() for w in response.json()]
    assert "zorblaxed" in words and "flumpington" in words
    assert "cat" not in words


@pytest.mark.parametrize("model", [["mistv3"], 7, {"x": 1}])
def test_phonemize_with_a_non_string_model_is_a_json_400(stack, api_key: str, model: object) -> None:  # type: ignore[no-untyped-def]
    response = _post(stack, "/phonemize", api_key, {"text": "hello", "lang": "en", "speaker": "joe", "modelId": model})
    assert (response.status_code, response.json()) == (400, {"error": "modelId must be a string"})
