"""Billing ledger at scale: admin reports over 10 million usage rows, and what billing costs a stream.

    python -m bench.usage [--rows 10000000] [--keep]

Creates a database of its own on the configured PostgreSQL server (``LECTOR_DATABASE_URL``'s
server, else 127.0.0.1:5432), migrates it to 0001, generates the rows server-side with
``generate_series`` (2,000 accounts with skewed activity, two keys each, a year of traffic in
time order; ``--mix`` says how varied each account's models, transports, keys and voices are,
see ``MIXES``), then upgrades to head: migration 0002 backfills ``usage_daily``
from those rows, exactly as it would in production. Then, as medians of 5 runs:

- ``day_query``: the busiest account's month (October 2026), grouped by day;
- ``month_model_query``: the same month for every account, grouped by model;
- ``edges_query``: the same with bounds that cut a day (the partial days are read raw);

each checked against, and timed beside, a direct ``SELECT sum(...)`` over the raw rows (the
reference in the same run). Last, ``record_usage`` as the streaming path calls it (a session of
its own per call) with the rollup triggers on and off: p50/p99 of the call, the rollup's share,
and the commit that makes the row durable, timed apart.
The database is dropped at the end unless ``--keep``. The last line is
``RESULT rows=... day_query_s=... month_model_query_s=... record_p50_ms=...``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import sql
from sqlalchemy import text
from sqlalchemy.engine import make_url

from store.db import make_engine, make_sessionmaker, record_usage, session_scope
from store.db.migrate import upgrade
from store.db.reports import usage_report

ACCOUNTS = 2000
JOBS_PER_ACCOUNT = 10
BATCH = 1_000_000
YEAR_START = datetime(2025, 12, 1, tzinfo=UTC)
MONTH = (datetime(2026, 10, 1, tzinfo=UTC), datetime(2026, 11, 1, tzinfo=UTC))
EDGES = (datetime(2026, 10, 1, 12, 30, tzinfo=UTC), datetime(2026, 10, 31, 6, 15, tzinfo=UTC))
SPEAKERS = 30

_SETUP = f"""
INSERT INTO accounts (id, name, status, ws_connections_per_minute, webhook_secret)
SELECT gen_random_uuid(), 'bench-' || lpad(a::text, 4, '0'), 'active', 60, md5(a::text)
FROM generate_series(0, {ACCOUNTS - 1}) a;

CREATE TABLE bench_accounts AS
SELECT (row_number() OVER (ORDER BY name) - 1)::int AS ord, id FROM accounts WHERE name LIKE 'bench-%';

INSERT INTO api_keys (id, account_id, prefix, key_hash, name)
SELECT gen_random_uuid(), b.id, 'lk_b' || lpad((b.ord * 2 + k)::text, 8, '0'),
       md5(b.ord::text || '-' || k) || md5(k::text || '-' || b.ord), 'key' || k
FROM bench_accounts b CROSS JOIN generate_series(0, 1) k;

INSERT INTO jobs (id, account_id, status, request_hash, params)
SELECT gen_random_uuid(), b.id, 'succeeded', md5(b.ord::text || '/' || j), '{{}}'::jsonb
FROM bench_accounts b CROSS JOIN generate_series(0, {JOBS_PER_ACCOUNT - 1}) j;

CREATE TABLE bench_slots AS
SELECT b.ord, b.id AS account_id,
       (SELECT id FROM api_keys WHERE account_id = b.id AND name = 'key0') AS key0,
       (SELECT id FROM api_keys WHERE account_id = b.id AND name = 'key1') AS key1,
       (SELECT array_agg(id ORDER BY id) FROM jobs WHERE account_id = b.id) AS jobs
