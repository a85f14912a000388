"""Errors of the job lifecycle. No HTTP statuses: ``facade/errors.py`` maps them.

    SchedulerError
    └── InvalidWebhookUrl     not http(s), or a private/loopback target where not allowed
"""

from __future__ import annotations


class SchedulerError(Exception):
    """Root of every error the scheduler raises."""


class InvalidWebhookUrl(SchedulerError):
    pass
