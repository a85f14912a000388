"""Assembly ahead of the last chunk (chapter loudness scope), on a local store with synthetic
chunks: the same book whether it was assembled while its chunks landed or all at the end, and
loudness joined from per-chunk energies equal to measuring the stitched file."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import av
import numpy as np
import pyloudnorm
import pytest

from books import rendering
from books.chunks import chunk_audio_key, chunk_meta_key
from books.layout import ChapterMark, Layout
from books.timeline import Timeline, faded
from scheduler import assembly, progressive_assembly
from scheduler.job_params import JobParams
from scheduler.objects import plan_key
from speech.audio import LoudnessMeter, integrated_loudness, segments_loudness
from store.objects.local import LocalObjectStore

RATE = 22050
# three chapters; inside them sentence (250 ms) and paragraph (700 ms) pauses
PAUSES = [0, 250, 700, 250, 2000, 700, 250, 700, 2000, 250, 700]
CHAPTERS = [ChapterMark("One", 0), ChapterMark("Two", 4), ChapterMark("Three", 8)]
LEVELS = [0.08, 0.08, 0.08, 0.08, 0.3, 0.3, 0.3, 0.3, 0.15, 0.15, 0.9]  # chapter two loud; chunk 10 peaks


def _params(stored: dict[str, object]) -> JobParams:
    """A job's options as a row holds them: the voice of the fixtures' books, and ``stored``."""
    return JobParams.from_stored({"speaker": "joe", "model_id": "mistv3", "lang": "en", **stored})


def _chunk(rng: np.random.Generator, seconds: float, level: float) -> np.ndarray:
    n = int(RATE * seconds)
    t = np.arange(n) / RATE
    envelope = 0.5 + 0.5 * np.sin(2 * np.pi * 3 * t) ** 2
    x = level * envelope * (0.6 * np.sin(2 * np.pi * 170 * t) + 0.4 * rng.standard_normal(n))
    return (np.clip(x, -1, 1) * 32767).astype("<i2")


def _write_chunks(objects: LocalObjectStore, job_id: uuid.UUID, chunks: list[np.ndarray], indices: list[int]) -> None:
    for i in indices:
        objects.put_bytes(chunk_audio_key(job_id, i), chunks[i].tobytes())
        meta = {"sample_rate": RATE, "samples": len(chunks[i]), "duration_s": len(chunks[i]) / RATE,
                "words": [{"word": "word", "start": 0.1, "end": 0.4}], "text": "Word."}
        objects.put_bytes(chunk_meta_key(job_id, i), json.dumps(meta).encode())


@pytest.fixture
def chunks() -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    return [_chunk(rng, 1.1 + 0.2 * (i % 3), level) for i, level in enumerate(LEVELS)]


@pytest.fixture(autouse=True)
def short_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cuts inside chapters too, at the first long pause after 2 s (a book's default is minutes)."""
    monkeypatch.setattr(rendering, "TARGET_SEGMENT_S", 2.0)


def _new_book(tmp_path: Path, name: str) -> tuple[LocalObjectStore, uuid.UUID]:
    objects = LocalObjectStore(tmp_path / name)
    job_id = uuid.uuid4()
    objects.put_bytes(plan_key(job_id), Layout(PAUSES, CHAPTERS).to_json())
    return objects, job_id


def _decode(path: Path) -> np.ndarray:
    with av.open(str(path)) as container:
        return np.concatenate([f.to_ndarray().reshape(-1) for f in container.decode(audio=0)])


@pytest.mark.parametrize(
    ("fmt", "encoded_ahead", "workers"),
    [("mp3", True, 1), ("mp3", True, 2), ("m4b", True, 1), ("wav", False, 1)],  # 2: on worker processes
)
def test_the_book_is_the_same_sample_for_sample_whether_or_not_assembly_ran_ahead(
    chunks: list[np.ndarray], tmp_path: Path, fmt: str, encoded_ahead: bool, workers: int
) -> None:
    params = _params({"format": fmt, "sampling_rate": 24000, "loudness_scope": "chapter", "lang": "en"})
    layout = Layout(PAUSES, CHAPTERS)
    at_end, at_end_id = _new_book(tmp_path, "at-end")
    _write_chunks(at_end, at_end_id, chunks, list(range(len(chunks))))
    (tmp_path / "out-end").mkdir()
    reference = assembly.render(at_end, at_end_id, params, tmp_path / "out-end", workers=1)

    landing, job_id = _new_book(tmp_path, "landing")
    done: set[int] = set()
    for batch in ([1, 0], [3], [2, 5, 4], [6, 7], [9, 8]):  # out of order, as batches finish
        _write_chunks(landing, job_id, chunks, batch)
        done.update(batch)
        prefix = next(i for i in range(len(chunks) + 1) if i not in done)
        timeline = Timeline.build(RATE, PAUSES[:prefix], [len(c) for c in chunks[:prefix]])
        progressive_assembly.advance(landing, progressive_assembly.Book(job_id, layout, timeline, fmt, 24000, assembly.TARGET_LUFS), workers=workers)
    segments = sorted(landing.iter_keys(f"jobs/{job_id}/ahead/segments/"))
    if encoded_ahead:  # chapters one and two, cut inside too, were encoded before the last chunk
        # (a chapter's first segment may also be there under the gain guessed before its end)
        spans = sorted({tuple(int(n) for n in k.rsplit("/", 1)[1].split("-")[:2]) for k in segments})
        assert len(spans) > 2 and spans[0][0] == 0 and spans[-1][1] == 8
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
    else:
        assert segments == []
    # a worker killed in its last step: one segment and the last chunk's loudness never written
    for key in segments[-1:] + sorted(landing.iter_keys(f"jobs/{job_id}/ahead/loudness/"))[-1:]:
        landing.delete(key)
    _write_chunks(landing, job_id, chunks, [10])
    (tmp_path / "out-ahead").mkdir()
    rendered = assembly.render(landing, job_id, params, tmp_path / "out-ahead", workers=workers)

    a, b = _decode(reference.audio), _decode(rendered.audio)
    expected = int(round(reference.duration_s * 24000))
    assert len(a) == len(b) and 0 <= len(a) - expected < (1024 if fmt == "m4b" else 1)  # AAC's last frame is whole
    assert np.array_equal(a, b)
    assert rendered.audio.read_bytes() == reference.audio.read_bytes()
    assert rendered.timestamps.read_text() == reference.timestamps.read_text()


