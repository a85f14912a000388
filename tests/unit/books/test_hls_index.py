"""Where the live playlist's segments are cut: from the timeline alone, the same for a prefix."""

from __future__ import annotations

from books.hls_index import KnownAudio, StreamIndex, next_segments, segment_samples
from speech.audio.aac_frames import FRAME, POST_ROLL

RATE = 24000
LENGTH = segment_samples(RATE)


def test_segments_are_whole_frames_and_at_most_the_target_duration() -> None:
    for rate in (8000, 16000, 22050, 24000, 44100, 48000):
        length = segment_samples(rate)
        assert length % FRAME == 0
        assert 5.8 < length / rate <= 6.0


def test_a_cut_waits_for_the_audio_its_last_frame_overlaps() -> None:
    known = KnownAudio(RATE, known_end=LENGTH + POST_ROLL - 1, book_end=None, chapters=[("One", 0)])
    assert next_segments(0, known) == []
    known = KnownAudio(RATE, known_end=LENGTH + POST_ROLL, book_end=None, chapters=[("One", 0)])
    assert next_segments(0, known) == [(0, LENGTH)]


def test_chapters_start_segments_and_the_book_end_ends_the_last() -> None:
    chapter_two = 2 * LENGTH + 5000  # not on the frame grid: cut at its frame
    end = chapter_two + LENGTH + 777
    known = KnownAudio(RATE, known_end=end, book_end=end, chapters=[("One", 0), ("Two", chapter_two)])
    segments = next_segments(0, known)
    cut = chapter_two // FRAME * FRAME
    assert segments == [(0, LENGTH), (LENGTH, 2 * LENGTH), (2 * LENGTH, cut), (cut, cut + LENGTH), (cut + LENGTH, end)]
    index = StreamIndex(RATE)
    for n, (start, stop) in enumerate(segments):
        index = index.with_segment(start, stop, known.chapters, last=n == len(segments) - 1)
    assert [(c.title, c.segment, c.start) for c in index.chapters] == [("One", 0, 0), ("Two", 3, chapter_two)]
    assert index.complete and index.cursor == end
    assert StreamIndex.from_json(index.to_json()) == index


def test_a_growing_prefix_only_appends_segments() -> None:
    """Whatever the done prefix was when a segment was cut, the whole book cuts it the same."""
    chapters = [("One", 0), ("Two", 100_000), ("Three", 400_000)]
    end = 700_003
    whole = next_segments(0, KnownAudio(RATE, end, end, chapters))
    listed: list[tuple[int, int]] = []
    for known_end in range(0, end, 37_000):
        visible = [c for c in chapters if c[1] <= known_end]
        cursor = listed[-1][1] if listed else 0
        listed += next_segments(cursor, KnownAudio(RATE, known_end, None, visible))
        assert listed == whole[: len(listed)]
    listed += next_segments(listed[-1][1], KnownAudio(RATE, end, end, chapters))
    assert listed == whole
    assert sum(stop - start for start, stop in listed) == end
