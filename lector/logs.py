"""Logging for every lector process: human-readable lines by default, one JSON object per line
with ``LECTOR_LOG_FORMAT=json``.

JSON lines carry ``time``, ``level``, ``logger``, ``message`` and, where bound, the ids of
``scheduler.log_context`` (``request_id``, ``account_id``, ``job_id``, ``task_id``): what a log
pipeline needs to follow one request or one job across processes. API keys are never bound.
The formatter is python-json-logger's; this module only chooses the fields.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from pythonjsonlogger.json import JsonFormatter

from scheduler import log_context

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
ACCESS_LOGGER = "lector.access"  # one line per HTTP request, with its ids (facade.metrics)


class ContextFilter(logging.Filter):
    """Copies the bound ids onto each record, so the formatter can write them."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in log_context.current().items():
            setattr(record, key, value)
        return True


def configure(fmt: str = "text", level: str = "INFO") -> None:
    """Replace the root handlers with one stderr handler in ``fmt`` (``text`` or ``json``).

    In text mode the per-request access line stays quiet (uvicorn writes its own); in JSON mode
    it is the access log, since uvicorn's is written outside the request and carries no ids."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(ContextFilter())
    if fmt == "json":
        handler.setFormatter(JsonFormatter(
            "%(asctime)s %(levelname)s %(name)s %(message)s",
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
        ))
    else:
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)  # warnings become log records (one JSON line each), not raw stderr
    logging.getLogger(ACCESS_LOGGER).setLevel("INFO" if fmt == "json" else "WARNING")


def uvicorn_options(fmt: str) -> dict[str, Any]:
    """uvicorn's logging arguments: its own formatters in text mode; in JSON mode its loggers
    go through ours (``log_config=None``) and its access log is replaced by ``lector.access``."""
    if fmt == "json":
        return {"log_config": None, "access_log": False}
    return {}
