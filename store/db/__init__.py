"""PostgreSQL: typed models, sessions and repositories.

Every repository function takes ``session`` keyword-only and at most flushes; the caller commits
through ``session_scope``. Migrations: ``store.db.migrate`` (kept out of this namespace so that
importing the models does not import Alembic).
"""

from store.db.accounts import (
    create_account,
    disable_account,
    get_account,
    get_account_by_name,
    list_accounts,
    set_limits,
    set_qa_default,
    set_subscription,
)
from store.db.base import Base
from store.db.jobs import (
    add_chunks,
    create_job,
    get_job,
    list_chunks,
    list_jobs,
    list_webhook_attempts,
    mark_chunk_done,
    pending_chunks,
    record_webhook_attempt,
    set_job_status,
)
from store.db.keys import authenticate, create_key, generate_key, hash_key, list_keys, revoke_key
from store.db.models import Account, ApiKey, Job, JobChunk, Usage, WebhookAttempt
from store.db.session import (
    make_engine,
    make_sessionmaker,
    normalize_url,
    scoped_sessions,
    session_scope,
    translate_db_errors,
)
from store.db.usage import UsageTotal, record_usage, request_billed, usage_totals

__all__ = [
    "Account",
    "ApiKey",
    "Base",
    "Job",
    "JobChunk",
    "Usage",
    "UsageTotal",
    "WebhookAttempt",
    "add_chunks",
    "authenticate",
    "create_account",
    "create_job",
    "create_key",
    "disable_account",
    "generate_key",
    "get_account",
    "get_account_by_name",
    "get_job",
    "hash_key",
    "list_accounts",
    "list_chunks",
    "list_jobs",
    "list_keys",
    "list_webhook_attempts",
    "make_engine",
    "make_sessionmaker",
    "mark_chunk_done",
    "normalize_url",
    "pending_chunks",
    "record_usage",
    "request_billed",
    "record_webhook_attempt",
    "revoke_key",
    "scoped_sessions",
    "session_scope",
    "set_job_status",
    "set_limits",
    "set_qa_default",
    "set_subscription",
    "translate_db_errors",
    "usage_totals",
]
