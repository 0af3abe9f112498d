"""The Python call stack's chunks: CPython maps a new chunk each time a
call crosses the end of the current one and unmaps it on return, so a
call made over and over at such a depth faults in fresh pages every time;
:func:`call_with_room` gives the calls below it a chunk with room, and the
harness's forked work runs inside it.

Page faults are read from the kernel's count (``getrusage``): a page of a
freshly mapped chunk is a minor fault when first written.
"""

from __future__ import annotations

import resource
import sys
import threading

import pytest

from eomcompare.numeric.child import Workers, call_in_child
from eomcompare.numeric.stack_room import call_with_room

# What is measured exists on CPython only (its frame chunks), and is read
# through Linux's per-thread getrusage (Linux also forks, as Child and
# Workers need).
pytestmark = pytest.mark.skipif(
    sys.implementation.name != "cpython" or not hasattr(resource, "RUSAGE_THREAD"),
    reason="counts CPython's frame chunks through Linux's per-thread getrusage",
)

#: Calls of a one-frame function made at each depth.
CALLS = 2_000
#: Depths tried: well over two chunks of 16 KiB of these small frames.
DEPTHS = range(400)


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt


def _leaf() -> None:
    return None


def _at_depth(depth: int, fn):
    if depth:
        return _at_depth(depth - 1, fn)
    return fn()


def _probe() -> int:
    before = _faults()
    for _ in range(CALLS):
        _leaf()
    return _faults() - before


def worst_faults(_task=None) -> int:
    """The most page faults :data:`CALLS` calls of a one-frame function
    made, over the stack depths :data:`DEPTHS` below the caller."""
    return max(_at_depth(d, _probe) for d in DEPTHS)


def _in_a_new_thread(fn):
    """``fn()`` at the bottom of a new thread's own frame stack."""
    out: list = []

    def run():
        try:
            out.append(("ok", fn()))
        except BaseException as exc:  # raised again in the test's thread
            out.append(("raise", exc))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    kind, value = out[0]
    if kind == "raise":
        raise value
    return value


def test_a_call_at_a_chunks_end_faults_at_every_call():
    # The premise: without room, some depth puts the leaf's frame past the
    # end of a chunk, and each call maps (and faults in) a new one.
    assert _in_a_new_thread(worst_faults) >= CALLS


def test_calls_below_call_with_room_map_no_chunk():
    assert _in_a_new_thread(lambda: call_with_room(worst_faults)) < CALLS // 20


def test_this_suites_tests_run_with_room():
    # tests/conftest.py runs each test's protocol through call_with_room.
    assert worst_faults() < CALLS // 20


def test_a_new_threads_exception_reaches_the_test():
    with pytest.raises(ZeroDivisionError):
        _in_a_new_thread(lambda: 1 // 0)


def test_call_with_room_passes_arguments_and_exceptions():
    assert call_with_room(divmod, 7, 2) == (3, 1)
    assert call_with_room(int, "ff", base=16) == 255
    with pytest.raises(ZeroDivisionError):
        call_with_room(divmod, 1, 0)


# The harness's forks below are made from a new thread's stack, without the
# room this suite's tests run with: the child's own call must give it.


def test_a_forked_childs_work_runs_with_room():
    def fork():
        return call_in_child(worst_faults, timeout=120)

    assert _in_a_new_thread(fork) < CALLS // 20


def test_a_workers_tasks_run_with_room():
    def fork():
        with Workers(worst_faults, 1) as workers:
            return max(r for _, r in workers.map_unordered([0, 1]))

    assert _in_a_new_thread(fork) < CALLS // 20
