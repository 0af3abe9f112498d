"""Timing one call: the one timer of the benchmarks (the suite and its
robot part)."""

from __future__ import annotations

import statistics
import timeit

__all__ = ["per_call"]


def per_call(fn, repeats: int, min_seconds: float = 0.05) -> float:
    """Median seconds per call of ``fn()`` over ``repeats`` batches, each
    batch at least ``min_seconds`` long."""
    number = 1
    while True:
        s = timeit.timeit(fn, number=number)
        if s >= min_seconds or number >= 1 << 22:
            break
        number *= 2 if s <= 0 else max(2, int(min_seconds / s * 1.2))
    runs = timeit.repeat(fn, number=number, repeat=repeats)
    return statistics.median(runs) / number
