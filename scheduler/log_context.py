"""The ids bound to what this thread of work is doing, for every log line it writes.

A request or a task binds its ids once (``start``) and code that learns more later (the account
after authentication, the job of a route) adds them (``bind``). The context holds one mutable
dict, so ids bound in a worker thread (FastAPI runs sync dependencies in a thread pool, with a
copy of the context) are seen by the request's own task too. Keys never hold secrets: ids only.

It lives in ``scheduler``, the lowest room both adapters (facade, workers) import; the log
formatter that reads it is configured by the entry points (``lector.logs``).
"""

from __future__ import annotations

import contextvars

_context: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("lector_log_context", default=None)


def start(**ids: object) -> contextvars.Token[dict[str, str] | None]:
    """A fresh context for a new request or task; ``reset(token)`` ends it."""
    return _context.set({k: str(v) for k, v in ids.items() if v is not None})


def reset(token: contextvars.Token[dict[str, str] | None]) -> None:
    _context.reset(token)


def bind(**ids: object) -> None:
    """Add ids to the current context (a new one where none was started)."""
    current = _context.get()
    if current is None:
        current = {}
        _context.set(current)
    current.update({k: str(v) for k, v in ids.items() if v is not None})


def current() -> dict[str, str]:
    return dict(_context.get() or {})