def test_each_chapter_is_at_the_target_in_chapter_scope(chunks: list[np.ndarray], tmp_path: Path) -> None:
    """ACX-style: every chapter on its own measures at the target, the loud one included."""
    objects, job_id = _new_book(tmp_path, "book")
    _write_chunks(objects, job_id, chunks, list(range(len(chunks))))
    rendered = assembly.render(objects, job_id, _params({"format": "wav", "loudness_scope": "chapter"}), tmp_path, workers=1)
    samples = _decode(rendered.audio).astype(np.float32) / 32767
    rate = 24000
    for chapter in rendered.chapters:
        piece = samples[int(chapter.start * rate) : int((chapter.end or 0) * rate)]
        assert integrated_loudness(piece, rate) == pytest.approx(assembly.TARGET_LUFS, abs=0.5)
    # the book's one gain would have left chapter one 5 LU under chapter two
    (tmp_path / "book-scope").mkdir()
    book_scope = assembly.render(objects, job_id, _params({"format": "wav"}), tmp_path / "book-scope", workers=1)
    whole = _decode(book_scope.audio).astype(np.float32) / 32767
    one, two = (whole[int(c.start * rate) : int((c.end or 0) * rate)] for c in book_scope.chapters[:2])
    assert integrated_loudness(two, rate) - integrated_loudness(one, rate) > 5


