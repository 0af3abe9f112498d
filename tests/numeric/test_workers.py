"""Forked workers driven from one thread (``numeric.child.Workers``): the
report's parts are made in them."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from eomcompare.numeric.child import ChildDied, Workers

# Workers fork their processes; where os.fork does not exist (Windows) the
# report makes its parts in its own process and no Workers are made.
pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork"), reason="Workers fork; this platform has no os.fork"
)


def _square_and_pid(x):
    return x * x, os.getpid()


def _boom(x):
    if x == 3:
        raise ValueError(f"task {x} failed")
    return x


def _sleep(seconds):
    time.sleep(seconds)
    return seconds


def _large(n):
    return b"x" * n


def test_every_task_runs_once_in_the_workers_and_comes_back():
    tasks = list(range(40))
    with Workers(_square_and_pid, 3) as workers:
        got = list(workers.map_unordered(tasks))
        pids = set(workers.pids)
    assert sorted(task for task, _ in got) == tasks
    assert all(value == task * task for task, (value, _) in got)
    # Made in the three workers, not here.
    done_in = {pid for _, (_, pid) in got}
    assert done_in <= pids and os.getpid() not in done_in
    assert len(pids) == 3


def test_results_larger_than_a_pipe_arrive_whole():
    sizes = [1, 70_000, 3_000_000, 65_536]
    with Workers(_large, 2) as workers:
        got = dict(workers.map_unordered(sizes))
    assert {n: len(v) for n, v in got.items()} == {n: n for n in sizes}
    assert all(set(v) == {ord("x")} for v in got.values())


def test_a_tasks_exception_is_raised_with_the_workers_traceback():
    with Workers(_boom, 2) as workers:
        with pytest.raises(ValueError, match="task 3 failed") as info:
            list(workers.map_unordered(range(6)))
    assert "_boom" in info.value.child_traceback


def test_a_worker_that_dies_is_an_error_not_a_wait():
    with Workers(_sleep, 2) as workers:
        results = workers.map_unordered([30, 30])
        victim = workers.pids[0]
        os.kill(victim, signal.SIGKILL)
        start = time.monotonic()
        with pytest.raises(ChildDied, match="SIGKILL"):
            next(results)
        assert time.monotonic() - start < 10
    assert not Path(f"/proc/{victim}").exists()


def test_close_kills_and_reaps_busy_workers_without_threads():
    before = threading.active_count()
    workers = Workers(_sleep, 2)
    workers.map_unordered([60, 60, 60])  # sent now, before any read
    pids = workers.pids
    assert threading.active_count() == before
    start = time.monotonic()
    workers.close()
    assert time.monotonic() - start < 5
    # Reaped: no zombie is left behind.
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)
    assert workers.pids == []


def test_work_starts_before_the_results_are_read(tmp_path):
    marker = tmp_path / "started"

    def touch(_):
        marker.touch()
        return True

    with Workers(touch, 1) as workers:
        results = workers.map_unordered([0])
        deadline = time.monotonic() + 30
        while not marker.exists():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert list(results) == [(0, True)]


def test_jobs_must_be_positive():
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        Workers(abs, 0)
