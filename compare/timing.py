"""Repeated timings, their spread, and when one time beats another.

Every time the report compares (derivation, right-hand side, solve) is
measured several times; :func:`spread` turns the measurements into their
median and interquartile range, and :func:`beyond_noise` is the rule by
which one median is faster than another: only when the difference is
larger than the larger of the two spreads.  A difference within it is a
tie, and so is one between times whose spread is unknown (fewer than
:data:`MIN_SAMPLES` measurements on both sides).  :func:`calibrate` is the
fixed workload times are divided by where runs on different machines or
under different loads are compared (the regression gate).

>>> s = spread([1.0, 1.1, 1.2, 1.3, 1.4])
>>> round(s.median, 6), round(s.iqr, 6), s.k
(1.2, 0.2, 5)
>>> beyond_noise(spread([1.0] * 5), spread([2.0, 2.1, 1.9, 2.0, 2.0]))
True
>>> beyond_noise(spread([1.0, 1.5, 2.0]), spread([1.6, 1.8, 2.4]))
False
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "MIN_SAMPLES",
    "Spread",
    "spread",
    "beyond_noise",
    "tied_with_best",
    "repeat_within",
    "settled",
    "SETTLED_SPREAD",
    "calibrate",
    "calibrate_clocks",
    "CALIBRATION_POWER",
]

#: Fewest measurements whose interquartile range is taken as their spread;
#: with fewer the spread is unknown (``nan``).
MIN_SAMPLES = 3

#: The spread, as a fraction of the median, at which the run stops
#: repeating a derivation or a solve (:func:`settled`): 2 %, about the
#: spread of repeated processor-time measurements of the same solve on a
#: machine shared with other jobs.
SETTLED_SPREAD = 0.02

#: Power of the polynomial of the calibration workload (:func:`calibrate`):
#: computed afresh every time, a few hundredths of a second, so that the two
#: calibrations of every case stay a small part of a run.
CALIBRATION_POWER = 5


@dataclass(frozen=True)
class Spread:
    """Median, interquartile range (``nan`` when unknown) and count of a
    time's measurements."""

    median: float
    iqr: float
    k: int


def spread(samples: Iterable[float]) -> Spread:
    """The median and interquartile range of the finite ``samples``
    (numpy's linear quantiles); the range is ``nan`` below
    :data:`MIN_SAMPLES` measurements, the median ``nan`` without any."""
    xs = np.array([x for x in samples if math.isfinite(x)], dtype=float)
    if not len(xs):
        return Spread(float("nan"), float("nan"), 0)
    iqr = float("nan")
    if len(xs) >= MIN_SAMPLES:
        q1, q3 = np.percentile(xs, [25, 75])
        iqr = float(q3 - q1)
    return Spread(float(np.median(xs)), iqr, len(xs))


def beyond_noise(fast: Spread, slow: Spread) -> bool:
    """Whether ``fast`` is faster than ``slow`` beyond the noise: its median
    is smaller by more than the larger known interquartile range of the
    two.  With neither range known (fewer than :data:`MIN_SAMPLES`
    measurements on both sides) no difference is beyond the noise: one
    measurement says nothing of how far the next would fall from it."""
    if not (math.isfinite(fast.median) and math.isfinite(slow.median)):
        return False
    known = [s for s in (fast.iqr, slow.iqr) if math.isfinite(s)]
    if not known:
        return False
    return slow.median - fast.median > max(known)


def tied_with_best(times: dict[str, Spread]) -> list[str]:
    """The names whose time is the smallest median or within the noise of
    it (by :func:`beyond_noise`), fastest median first; one name is a
    winner beyond the noise, several are a tie, none means no time."""
    ranked = sorted(
        ((s, name) for name, s in times.items() if math.isfinite(s.median)),
        key=lambda item: (item[0].median, item[1]),
    )
    if not ranked:
        return []
    best = ranked[0][0]
    return [name for s, name in ranked if s is best or not beyond_noise(best, s)]


