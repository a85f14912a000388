"""Chunk keys: one per attempt, and readers resolve a chunk through the key its row recorded."""

from __future__ import annotations

import uuid

import pytest

from books.chunks import ChunkKeys, chunk_audio_key, chunk_meta_key, meta_key_of


def test_each_attempt_writes_keys_of_its_own() -> None:
    job = uuid.uuid4()
    first, second = chunk_audio_key(job, 7, "a1"), chunk_audio_key(job, 7, "b2")
    assert first != second and first.startswith(f"jobs/{job}/chunks/000007")
    assert meta_key_of(first) == chunk_meta_key(job, 7, "a1")
    assert meta_key_of(chunk_audio_key(job, 7)) == chunk_meta_key(job, 7)  # chunks stored before attempts


def test_readers_take_the_rows_key_and_fall_back_to_the_attempt_less_one() -> None:
    job = uuid.uuid4()
    keys = ChunkKeys(job, (chunk_audio_key(job, 0, "w1"), None))
    assert keys.audio_key(0) == chunk_audio_key(job, 0, "w1")
    assert keys.meta_key(0) == chunk_meta_key(job, 0, "w1")
    assert keys.audio_key(1) == chunk_audio_key(job, 1)  # no key recorded
    assert keys.audio_key(5) == chunk_audio_key(job, 5)  # past the rows given


def test_a_key_that_is_not_chunk_audio_is_refused() -> None:
    with pytest.raises(ValueError, match="not a chunk audio key"):
        meta_key_of("jobs/x/audio.wav")
