"""A chunk reused from the account's cache stands elsewhere in a revised book: its words' text
offsets are moved into the new job's text, or left out when they cannot be known, never copied."""

from __future__ import annotations

from books.chunks import ChunkMeta
from scheduler.chunk_cache import Wanted, labelled

OLD_BOOK = "Chapter one.\n\nIt was late. She left."
NEW_BOOK = "Chapter one, revised at length.\n\nIt was late. She left."
CHUNK = "It was late. She left."


def _cached() -> ChunkMeta:
    at = OLD_BOOK.index(CHUNK)
    words = [{"word": w, "start": 0.1 * i, "end": 0.1 * i + 0.08, "textOffset": at + CHUNK.index(w), "textLength": len(w)}
             for i, w in enumerate(["It", "was", "late", "She", "left"])]
    return {"sample_rate": 24000, "duration_s": 1.0, "words": words, "text": CHUNK, "sources": [(0, at)]}  # type: ignore[typeddict-item]


def test_offsets_move_with_the_chunk() -> None:
    out = labelled(_cached(), Wanted(3, CHUNK, "k", None, [(0, NEW_BOOK.index(CHUNK))]))
    assert [NEW_BOOK[w["textOffset"]:w["textOffset"] + w["textLength"]] for w in out["words"]] == ["It", "was", "late", "She", "left"]
    assert out["sources"] == [(0, NEW_BOOK.index(CHUNK))]


def test_without_the_new_place_the_offsets_are_left_out() -> None:
    out = labelled(_cached(), Wanted(3, CHUNK, "k"))
    assert all("textOffset" not in w for w in out["words"]) and "sources" not in out


def test_a_chunk_written_differently_keeps_no_offsets() -> None:
    out = labelled(_cached(), Wanted(3, "It was late.  She left.", "k", None, [(0, 40)]))
    assert all("textOffset" not in w for w in out["words"])


def test_a_copied_chunk_takes_the_length_of_the_audio_copied(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A key rendered twice (a voice with random noise comes out a little longer or shorter) has
    the later audio in the cache: the copy's duration is that audio's, not the first render's,
    or assembly finds a chunk whose samples disagree with its row."""
    import uuid

    from books.chunks import chunk_meta_key
    from scheduler.chunk_cache import _copy, keep
    from store.objects.local import LocalObjectStore

    objects, account, job = LocalObjectStore(tmp_path), uuid.uuid4(), uuid.uuid4()
    first: ChunkMeta = {"sample_rate": 100, "samples": 300, "duration_s": 3.0, "words": [], "text": CHUNK}
    keep(objects, account, "k", b"\0\0" * 300, first)
    keep(objects, account, "k", b"\0\0" * 250, {**first, "samples": 250, "duration_s": 2.5})
    assert _copy(objects, account, job, "a1", Wanted(0, CHUNK, "k")) == 2.5
    import json

    assert json.loads(objects.get_bytes(chunk_meta_key(job, 0, "a1")))["samples"] == 250