FROM bench_accounts b;
ALTER TABLE bench_slots ADD PRIMARY KEY (ord);
"""

# How a row picks its model, transport, key and voice, from uniform draws r.rm, r.rt, r.rk, r.rs.
# "realistic": an account mostly keeps to one model, one transport, its first key and its first
# voice (85%, 85%, 92%, 70%); the rest is spread. "adversarial": every row draws each of them
# independently, so a small account's rows rarely share a slot and the rollup barely compresses.
MODELS = "(ARRAY['mistv3','coda','mistv2','arcana'])"
TRANSPORTS = "(ARRAY['http','ws','job'])"
MIXES = {
    "realistic": {
        "model": f"""CASE WHEN r.rm < 0.85 THEN {MODELS}[CASE WHEN s.ord % 20 < 10 THEN 1 WHEN s.ord % 20 < 16 THEN 2
                     WHEN s.ord % 20 < 19 THEN 3 ELSE 4 END]
                     ELSE {MODELS}[1 + floor((r.rm - 0.85) / 0.15 * 4)::int] END""",
        "transport": f"""CASE WHEN r.rt < 0.85 THEN {TRANSPORTS}[CASE WHEN s.ord % 10 < 6 THEN 1 WHEN s.ord % 10 < 9 THEN 2
                         ELSE 3 END]
                         ELSE {TRANSPORTS}[1 + floor((r.rt - 0.85) / 0.15 * 3)::int] END""",
        "key": "CASE WHEN r.rk < 0.02 THEN NULL WHEN r.rk < 0.94 THEN s.key0 ELSE s.key1 END",
        "voice": "CASE WHEN r.rs < 0.7 THEN 0 WHEN r.rs < 0.9 THEN 1 ELSE 2 END",
    },
    "adversarial": {
        "model": f"""{MODELS}[CASE WHEN r.rm < 0.5 THEN 1 WHEN r.rm < 0.8 THEN 2 WHEN r.rm < 0.95 THEN 3 ELSE 4 END]""",
        "transport": f"{TRANSPORTS}[CASE WHEN r.rt < 0.15 THEN 3 WHEN r.rt < 0.45 THEN 2 ELSE 1 END]",
        "key": "CASE WHEN r.rk < 0.02 THEN NULL WHEN r.rk < 0.72 THEN s.key0 ELSE s.key1 END",
        "voice": "floor(r.rs * 3)::int",
    },
}

# One batch of rows g in [lo, hi). Volatile random() lives in the inner query so that each row
# draws its numbers once. Accounts are skewed (the busiest has ~8% of all rows), each speaks with
# 3 of 30 voices, time runs forward with g (as real appends do). Job rows bill chunk g of one of
# the account's jobs, so (job_id, chunk_index) stays unique.
_BATCH = f"""
INSERT INTO usage (account_id, api_key_id, transport, request_id, job_id, chunk_index,
                   model, speaker, lang, characters, audio_seconds, created_at)
SELECT account_id, api_key_id, transport,
       CASE WHEN transport = 'job' THEN NULL ELSE to_hex(g) END,
       CASE WHEN transport = 'job' THEN jobs[1 + g % {JOBS_PER_ACCOUNT}] END,
       CASE WHEN transport = 'job' THEN g::int END,
       model, 'voice' || voice, (ARRAY['en','es','fr','pt','de','ja','ar','hi','it','nl'])[1 + voice % 10],
       chars, round(chars / 15.0, 3),
       timestamptz '{YEAR_START.isoformat()}' + (g::float8 / :total) * interval '365 days' + jitter * interval '1 minute'
