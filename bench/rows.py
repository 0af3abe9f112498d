"""Helpers the robot parts of the benchmark share (:mod:`eomcompare.bench.robots`,
:mod:`eomcompare.bench.khalil`): a case run in a child process under the time cap,
and a row of the target table."""

from __future__ import annotations

from eomcompare.numeric.child import ChildTimeout, call_in_child

__all__ = ["capped", "target_row"]


def capped(fn, *args, cap):
    """``fn(*args)`` in a child process killed after ``cap`` seconds (the
    suite's one time limit, :mod:`eomcompare.numeric.child`); None past the cap."""
    try:
        return call_in_child(fn, *args, timeout=cap)
    except ChildTimeout:
        return None


def target_row(name, value, limit, note):
    """A row of the benchmark's target table (as ``bench.suite`` writes
    them); ``value`` None: not measured."""
    if value is None:
        status = "not measured"
    else:
        status = "met" if value <= limit else "MISSED"
    return {
        "target": name,
        "value": float("nan") if value is None else value,
        "limit": limit,
        "status": status,
        "note": note,
    }
