from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from books.casting import SPEAKER_TURN_MS, Cast, check_cast
from books.layout import PAUSE_PARAGRAPH_MS, PAUSE_SENTENCE_MS, Layout
from scheduler.job_params import JobParams
from scheduler.planning import batches, split


@given(st.dictionaries(st.integers(0, 500), st.integers(1, 900), min_size=1, max_size=200))
def test_batches_cover_every_chunk_once_within_budget(lengths: dict[int, int]) -> None:
    groups = batches(lengths, budget=2000)
    flat = [i for g in groups for i in g]
    assert sorted(flat) == sorted(lengths)
    for group in groups:
        assert len(group) == 1 or sum(lengths[i] for i in group) <= 2000


def test_batches_group_similar_lengths() -> None:
    lengths = {0: 10, 1: 900, 2: 12, 3: 880, 4: 11}
    groups = batches(lengths, budget=100)
    assert [sorted(g) for g in groups] == [[0, 2, 4], [3], [1]]


def test_split_marks_paragraph_pauses() -> None:
    texts, layout = split("One sentence. Two sentences.\n\nA new paragraph starts here.", "en")
    assert "".join(texts).replace(" ", "") == "Onesentence.Twosentences.Anewparagraphstartshere."
    assert layout.pauses_ms[0] == 0
    assert PAUSE_PARAGRAPH_MS in layout.pauses_ms
    assert Layout.from_json(layout.to_json()) == layout
    assert all(p in (0, PAUSE_SENTENCE_MS, PAUSE_PARAGRAPH_MS) for p in layout.pauses_ms)


def test_chapters_start_on_their_own_chunk_with_the_chapter_pause() -> None:
    from books.chapters import detect_sections
    from books.layout import ChapterMark, Pauses

    body = "It was a dark and stormy night. The rain fell in torrents, except at occasional intervals. " * 4
    text = f"Chapter 1\n\n{body}\n\nChapter 2\n\n{body}"
    texts, layout = split(text, "en", sections=detect_sections(text), pauses=Pauses(chapter_ms=3000))
    assert [c.title for c in layout.chapters] == ["Chapter 1", "Chapter 2"]
    second = layout.chapters[1].chunk
    assert texts[second].startswith("Chapter 2")
    assert layout.pauses_ms[second] == 3000
    assert layout.pauses_ms.count(3000) == 1
    assert layout.chapters[0] == ChapterMark("Chapter 1", 0)
    assert Layout.from_json(layout.to_json()) == layout


def test_layout_reads_plans_written_before_chapters_and_batches() -> None:
    old = Layout.from_json(b'{"pauses_ms": [0, 250]}')
    assert old == Layout([0, 250], [], [])


def test_pauses_from_params() -> None:
    from books.layout import Pauses
    from scheduler.job_params import JobParams

    voice = {"speaker": "joe", "model_id": "mistv3", "lang": "en"}
    assert Pauses.from_params(JobParams(**voice)) == Pauses()
    given = JobParams(**voice, pauses={"chapter": 5000, "sentence": 100})
    assert Pauses.from_params(given) == Pauses(100, PAUSE_PARAGRAPH_MS, 5000)


def test_batches_in_book_order_stretches_group_lengths_within_each() -> None:
    lengths = {0: 10, 1: 90, 2: 11, 3: 85, 4: 12, 5: 95, 6: 9}
    groups = batches(lengths, budget=100, window=200)  # stretches: 0-3 (196 chars), 4-6
    assert groups == [[0, 2], [3], [1], [6, 4], [5]]
    flat = [i for g in batches({i: 50 + i % 7 for i in range(40)}, budget=200, window=800) for i in g]
    assert sorted(flat[:15]) == list(range(15))  # the first stretch (15 chunks) comes first, whole