FROM (
    SELECT r.g, r.chars, r.jitter, s.account_id, s.jobs, {{key}} AS api_key_id, {{transport}} AS transport,
           {{model}} AS model, (s.ord * 7 + {{voice}}) % {SPEAKERS} AS voice
    FROM (
        SELECT g, floor({ACCOUNTS} * power(random(), 3))::int AS ord, random() AS rk, random() AS rm,
               random() AS rt, random() AS rs, 20 + floor(random() * 980)::int AS chars, random() AS jitter
        FROM generate_series(:lo, :hi - 1) g
    ) r JOIN bench_slots s ON s.ord = r.ord
) x
"""


def _server_dsn(url: str) -> str:
    parsed = make_url(url)
    return (
        f"host={parsed.host or '127.0.0.1'} port={parsed.port or 5432} user={parsed.username or 'postgres'}"
        + (f" password={parsed.password}" if parsed.password else "")
        + " dbname=postgres"
    )


def _median_s(run: Callable[[], Any], times: int = 5) -> tuple[float, Any]:
    samples, result = [], None
    for _ in range(times):
        began = time.perf_counter()
        result = run()
        samples.append(time.perf_counter() - began)
    return statistics.median(samples), result


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _load(url: str, rows: int, mix: str) -> None:
    upgrade(url, "0001")
    batch = _BATCH.format(**MIXES[mix])
    engine = make_engine(url, pool=False)
    try:
        with engine.connect() as connection:
            connection.execute(text("SET synchronous_commit = off"))
            # The generated rows are consistent by construction; skipping the foreign-key checks
            # (superuser only) roughly halves the load. Reports and backfill are not affected.
            connection.execute(text("SET session_replication_role = replica"))
            connection.execute(text("SELECT setseed(0.42)"))
            for statement in _SETUP.split(";\n"):
                if statement.strip():
                    connection.execute(text(statement))
            connection.commit()
            began = time.perf_counter()
            for lo in range(0, rows, BATCH):
                hi = min(rows, lo + BATCH)
                connection.execute(text(batch), {"lo": lo, "hi": hi, "total": rows})
                connection.commit()
                print(f"  loaded {hi:>11,} rows  {time.perf_counter() - began:7.1f} s", flush=True)
            connection.execute(text("DROP TABLE bench_slots, bench_accounts"))
            connection.commit()
    finally:
        engine.dispose()


def _vacuum(url: str) -> None:
    engine = make_engine(url, pool=False)
    try:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("VACUUM ANALYZE usage"))
            connection.execute(text("VACUUM ANALYZE usage_daily"))
    finally:
        engine.dispose()


def _raw_sums(session: Any, start: datetime, end: datetime, account_id: Any, column: str) -> dict[str, tuple[int, int]]:
    where = "created_at >= :start AND created_at < :end" + (" AND account_id = :a" if account_id else "")
    rows = session.execute(
        text(f"SELECT {column}, count(*), sum(characters) FROM usage WHERE {where} GROUP BY 1"),
        {"start": start, "end": end, "a": account_id},
    ).all()
    return {str(r[0]): (int(r[1]), int(r[2])) for r in rows}


def _check(report: list[Any], dimension: str, truth: dict[str, tuple[int, int]]) -> None:
    got = {r.group[dimension]: (r.rows, r.characters) for r in report}
    if got != truth:
        raise SystemExit(f"report differs from the raw rows' sums: {got} != {truth}")


def _reports(url: str) -> dict[str, float]:
    engine = make_engine(url)
    factory = make_sessionmaker(engine)
    timings: dict[str, float] = {}
    try:
        with session_scope(factory) as session:
            busiest = session.scalar(text("SELECT id FROM accounts WHERE name = 'bench-0000'"))
            in_month = session.scalar(
                text("SELECT count(*) FROM usage WHERE account_id = :a AND created_at >= :s AND created_at < :e"),
                {"a": busiest, "s": MONTH[0], "e": MONTH[1]},
            )
            print(f"busiest account: {in_month:,} rows in {MONTH[0]:%B %Y}")
            cases = [
                ("day_query", busiest, MONTH, "day", "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')"),
                ("month_model_query", None, MONTH, "model", "model"),
                ("edges_query", None, EDGES, "model", "model"),
            ]
            for name, account, (start, end), dimension, raw_column in cases:
                seconds, report = _median_s(
                    lambda a=account, s=start, e=end, d=dimension: usage_report(  # type: ignore[misc]
                        session=session, account_id=a, start=s, end=e, group_by=d
                    )
                )
                began = time.perf_counter()
                truth = _raw_sums(session, start, end, account, raw_column)
                raw_s = time.perf_counter() - began
                _check(report, dimension, truth)
                timings[f"{name}_s"] = seconds
                print(
                    f"{name:<18} {seconds * 1000:9.1f} ms (median of 5, {len(report)} groups)   "
                    f"raw SELECT sum: {raw_s * 1000:9.1f} ms   same totals: yes",
                    flush=True,
                )
    finally:
        engine.dispose()
    return timings


Sample = tuple[float, float]  # (record_usage ms, commit ms)


def _record_latency(url: str, calls: int) -> tuple[list[Sample], list[Sample]]:
    """Per ``record_usage`` call as the stream's end makes it (a session of its own, then the
    commit): the call's milliseconds (insert, and the rollup triggers when enabled) and the
    commit's. Blocks alternate with the rollup triggers enabled and disabled."""
    engine = make_engine(url)
    factory = make_sessionmaker(engine)
    rng = random.Random(1)
    with_rollup: list[Sample] = []
    without: list[Sample] = []
    try:
        with session_scope(factory) as session:
            accounts = [
                (row[0], row[1])
                for row in session.execute(
                    text("SELECT a.id, k.id FROM accounts a JOIN api_keys k ON k.account_id = a.id AND k.name = 'key0'")
                )
            ]

        def one() -> Sample:
            account_id, key_id = accounts[min(len(accounts) - 1, int(len(accounts) * rng.random() ** 3))]
            session = factory()
            try:
                began = time.perf_counter()
                record_usage(
                    session=session, account_id=account_id, api_key_id=key_id, transport="http",
                    request_id=uuid.uuid4().hex, model="mistv3", speaker=f"voice{rng.randrange(3)}", lang="en",
                    characters=rng.randint(20, 999), audio_seconds=3.2,
                )
                recorded = time.perf_counter()
                session.commit()
                committed = time.perf_counter()
            finally:
                session.close()
            return (recorded - began) * 1000, (committed - recorded) * 1000

        for _ in range(50):  # warm the pool and the plan caches
            one()
        for block in range(8):
            enabled = block % 2 == 0
            with engine.begin() as connection:
                connection.execute(text(f"ALTER TABLE usage {'ENABLE' if enabled else 'DISABLE'} TRIGGER USER"))
            (with_rollup if enabled else without).extend(one() for _ in range(calls // 8))
    finally:
        with engine.begin() as connection:
            connection.execute(text("ALTER TABLE usage ENABLE TRIGGER USER"))
        engine.dispose()
    return with_rollup, without


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--calls", type=int, default=4000, help="record_usage calls to time")
    parser.add_argument("--mix", choices=sorted(MIXES), default="realistic", help="how varied each account's rows are")
    parser.add_argument("--keep", action="store_true", help="keep the bench database")
    args = parser.parse_args()

    from lector.settings import Settings
    from lector.wiring import resolved_database_url

    server = resolved_database_url(Settings())
    name = f"lector_bench_{uuid.uuid4().hex[:10]}"
    admin_dsn = _server_dsn(server)
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = make_url(server).set(database=name).render_as_string(hide_password=False)
    from bench.machine import describe

    print(describe("cpu", "n/a (database bench)"))
    print(f"bench database {name}; {args.rows:,} rows, {args.mix} mix")
    try:
        began = time.perf_counter()
        _load(url, args.rows, args.mix)
        load_s = time.perf_counter() - began
        began = time.perf_counter()
        upgrade(url)  # migration 0002: builds usage_daily from the rows just loaded
        backfill_s = time.perf_counter() - began
        _vacuum(url)
        engine = make_engine(url, pool=False)
        with engine.connect() as connection:
            raw_rows = connection.scalar(text("SELECT count(*) FROM usage"))
            slots = connection.scalar(text("SELECT count(*) FROM usage_daily"))
            sizes = connection.execute(
                text("SELECT pg_size_pretty(pg_total_relation_size('usage')),"
                     " pg_size_pretty(pg_total_relation_size('usage_daily'))")
            ).one()
        engine.dispose()
        print(f"load {load_s:.1f} s; migration 0002 backfill {backfill_s:.1f} s")
        print(f"usage: {raw_rows:,} rows ({sizes[0]}); usage_daily: {slots:,} slots ({sizes[1]})")

        timings = _reports(url)
        with_rollup, without = _record_latency(url, args.calls)
        record = [r for r, _ in with_rollup]
        bare = [r for r, _ in without]
        commit = [c for _, c in with_rollup]
        total = [r + c for r, c in with_rollup]
        p50, p99 = _percentile(record, 0.5), _percentile(record, 0.99)
        added = p50 - _percentile(bare, 0.5)
        print(
            f"record_usage, rollup on : p50 {p50:6.3f} ms  p99 {p99:6.3f} ms  ({len(record)} calls)\n"
            f"record_usage, rollup off: p50 {_percentile(bare, 0.5):6.3f} ms  p99 {_percentile(bare, 0.99):6.3f} ms"
            f"  ({len(bare)} calls)\n"
            f"the rollup adds at p50: {added:+.3f} ms\n"
            f"commit (WAL flush)      : p50 {_percentile(commit, 0.5):6.3f} ms  p99 {_percentile(commit, 0.99):6.3f} ms\n"
            f"record_usage + commit   : p50 {_percentile(total, 0.5):6.3f} ms  p99 {_percentile(total, 0.99):6.3f} ms"
        )
        print(
            f"RESULT rows={raw_rows} mix={args.mix} slots={slots} day_query_s={timings['day_query_s']:.4f} "
            f"month_model_query_s={timings['month_model_query_s']:.4f} record_p50_ms={p50:.3f} "
            f"record_p99_ms={p99:.3f} rollup_added_p50_ms={added:.3f} "
            f"record_commit_p50_ms={_percentile(total, 0.5):.3f}"
        )
    finally:
        if not args.keep:
            with psycopg.connect(admin_dsn, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


if __name__ == "__main__":
    main()
