"""The Celery app of lector's workers (``celery -A workers.app worker`` or ``lector worker``).

This module is an entry point: it builds the settings and the Celery app. Task bodies live in
``workers.tasks`` and stay thin; the work is in ``scheduler``.
"""

from __future__ import annotations

from lector.settings import Settings
from lector.wiring import resolved_redis_url
from scheduler.queue import make_celery

settings = Settings()
celery_app = make_celery(resolved_redis_url(settings), visibility_timeout_s=settings.visibility_timeout_s)
celery_app.conf.imports = ("workers.tasks",)

import workers.tasks  # noqa: E402,F401  register the tasks on celery_app
from workers import log_signals  # noqa: E402

log_signals.connect()

app = celery_app