def test_a_cast_splits_chunks_at_each_change_of_voice_with_natural_pauses() -> None:
    cast = Cast.from_params(JobParams(speaker="joe", model_id="coda", lang="en", cast=check_cast({"characters": {"Elizabeth": "nora"}}, "joe")))
    text = "It rained.\n\n“Shall we walk?” said Elizabeth. “It is fine.”\n\n“Yes,” said Elizabeth, “it is.”"
    texts, layout = split(text, "en", cast=cast)
    assert list(zip(texts, layout.voices, layout.pauses_ms, strict=True)) == [
        ("It rained.", "joe", 0),
        ("“Shall we walk?”", "nora", PAUSE_PARAGRAPH_MS),
        ("said Elizabeth.", "joe", PAUSE_SENTENCE_MS),
        ("“It is fine.”", "nora", PAUSE_SENTENCE_MS),
        ("“Yes,”", "nora", PAUSE_PARAGRAPH_MS),
        ("said Elizabeth,", "joe", SPEAKER_TURN_MS),  # inside a sentence: a short breath
        ("“it is.”", "nora", SPEAKER_TURN_MS),
    ]
    assert layout.speakers[1] == "Elizabeth" and layout.speakers[0] is None
    assert Layout.from_json(layout.to_json()) == layout
    groups = batches({i: len(t) for i, t in enumerate(texts)}, budget=10_000, voices=layout.voices)
    assert all(len({layout.voices[i] for i in group}) == 1 for group in groups)
    assert sorted(i for g in groups for i in g) == list(range(len(texts)))


def _chapters_text(chapters: list[list[str]]) -> str:
    return "\n\n".join(f"Chapter {i}\n\n" + "\n\n".join(ps) for i, ps in enumerate(chapters, 1)) + "\n"


def _common_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    head = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    tail = next((i for i, (x, y) in enumerate(zip(reversed(a), reversed(b), strict=False)) if x != y), min(len(a), len(b)))
    return head, tail


def test_an_edit_moves_only_the_chunks_of_its_paragraph() -> None:
    """Chunks are anchored at paragraphs (and chapters): a sentence added to a paragraph of
    chapter 7 that spans several chunks re-cuts that paragraph only; every chunk before and
    after it, and the pause before each, is what a plan of the old text had."""
    from books.chapters import detect_sections
    from tests.support.books import revised_book

    original, edited, changed = revised_book()
    before, before_layout = split(original, "en", sections=detect_sections(original))
    after, after_layout = split(edited, "en", sections=detect_sections(edited))
    head, tail = _common_ends(before, after)
    assert len(before) - head - tail <= 2  # three sentences in (at most) the chapter's two paragraphs
    assert [t for t in after[head : len(after) - tail] if any(c in t for c in changed)]

    sentence = "She said nothing more that evening, and the house was quiet until the morning came. "
    long_paragraph = " ".join([sentence.strip()] * 12)  # ~1,000 characters: two chunks of at most 600
    book = [[f"Paragraph {c}.{p} begins. " + long_paragraph for p in range(3)] for c in range(20)]
    grown = [list(ps) for ps in book]
    grown[6][1] = grown[6][1].replace(sentence, sentence + "A new sentence joins it here. ", 1) + " " + sentence * 4
    old_texts, old_layout = split(_chapters_text(book), "en", sections=detect_sections(_chapters_text(book)))
    new_texts, new_layout = split(_chapters_text(grown), "en", sections=detect_sections(_chapters_text(grown)))
    head, tail = _common_ends(old_texts, new_texts)
    first = next(i for i, t in enumerate(new_texts) if t.startswith("Paragraph 6.1 "))
    following = next(i for i, t in enumerate(new_texts) if t.startswith("Paragraph 6.2 "))
    assert len(new_texts) > len(old_texts)  # the paragraph grew by a chunk, which shifts every index after it
    assert first <= head and len(new_texts) - tail <= following  # yet only that paragraph's chunks differ
    assert old_layout.pauses_ms[:head] == new_layout.pauses_ms[:head]
    assert old_layout.pauses_ms[len(old_texts) - tail :] == new_layout.pauses_ms[len(new_texts) - tail :]
    assert old_texts[len(old_texts) - tail :] == new_texts[len(new_texts) - tail :]
