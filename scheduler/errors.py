"""Errors of the job lifecycle. No HTTP statuses: ``facade/errors.py`` maps them.

    SchedulerError
    ├── InvalidWebhookUrl     not http(s), or a private/loopback target where not allowed
    ├── JobNotRunnable        the job was canceled or already finished; the task stops quietly
    └── DeliveryFailed        a webhook attempt failed; the task retries with backoff
"""

from __future__ import annotations


class SchedulerError(Exception):
    """Root of every error the scheduler raises."""


class InvalidWebhookUrl(SchedulerError):
    pass


class JobNotRunnable(SchedulerError):
    pass


class DeliveryFailed(SchedulerError):
    pass
