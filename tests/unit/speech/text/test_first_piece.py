"""speech/text/first_piece.py: where a stream's first sentence may be cut (a clause mark, else
before an English phrase's first word; never inside a word, never a stub of a piece)."""

from __future__ import annotations

import pytest

from speech.text.first_piece import MIN_PIECE_CHARS, cut_first

AUSTEN = "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife."
FOX = "The quick brown fox jumps over the lazy dog near the quiet river bank."


def test_the_last_clause_mark_within_reach_ends_the_first_piece() -> None:
    assert cut_first(AUSTEN, "en", 45) == (
        "It is a truth universally acknowledged,",
        "that a single man in possession of a good fortune, must be in want of a wife.",
    )
    head, rest = cut_first(AUSTEN, "en", 100) or ("", "")
    assert head.endswith("good fortune,") and rest == "must be in want of a wife."


def test_a_closing_quote_stays_with_its_clause_mark() -> None:
    text = '"But it is," returned she; "for Mrs. Long has just been here, and she told me all about it."'
    assert cut_first(text, "en", 20) == ('"But it is,"', 'returned she; "for Mrs. Long has just been here, and she told me all about it."')


def test_with_no_clause_mark_in_reach_english_cuts_before_a_phrase() -> None:
    assert cut_first(FOX, "en", 30) == ("The quick brown fox jumps", "over the lazy dog near the quiet river bank.")
    assert cut_first(FOX, "en", 30, phrases=False) is None  # later pieces: clause marks only
    assert cut_first("Der schnelle braune Fuchs springt über den faulen Hund am stillen Ufer.", "de", 30) is None


def test_cjk_clause_marks_need_no_space() -> None:
    text = "吾輩は猫である、名前はまだ無い。どこで生れたかとんと見当がつかぬ。"
    assert cut_first(text, "ja", 12) == ("吾輩は猫である、", "名前はまだ無い。どこで生れたかとんと見当がつかぬ。")


@pytest.mark.parametrize("max_chars", [12, 20, 30, 45, 60, 90])
@pytest.mark.parametrize("text", [AUSTEN, FOX, "Yes, I know, but the rest of this sentence goes on for a while, as they do."])
def test_a_cut_never_splits_a_word_and_loses_nothing(text: str, max_chars: int) -> None:
    cut = cut_first(text, "en", max_chars)
    if cut is None:
        return
    head, rest = cut
    assert f"{head} {rest}" == text
    assert len(head) <= max(max_chars, len(text) // 2)
    assert min(len(head), len(rest)) >= MIN_PIECE_CHARS
    assert head.split() + rest.split() == text.split()  # whole words on both sides


def test_no_cut_where_the_sentence_fits_or_a_piece_would_be_a_stub() -> None:
    assert cut_first(FOX, "en", len(FOX)) is None
    assert cut_first("Well, that is the end of it all.", "en", 10) is None  # "Well," is too short a piece


def test_with_nothing_in_reach_the_earliest_cut_in_the_first_half() -> None:
    """A loaded host's budget holds a few characters: the first piece is then the shortest one
    there is, if it is at most half the sentence."""
    assert cut_first(AUSTEN, "en", 3) == cut_first(AUSTEN, "en", 45)
    assert cut_first(FOX, "en", 3) == ("The quick brown fox jumps", "over the lazy dog near the quiet river bank.")
    late = "Nobody in the village could remember a winter quite as cold, said she."
    assert cut_first(late, "en", 3, phrases=False) is None  # its only clause mark is past the middle
