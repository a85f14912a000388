"""The loop watch names what blocked the event loop, and stays quiet while the loop answers."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from facade.loop_watch import STALLS, LoopWatch


def _hold_the_loop(seconds: float) -> None:
    time.sleep(seconds)  # a synchronous call on the loop: what the watch exists to catch


async def test_a_blocked_loop_is_logged_with_the_blocking_call(caplog: pytest.LogCaptureFixture) -> None:
    watch = LoopWatch(asyncio.get_running_loop(), threshold_s=0.05, interval_s=0.01)
    before = STALLS._value.get()
    with caplog.at_level(logging.WARNING, logger="lector.facade.loop"):
        watch.start()
        await asyncio.sleep(0.1)
        _hold_the_loop(0.3)
        await asyncio.sleep(0.2)
        watch.stop()
    stalls = [r.getMessage() for r in caplog.records if "event loop stalled" in r.getMessage()]
    assert len(stalls) == 1, stalls
    assert "_hold_the_loop" in stalls[0] and "time.sleep" in stalls[0]
    assert 250 <= float(stalls[0].split()[3]) < 2000
    assert STALLS._value.get() == before + 1


async def test_an_answering_loop_is_not_reported(caplog: pytest.LogCaptureFixture) -> None:
    watch = LoopWatch(asyncio.get_running_loop(), threshold_s=0.05, interval_s=0.01)
    with caplog.at_level(logging.WARNING, logger="lector.facade.loop"):
        watch.start()
        for _ in range(20):
            await asyncio.sleep(0.01)
        watch.stop()
    assert not [r for r in caplog.records if "stalled" in r.getMessage()]