def settled(values: Sequence[float], within: float) -> bool:
    """Whether measurements have settled: at least :data:`MIN_SAMPLES`
    of them, with an interquartile range at most ``within`` times their
    median.  Further repeats would then only narrow a spread that already
    tells apart any two medians further apart than that fraction (the
    rule of :func:`beyond_noise`), so a ranking no longer depends on them.

    >>> settled([1.0, 1.01, 1.0], 0.02), settled([1.0, 1.2, 1.0, 1.3], 0.02)
    (True, False)
    """
    s = spread(values)
    return s.k >= MIN_SAMPLES and s.iqr <= within * s.median


def repeat_within(
    measure: Callable[[], tuple[float, float]],
    samples: list[tuple[float, float]],
    k: int,
    budget: float,
    settle: float | None = None,
) -> list[float]:
    """The values of ``samples`` and of further calls of ``measure()``, each
    a (value, cost) pair with its cost in seconds of processor time: up to
    ``k`` values in all, another taken only while the costs so far and one
    more of their median stay within ``budget``, so that cheap
    measurements are repeated ``k`` times and expensive ones fewer (an
    expensive derivation is not the one a ranking of the fastest depends
    on).  Costs in processor time keep the count of repeats the same on a
    machine busy with other jobs.  With ``settle``, repeating also stops
    once the values have :func:`settled` within that fraction of their
    median (from :data:`MIN_SAMPLES` values on)."""
    samples = list(samples)
    while samples and len(samples) < k and math.isfinite(samples[-1][0]):
        costs = [c for _, c in samples]
        if sum(costs) + float(np.median(costs)) > budget:
            break
        if settle is not None and settled([v for v, _ in samples], settle):
            break
        samples.append(measure())
    return [v for v, _ in samples]


def calibrate(
    repeats: int = 3, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Seconds of a fixed sympy + numpy workload, to turn times into ratios
    (the fastest of ``repeats``), by ``clock``.

    Every case measures it alongside its own timings (``calibration_s`` of
    its row, in wall time like the derivation; ``calibration_cpu_s`` in the
    processor time of the thread, ``time.thread_time``, like the
    right-hand side); a run also measures it at its start and end and
    keeps the geometric mean.

    The workload is independent of this package, so a slower derivation
    shows as a larger ratio even on a machine that is itself slower; see
    :func:`calibrate_clocks` for what it computes.
    """
    return calibrate_clocks(repeats, (clock,))[0]


def calibrate_clocks(
    repeats: int = 3, clocks: Sequence[Callable[[], float]] = (time.perf_counter,)
) -> tuple[float, ...]:
    """:func:`calibrate` read on several ``clocks`` around the same runs of
    the workload (the fastest of ``repeats`` on each clock), so that a case
    measures its wall-time and processor-time calibrations at once.

    The workload expands, differentiates and cse-reduces a polynomial in
    symbols made afresh for every run (``sympy.Dummy``), then solves a
    small linear system 200 times.  Fresh symbols keep the measurement
    independent of what sympy's memo holds: with the same symbols every
    time, it measured a memo hit (about 0.03 s) in a process where an
    earlier run of it was still memoised and the whole computation (about
    0.3 s) where a derivation or a cache load had evicted or cleared it, a
    factor of ten decided by what ran before, not by the machine.
    """
    import sympy as sm

    times: list[list[float]] = [[] for _ in clocks]
    for _ in range(repeats):
        starts = [clock() for clock in clocks]
        x, y, z = sm.Dummy("x"), sm.Dummy("y"), sm.Dummy("z")
        e = sm.expand((x + sm.sin(y) + z) ** CALIBRATION_POWER)
        sm.cse(sm.Matrix([e.diff(x), e.diff(y)]))
        a = np.random.default_rng(0).random((60, 60))
        for _ in range(200):
            np.linalg.solve(a + 60 * np.eye(60), a[:, 0])
        ends = [clock() for clock in clocks]
        for got, start, end in zip(times, starts, ends):
            got.append(end - start)
    return tuple(float(np.min(t)) for t in times)
