"""Alembic migrations: they round-trip, and the migrated schema is exactly the ORM's."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from store.db import (
    Base,
    Job,
    add_chunks,
    create_account,
    create_job,
    create_key,
    make_engine,
    make_sessionmaker,
    mark_chunk_done,
    record_usage,
    record_webhook_attempt,
    session_scope,
)
from store.db.migrate import REPO_ROOT, alembic_config, downgrade, upgrade

TABLES = {"accounts", "api_keys", "usage", "usage_daily", "jobs", "job_chunks", "webhook_attempts", "lexicons", "chunk_cache", "job_batches"}


def _diffs(url: str) -> list[object]:
    engine = make_engine(url, pool=False)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            return list(compare_metadata(context, Base.metadata))
    finally:
        engine.dispose()


def _state(url: str) -> tuple[set[str], str | None]:
    engine = make_engine(url, pool=False)
    try:
        with engine.connect() as connection:
            tables = set(inspect(connection).get_table_names()) - {"alembic_version"}
            return tables, MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()


def _head() -> str:
    head = ScriptDirectory.from_config(alembic_config("postgresql://unused/x")).get_current_head()
    assert head is not None
    return head


def _fill(url: str) -> None:
    engine = make_engine(url, pool=False)
    try:
        with session_scope(make_sessionmaker(engine)) as session:
            account = create_account(session=session, name="migrated", allowed_models=["mist"])
            api_key, _ = create_key(session=session, account_id=account.id)
            job, _ = create_job(
                session=session,
                account_id=account.id,
                request_hash="h",
                params={"speaker": "lola"},
                characters=10,
                idempotency_key="k",
            )
            add_chunks(session=session, job_id=job.id, texts=["One.", "Two."], characters=[4, 5])
            mark_chunk_done(session=session, job_id=job.id, index=0, audio_key="k0", duration_s=0.5)
            record_usage(
                session=session,
                account_id=account.id,
                api_key_id=api_key.id,
                transport="job",
                model="mist",
                speaker="lola",
                characters=4,
                job_id=job.id,
                chunk_index=0,
            )
            record_usage(
                session=session,
                account_id=account.id,
                transport="http",
                model="mist",
                speaker="lola",
                characters=3,
            )
            record_webhook_attempt(
                session=session,
                job_id=job.id,
                attempt=1,
                url="https://example.com",
                event="job.succeeded",
                delivered=True,
                status_code=200,
            )
    finally:
        engine.dispose()


def test_round_trip_on_an_empty_database(empty_pg_database: Callable[[], str]) -> None:
    url = empty_pg_database()
    assert _state(url) == (set(), None)
    assert _diffs(url)  # sanity: an unmigrated database does differ from the models

    upgrade(url)
    assert _state(url) == (TABLES, _head())
    assert _diffs(url) == []

    downgrade(url, "base")
    assert _state(url) == (set(), None)

    upgrade(url)
    assert _state(url) == (TABLES, _head())
    assert _diffs(url) == []


def test_round_trip_with_rows_in_it(empty_pg_database: Callable[[], str]) -> None:
    url = empty_pg_database()
    upgrade(url)
    _fill(url)
    downgrade(url, "base")
    assert _state(url) == (set(), None)
    upgrade(url)
    assert _diffs(url) == []
    _fill(url)  # the re-created schema takes the same rows again (unique names free once more)


def test_upgrade_is_idempotent(empty_pg_database: Callable[[], str]) -> None:
    url = empty_pg_database()
    upgrade(url)
    upgrade(url)
    assert _state(url) == (TABLES, _head())


def test_alembic_command_line_takes_the_url_from_x_or_settings(empty_pg_database: Callable[[], str]) -> None:
    alembic = str(Path(sys.executable).with_name("alembic"))
    env = {k: v for k, v in os.environ.items() if k != "LECTOR_DATABASE_URL"}

    from_x = empty_pg_database()
    subprocess.run(
        [alembic, "-x", f"url={from_x}", "upgrade", "head"],
        cwd=REPO_ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    assert _state(from_x) == (TABLES, _head())

    from_settings = empty_pg_database().replace("postgresql+psycopg://", "postgresql://")
    env["LECTOR_DATABASE_URL"] = from_settings
    subprocess.run([alembic, "upgrade", "head"], cwd=REPO_ROOT, env=env, check=True, capture_output=True)
    assert _state(from_settings) == (TABLES, _head())


def test_mistv2_speeds_become_rates_and_back(empty_pg_database: Callable[[], str]) -> None:
    """0005: a stored ``mistv2`` ``speed_alpha`` (the vendor's length factor) becomes the rate the
    job's steps now read; other models' and absent speeds are left alone; the downgrade undoes it."""
    url = empty_pg_database()
    upgrade(url, "0004_qa_default")
    engine = make_engine(url, pool=False)
    try:
        with session_scope(make_sessionmaker(engine)) as session:
            account = create_account(session=session, name="speeds")
            ids = {}
            for name, params in (("v2", {"model_id": "mistv2", "speed_alpha": 0.5}),
                                 ("v3", {"model_id": "mistv3", "speed_alpha": 0.5}),
                                 ("none", {"model_id": "mistv2"})):
                job, _ = create_job(session=session, account_id=account.id, request_hash=name,
                                    params={"speaker": "joe", "lang": "en", **params}, characters=1, idempotency_key=name)
                ids[name] = job.id

        def speeds() -> dict[str, object]:
            with session_scope(make_sessionmaker(engine)) as session:
                return {name: session.get(Job, job_id).params.get("speed_alpha") for name, job_id in ids.items()}  # type: ignore[union-attr]

        assert speeds() == {"v2": 0.5, "v3": 0.5, "none": None}
        upgrade(url)
        assert speeds() == {"v2": 2.0, "v3": 0.5, "none": None}
        downgrade(url, "0004_qa_default")
        assert speeds() == {"v2": 0.5, "v3": 0.5, "none": None}
    finally:
        engine.dispose()
