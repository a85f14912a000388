"""workers/tasks.py: which failures retry a task instead of failing its job."""

from __future__ import annotations


def test_a_broker_that_stays_away_is_a_transient_failure() -> None:
    """A send that gives up on the broker must retry the task, never fail the job."""
    from kombu.exceptions import OperationalError

    from workers.tasks import TRANSIENT

    assert issubclass(OperationalError, TRANSIENT)
