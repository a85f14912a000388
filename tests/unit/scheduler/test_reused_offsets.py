"""A chunk reused from the account's cache stands elsewhere in a revised book: its words' text
offsets are moved into the new job's text, or left out when they cannot be known, never copied."""

from __future__ import annotations

from scheduler.chunk_cache import Wanted, labelled
from scheduler.objects import ChunkMeta

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
