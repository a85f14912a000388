"""Pass 1 in parts: the same loudness and peaks as measuring the book in one go."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np
import pytest

from books import measuring
from books.chunks import chunk_audio_key, chunk_meta_key
from books.timeline import Timeline
from speech.audio import LoudnessMeter, joined_loudness
from store.objects.local import LocalObjectStore

RATE = 22050
PAUSES_MS = [0, 250, 700, 2000, 250, 700, 250, 2000]


@pytest.fixture
def book(tmp_path: Path) -> tuple[LocalObjectStore, uuid.UUID, Timeline, list[np.ndarray]]:
    rng = np.random.default_rng(5)
    objects = LocalObjectStore(tmp_path / "objects")
    job_id = uuid.uuid4()
    chunks = []
    for i, _ in enumerate(PAUSES_MS):
        n = int(RATE * (2.0 + 0.3 * i))
        t = np.arange(n) / RATE
        x = (0.2 + 0.1 * i) * np.sin(2 * np.pi * 3 * t) ** 2 * rng.standard_normal(n) * 0.5
        pcm = (np.clip(x, -1, 1) * 32767).astype("<i2")
        chunks.append(pcm)
        objects.put_bytes(chunk_audio_key(job_id, i), pcm.tobytes())
        meta = {"sample_rate": RATE, "samples": n, "duration_s": n / RATE, "words": [], "text": ""}
        objects.put_bytes(chunk_meta_key(job_id, i), json.dumps(meta).encode())
    timeline = Timeline.build(RATE, PAUSES_MS, [len(c) for c in chunks])
    return objects, job_id, timeline, chunks


def test_parts_start_on_the_grid_inside_long_pauses(book) -> None:  # type: ignore[no-untyped-def]
    _, _, timeline, _ = book
    parts = measuring.parts(timeline, [2, 3, 5, 7])
    hop = RATE // 10
    assert [p.first for p in parts] == [0, 2, 3, 5, 7]
    assert parts[0].begin == 0 and parts[-1].end == timeline.end
    for before, part in zip(parts, parts[1:], strict=False):
        assert before.end == part.begin and before.stop == part.first
        assert part.begin % hop == 0
        pause_start = timeline.offsets[part.first] - timeline.pauses[part.first]
        assert pause_start + measuring.SETTLE_S * RATE <= part.begin <= timeline.offsets[part.first]


def test_a_pause_too_short_to_start_a_part_in_leaves_the_part_before_running_on() -> None:
    timeline = Timeline.build(RATE, [0, 50, 2000], [RATE, RATE, RATE])  # 50 ms: the filters would not settle
    parts = measuring.parts(timeline, [1, 2])
    assert [(p.first, p.stop) for p in parts] == [(0, 2), (2, 3)]


def test_measured_in_parts_equals_measured_whole(book) -> None:  # type: ignore[no-untyped-def]
    objects, job_id, timeline, chunks = book
    whole = measuring.measure_part(objects, job_id, timeline, measuring.Part(0, len(chunks), 0, timeline.end))
    pieces = [measuring.measure_part(objects, job_id, timeline, p) for p in measuring.parts(timeline, [2, 3, 5, 7])]
    assert joined_loudness([p.meter for p in pieces]) == pytest.approx(whole.meter.integrated_loudness(), abs=1e-6)
    assert [peak for p in pieces for peak in p.peaks] == whole.peaks
    # and the whole is what one meter says of the stitched signal
    meter = LoudnessMeter(RATE)
    for i, pcm in enumerate(chunks):
        meter.add(np.zeros(timeline.pauses[i], dtype=np.float32))
        meter.add(measuring.faded(pcm, RATE))
    assert whole.meter.integrated_loudness() == pytest.approx(meter.integrated_loudness(), abs=1e-9)


def test_a_chunk_whose_length_disagrees_with_its_metadata_is_an_error(book) -> None:  # type: ignore[no-untyped-def]
    objects, job_id, timeline, chunks = book
    objects.put_bytes(chunk_audio_key(job_id, 2), chunks[2][:-10].tobytes())
    with pytest.raises(ValueError, match="chunk 2 has"):
        measuring.measure_part(objects, job_id, timeline, measuring.Part(0, len(chunks), 0, timeline.end))
