"""How a delivery is cut into files: a long chapter split at its paragraph pauses, the retail
sample cut in a pause after the credits; and the credits planned around the book."""

from __future__ import annotations

import numpy as np

from books import acx, credits
from books.chapters import Section
from scheduler import planning
from scheduler.job_params import JobParams
from speech.audio import Chapter

RATE = acx.RATE


def test_a_chapter_longer_than_a_file_may_be_is_split_at_the_latest_paragraph_under_the_limit() -> None:
    chapters = [Chapter("One", 0.0, 50.0), Chapter("Two", 50.0, 130.0)]
    cuts = [20.0, 35.0, 70.0, 95.0, 118.0]
    got = acx.pieces(chapters, cuts, 130 * RATE, max_file_s=40.0)  # 36.75 s of speech a file
    assert [p.title for p in got] == ["One", "One (part 2)", "Two", "Two (part 2)", "Two (part 3)"]
    assert [(p.start / RATE, p.end / RATE) for p in got] == [(0.0, 35.0), (35.0, 50.0), (50.0, 70.0), (70.0, 95.0), (95.0, 130.0)]
    assert all(p.end - p.start <= (40.0 - acx.HEAD_S - acx.TAIL_S) * RATE for p in got)
    assert [p.name for p in got][:2] == ["00 One.mp3", "01 One (part 2).mp3"]


def test_the_retail_sample_starts_after_the_credits_and_ends_in_a_pause() -> None:
    total = 400 * RATE
    master = np.zeros(total, dtype="<i2")
    master[int(5.2 * RATE) : int(390 * RATE)] = 3000  # speech from 5.2 s ...
    for pause in (100.0, 170.0, 250.0):  # ... with pauses of a second
        master[int(pause * RATE) : int((pause + 1) * RATE)] = 0
    chapters = [Chapter(acx.OPENING, 0.0, 5.0), Chapter("One", 5.0, 395.0), Chapter(acx.CLOSING, 395.0, 400.0)]
    sample = acx.sample_piece(master, chapters, total)
    assert sample.sample and sample.start == int(5.2 * RATE)
    assert 170.0 < sample.end / RATE < 171.0  # the last pause before three minutes


def test_credits_open_and_close_the_book_as_chapters_of_their_own_and_bill_nothing() -> None:
    params = JobParams(title="Rain", author="A. Writer", speaker="joe", model_id="mistv3", lang="en")
    text = "Chapter 1\n\nIt rained.\n\nChapter 2\n\nIt stopped."
    sections = [Section("Chapter 1", 11, 21), Section("Chapter 2", 34, len(text))]
    whole, marked = credits.with_credits(text, sections, params)
    texts, layout = planning.split(whole, "en", sections=marked)
    assert [m.title for m in layout.chapters] == [credits.OPENING, "Chapter 1", "Chapter 2", credits.CLOSING]
    assert texts[0] == "Rain. Written by A. Writer. Narrated by Joe, a synthetic voice."
    assert texts[1] == "It rained." and texts[2] == "It stopped." and "This has been Rain" in texts[3]
    assert credits.credit_chunks(layout, len(texts)) == [0, 3]