def test_a_chapters_loudness_joined_from_its_chunks_is_the_chapter_measured_alone(
    chunks: list[np.ndarray], tmp_path: Path
) -> None:
    """Each chapter's chunks, measured one by one (the meter's state handed on), give the
    energies of one meter over the chapter alone from the pause before it: its 100 ms grid and
    its filters start at the chapter, not at the book's start, so what comes before it cannot
    move its gain (an edit in an earlier chapter changes where the chapter starts)."""
    timeline = Timeline.build(RATE, PAUSES, [len(c) for c in chunks])
    objects, job_id = _new_book(tmp_path, "store")
    _write_chunks(objects, job_id, chunks, list(range(len(chunks))))
    spans = progressive_assembly.chapter_spans(Layout(PAUSES, CHAPTERS))
    firsts = frozenset(first for first, _ in spans)
    measured = list(progressive_assembly.measure_chunks(objects, job_id, timeline, 0, len(chunks), None, firsts))
    # measured in two calls, the second going on from the first's state: the same numbers
    again = list(progressive_assembly.measure_chunks(objects, job_id, timeline, 0, 6, None, firsts))
    again += progressive_assembly.measure_chunks(objects, job_id, timeline, 6, len(chunks), again[-1].state, firsts)
    assert [m.energies for m in again] == [m.energies for m in measured]

    stitched = np.zeros(timeline.end, dtype=np.float32)
    for i, pcm in enumerate(chunks):
        stitched[timeline.offsets[i] : timeline.offsets[i] + len(pcm)] = faded(pcm, RATE)
    for first, stop in spans:
        begin = timeline.offsets[first] - timeline.pauses[first]
        alone = LoudnessMeter(RATE)
        alone.add(stitched[begin : timeline.offsets[stop - 1] + timeline.length(stop - 1)])
        chapter = np.asarray([e for m in measured[first:stop] for e in m.energies])
        np.testing.assert_allclose(chapter, alone.completed(), rtol=1e-9)
        assert segments_loudness(chapter, RATE) == pytest.approx(
            integrated_loudness(stitched[begin : begin + len(chapter) * (RATE // 10)], RATE), abs=1e-9
        )


def test_segments_of_a_prefix_are_the_whole_books_first_segments(chunks: list[np.ndarray]) -> None:
    lengths = [len(c) for c in chunks]
    whole = rendering.progressive_segments(
        Timeline.build(RATE, PAUSES, lengths), 24000, {0, 4, 8}, frame=576, skip=1152, closed=True
    )
    assert {4, 8} <= {s.first for s in whole} and len(whole) > 3  # chapters, and inside them
    for prefix in range(1, len(chunks)):
        timeline = Timeline.build(RATE, PAUSES[:prefix], lengths[:prefix])
        part = rendering.progressive_segments(timeline, 24000, {0, 4, 8}, frame=576, skip=1152, closed=False)
        assert part == whole[: len(part)]
        assert all(s.stop <= prefix for s in part)


def test_a_chapter_that_misses_its_target_is_corrected_ahead_and_the_book_is_not_rendered_again(
    chunks: list[np.ndarray], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limiter and the codec take loudness the chunks' gain does not know of (chapter three's
    last chunk peaks at 0.9): each chapter is decoded and corrected as it is encoded, so the
    finished file meets the target at its first check and nothing is rendered twice."""
    renders: list[object] = []
    again = progressive_assembly.render_again
    monkeypatch.setattr(progressive_assembly, "render_again", lambda *a, **k: renders.append(a) or again(*a, **k))
    params = _params({"format": "mp3", "sampling_rate": 24000, "loudness_scope": "chapter", "lang": "en"})
    layout = Layout(PAUSES, CHAPTERS)
    objects, job_id = _new_book(tmp_path, "book")
    for stop in (5, 9):  # chapter one done ahead, then chapter two
        _write_chunks(objects, job_id, chunks, list(range(stop)))
        timeline = Timeline.build(RATE, PAUSES[:stop], [len(c) for c in chunks[:stop]])
        progressive_assembly.advance(objects, progressive_assembly.Book(job_id, layout, timeline, "mp3", 24000, assembly.TARGET_LUFS), workers=1)
    _write_chunks(objects, job_id, chunks, [9, 10])
    (tmp_path / "out").mkdir()
    rendered = assembly.render(objects, job_id, params, tmp_path / "out", workers=1)

    records = [json.loads(objects.get_bytes(k)) for k in sorted(objects.iter_keys(f"jobs/{job_id}/ahead/chapters/"))]
    assert len(records) == 3 and all(r["checked"] for r in records)
    assert any(len(r["tries"]) > 1 for r in records)  # a chapter missed at first: the check did something
    assert renders == []
    samples = _decode(rendered.audio)
    for chapter in rendered.chapters:  # each chapter, as an independent meter reads the file
        piece = samples[int(chapter.start * 24000) : int((chapter.end or 0) * 24000)].astype(np.float64)
        assert pyloudnorm.Meter(24000).integrated_loudness(piece) == pytest.approx(assembly.TARGET_LUFS, abs=0.25)


def test_each_chapter_is_limited_under_its_own_ceiling(chunks: list[np.ndarray], tmp_path: Path) -> None:
    """Chapter two's limiter ceiling lowered by 3 dB (as ``books.conformance`` lowers the ceiling
    of a chapter whose decoded peak was over it) limits chapter two alone: the chapters around it
    are the same sample for sample, though every chapter's peaks reach its limiter."""
    from books.rendering import Measured
    from speech.audio import true_peak_level

    timeline = Timeline.build(RATE, PAUSES, [len(c) for c in chunks])
    objects, job_id = _new_book(tmp_path, "book")
    _write_chunks(objects, job_id, chunks, list(range(len(chunks))))
    peaks = [float(np.max(np.abs(faded(c.astype(np.float32) / 32767, RATE)))) for c in chunks]
    gains = [0.9 / max(peaks[first:stop]) for first, stop in progressive_assembly.chapter_spans(Layout(PAUSES, CHAPTERS))
             for _ in range(first, stop)]  # every chapter's loudest chunk at 0.9, over the ceilings
    ceiling, lower = 10 ** (-3.5 / 20), 10 ** (-6.5 / 20)
    rendered = {}
    for name, ceilings in [("same", [ceiling] * len(chunks)), ("lowered", [ceiling] * 4 + [lower] * 4 + [ceiling] * 3)]:
        path = tmp_path / f"{name}.wav"
        rendering.render_audio(objects, job_id, Measured(timeline, peaks, gains, ceilings), "wav", RATE, path, metadata=None, workers=1)
        rendered[name] = _decode(path).astype(np.float32) / 32767
    starts = [timeline.offsets[i] - timeline.pauses[i] for i in (4, 8)]
    same, lowered = rendered["same"], rendered["lowered"]
    np.testing.assert_array_equal(same[: starts[0]], lowered[: starts[0]])
    np.testing.assert_array_equal(same[starts[1] :], lowered[starts[1] :])
    two = slice(starts[0], starts[1])
    assert true_peak_level(same[two], RATE) > -5.0
    assert true_peak_level(lowered[two], RATE) <= -6.5 + 0.2
