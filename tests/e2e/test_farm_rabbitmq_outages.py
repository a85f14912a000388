"""The assembly host, a draining worker and the broker itself on a RabbitMQ farm (``infra/farm``):
three hosts in network namespaces (``h1`` cpu and the reaper, ``h2`` and ``h3`` synth) sharing
PostgreSQL, Swift and a RabbitMQ node of the module's own, which the broker's restart crashes.

One farm for the module, the broker's restart included: a second farm for it cost three more
hosts' worker start-ups (torch, the voice, Celery; ~5 s of CPU each) beside the suite's workers.
Its broker is a node of the module's own, as the machine's RabbitMQ (same package, same
settings: a listener on 127.0.0.1) but not shared, so it may be killed; it comes back with its
quorum queues, and the workers with it, for the test after the restart.

In each case the job succeeds, its WAV equals the no-fault render sample for sample, every chunk is
billed exactly once, and the job ends within 90 s of the fault.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from tests.fixtures.farm import FarmStack, wait_for
from tests.support.farm_books import RABBIT_BOUND_S, SMALL_BATCHES, Render, render, revived, start_hosts

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def rabbit_farm(make_farm) -> Iterator[FarmStack]:  # type: ignore[no-untyped-def]
    yield start_hosts(make_farm("own-rabbitmq", **SMALL_BATCHES))


@pytest.fixture(scope="module")
def reference(rabbit_farm: FarmStack, pg_url: str) -> Render:
    """The book rendered with every host up."""
    return render(rabbit_farm, pg_url)


# The drained worker last, and not started again: it costs a worker's start-up (torch, the voice,
# Celery: ~5 s of CPU), and after the last test nothing needs it. A test that needs ``h2`` brings it
# back (``revived``), so each of them runs alone or in any order.


def test_rabbitmq_assembly_host_lost_mid_assembly(rabbit_farm: FarmStack, reference: Render, pg_url: str) -> None:
    """The cpu host assembling the book vanishes. The broker requeues ``assemble`` to the other
    cpu worker once the heartbeats stop; the dead host's PostgreSQL session, which holds the
    job's assembly lock, ends when the server's keepalives find its client gone
    (``store.db.session``), and the second assembly writes the same file."""
    revived(rabbit_farm, "h2")
    if "cpu@h3" not in rabbit_farm.started:
        rabbit_farm.start_worker("h3", "cpu", "cpu")  # a second cpu worker, to take the task over
    try:
        faulted = render(rabbit_farm, pg_url, victim=("h1", "h3"), assembly=True)
    finally:
        for host in ("h1", "h3"):
            revived(rabbit_farm, host)
    assert faulted.lost_to_end_s is not None
    print(f"\nfarm rabbitmq assembly host ({faulted.struck}) killed: loss to job end {faulted.lost_to_end_s:.1f} s")  # noqa: T201
    assert faulted.frames == reference.frames
    assert faulted.lost_to_end_s < RABBIT_BOUND_S


def test_rabbitmq_broker_restarted_mid_book(rabbit_farm: FarmStack, reference: Render, pg_url: str) -> None:
    """The farm's broker (the module's own node) crashes (SIGKILL) just as a synth host takes a
    task, and starts again: what it had confirmed is still queued (quorum queues), what it had
    delivered comes back, the workers reconnect, and the book ends the same."""
    revived(rabbit_farm, "h2")
    assert rabbit_farm.rabbit is not None
    rabbit = rabbit_farm.rabbit

    def restart(_host: str) -> None:
        rabbit.crash()
        rabbit.start()

    faulted = render(rabbit_farm, pg_url, victim="h2", fault=restart)
    assert faulted.lost_to_end_s is not None
    print(f"\nfarm rabbitmq broker crashed and restarted: broker back to job end {faulted.lost_to_end_s:.1f} s")  # noqa: T201
    assert faulted.frames == reference.frames
    assert faulted.lost_to_end_s < RABBIT_BOUND_S


def test_rabbitmq_synth_worker_drains_on_sigterm(rabbit_farm: FarmStack, reference: Render, pg_url: str) -> None:
    """SIGTERM (a scale-down, a drain) to a synth worker that has just taken a task: Celery's warm
    shutdown takes no more tasks and finishes the one it holds, acknowledges it, and exits. The
    task is finished there (not lost, not done twice), the book ends the same, billed once."""
    revived(rabbit_farm, "h2")
    victim = "h2"
    worker = f"synth@{victim}"
    termed: dict[str, object] = {}
    stale = rabbit_farm.tasks_held(worker)  # received by a killed incarnation of the worker, never finished

    def reap(pid: int) -> None:
        """Note when the worker (this process's child) exits."""
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        termed["exited"] = time.monotonic()

    def terminate(host: str) -> None:
        termed["pid"] = pid = rabbit_farm.farm.hosts[host].workers["synth"]
        termed["held"] = rabbit_farm.tasks_held(worker) - stale
        termed["at"] = time.monotonic()
        os.kill(pid, signal.SIGTERM)
        threading.Thread(target=reap, args=(pid,), daemon=True).start()

    faulted = render(rabbit_farm, pg_url, victim=victim, fault=terminate)
    held = set(termed["held"])  # type: ignore[call-overload]
    wait_for(lambda: "exited" in termed, 120, lambda: f"the worker did not exit after SIGTERM\n{rabbit_farm.tail()}")
    exit_s = float(termed["exited"]) - float(termed["at"])  # type: ignore[arg-type]
    log = rabbit_farm.log_text(worker)
    assert held, "the worker held no task at SIGTERM"
    for task_id in held:  # finished where it ran: succeeded, not handed back
        assert f"lector.synthesize[{task_id}] succeeded" in log, log[-3000:]
    assert faulted.lost_to_end_s is not None
    print(f"\nfarm rabbitmq synth worker SIGTERM: worker exited after {exit_s:.1f} s, "  # noqa: T201
          f"job end {faulted.lost_to_end_s:.1f} s after the signal")
    assert faulted.frames == reference.frames
    assert exit_s < 60  # promptly: one batch's work, not a grace period's
