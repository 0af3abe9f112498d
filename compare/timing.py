"""Repeated timings, their spread, and when one time beats another.

Every time the report compares (derivation, right-hand side, solve) is
measured several times; :func:`spread` turns the measurements into their
median and interquartile range, and :func:`beyond_noise` is the rule by
which one median is faster than another: only when the difference is
larger than the larger of the two spreads.  A difference within it is a
tie, and so is one between times whose spread is unknown (fewer than
:data:`MIN_SAMPLES` measurements on both sides).

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "MIN_SAMPLES",
    "Spread",
    "spread",
    "beyond_noise",
    "tied_with_best",
    "repeat_within",
]

#: Fewest measurements whose interquartile range is taken as their spread;
#: with fewer the spread is unknown (``nan``).
MIN_SAMPLES = 3


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


def repeat_within(
    measure: Callable[[], tuple[float, float]],
    samples: list[tuple[float, float]],
    k: int,
    budget: float,
) -> list[float]:
    """The values of ``samples`` and of further calls of ``measure()``, each
    a (value, cost) pair with its cost in seconds of processor time: up to
    ``k`` values in all, another taken only while the costs so far and one
    more of their median stay within ``budget``, so that cheap
    measurements are repeated ``k`` times and expensive ones fewer (an
    expensive derivation is not the one a ranking of the fastest depends
    on).  Costs in processor time keep the count of repeats the same on a
    machine busy with other jobs."""
    samples = list(samples)
    while samples and len(samples) < k and math.isfinite(samples[-1][0]):
        costs = [c for _, c in samples]
        if sum(costs) + float(np.median(costs)) > budget:
            break
        samples.append(measure())
    return [v for v, _ in samples]
