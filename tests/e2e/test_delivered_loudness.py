"""The delivered file's loudness, read the way a customer or a retailer reads it: decoded from the
encoded file and measured by an independent BS.1770 meter (pyloudnorm on float64, and a 4x
oversampled peak by scipy's polyphase filter), never by lector's own meter.

Each engine (joe's VITS, Kokoro's ivy) synthesizes a two-chapter book once, through the real
plan and synthesis steps; the assembler then renders it in every format the jobs offer, in book
or in chapter scope: the scopes alternate over the formats, and the other engine takes the other
one, so every format is measured in both scopes and every engine in both, in ten renders rather
than twenty (``CASES``; a render is what this file's minutes are)."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import av
import numpy as np
import pyloudnorm
import pytest
from scipy.signal import resample_poly

from books.chunks import ChunkKeys
from scheduler import assembly, intake, planning, synthesis
from scheduler.intake import FORMATS
from scheduler.job_params import JobParams
from speech.engines.registry import load_engine
from speech.synthesizer import Synthesizer
from speech.voices import Catalog
from store.db import accounts
from store.db import jobs as job_repo
from store.db.session import make_engine, make_sessionmaker, scoped_sessions
from store.objects.local import LocalObjectStore
from tests.support.books import excerpt

pytestmark = [pytest.mark.integration, pytest.mark.slow]
TARGET_LUFS = -19.0
CEILING_DBFS = -3.0
ENGINES = [("joe", "mistv3"), ("ivy", "coda")]


def decoded(path: Path) -> tuple[np.ndarray, int]:
    """The file as a player hears it: every frame decoded to float mono."""
    frames: list[np.ndarray] = []
    with av.open(str(path)) as container:
        stream = container.streams.audio[0]
        rate = stream.codec_context.sample_rate
        resampler = av.AudioResampler(format="flt", layout="mono", rate=rate)
        for frame in container.decode(stream):
            for out in resampler.resample(frame):
                frames.append(out.to_ndarray().reshape(-1))
        for out in resampler.resample(None):
            frames.append(out.to_ndarray().reshape(-1))
    return np.concatenate(frames).astype(np.float64), rate


def independent_loudness(samples: np.ndarray, rate: int) -> float:
    return float(pyloudnorm.Meter(rate).integrated_loudness(samples))


def independent_true_peak(samples: np.ndarray) -> float:
    up = resample_poly(samples, 4, 1)
    return 20 * math.log10(float(np.max(np.abs(up))))


def _book() -> str:
    """Two chapters of about 25 s each: long enough for BS.1770's gating and the limiter to be
    measured as on a book (400 ms blocks, a chapter of dozens of them), short enough that twenty
    renders fit the suite's time."""
    one, two = excerpt(420), excerpt(420, start_at="Mr. Bennet was so odd a mixture")
    return f"Chapter 1\n\n{one}\n\nChapter 2\n\n{two}"


@pytest.fixture(scope="module")
def synthesized(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Each engine's book, planned and synthesized once: ``{speaker: (objects, job_id, params, keys)}``."""
    engine = make_engine(pg_url)
    sessions = scoped_sessions(make_sessionmaker(engine))
    objects = LocalObjectStore(tmp_path_factory.mktemp("objects"))
    catalog = Catalog.load()
    books: dict[str, Any] = {}
    with sessions() as session:
        account = accounts.create_account(session=session, name=f"loud-{uuid.uuid4().hex[:8]}").id
    for speaker, model in ENGINES:
        voice = catalog.resolve(model, speaker, "en")
        voice_engine = load_engine(voice)
        spec = intake.JobSpec(text=_book(), speaker=speaker, model_id=model, lang="en", format="wav")
        with sessions() as session:
            job, _ = intake.submit_job(session=session, objects=objects, account_id=account, spec=spec)
            job_id, params = job.id, JobParams.from_stored(job.params)
        with sessions() as session:
            todo = planning.plan_job(session=session, objects=objects, job_id=job_id, batch_chars=4000, window=1 << 20)
        for batch in todo:
            synthesis.synthesize_batch(
                sessions=sessions, objects=objects, synthesizer=Synthesizer(lambda v, e=voice_engine: e),
                catalog=catalog, job_id=job_id, indices=batch.indices, group_chars=1500,
            )
        with sessions() as session:  # where synthesis stored each chunk (its attempt's keys)
            keys = ChunkKeys(job_id, tuple(job_repo.chunk_audio_keys(session=session, job_id=job_id)))
        books[speaker] = (objects, job_id, params, keys)
    yield books
    engine.dispose()


SCOPES = ("book", "chapter")
CASES = [(speaker, fmt, SCOPES[(i + j) % 2]) for i, (speaker, _) in enumerate(ENGINES) for j, fmt in enumerate(FORMATS)]


def test_the_cases_cover_every_format_and_engine_in_both_scopes() -> None:
    assert {(f, s) for _, f, s in CASES} == {(f, s) for f in FORMATS for s in SCOPES}
    assert {(e, s) for e, _, s in CASES} == {(e, s) for e, _ in ENGINES for s in SCOPES}


@pytest.mark.parametrize(("speaker", "fmt", "scope"), CASES)
def test_the_delivered_file_meets_its_loudness_target_and_ceiling(
    synthesized: dict[str, Any], speaker: str, fmt: str, scope: str, tmp_path: Path
) -> None:
    objects, job_id, params, keys = synthesized[speaker]
    params = replace(params, format=fmt, sampling_rate=44100 if fmt != "opus" else 48000,
                     loudness_scope="chapter" if scope == "chapter" else params.loudness_scope)
    rendered = assembly.render(objects, job_id, params, tmp_path, workers=1, keys=keys)
    samples, rate = decoded(rendered.audio)
    loudness, peak = independent_loudness(samples, rate), independent_true_peak(samples)
    print(f"\nLOUDNESS {speaker} {fmt} {scope}: {loudness:.2f} LUFS, true peak {peak:.2f} dBFS")
    assert abs(loudness - TARGET_LUFS) <= 0.5
    assert peak < CEILING_DBFS
    if scope == "chapter":  # each chapter at the target, as a retailer measures a chapter file
        assert len(rendered.chapters) >= 2  # the excerpts bring a heading of their own
        for chapter in rendered.chapters:
            part = samples[int(chapter.start * rate) : int((chapter.end or 0.0) * rate)]
            assert abs(independent_loudness(part, rate) - TARGET_LUFS) <= 0.5, chapter.title
