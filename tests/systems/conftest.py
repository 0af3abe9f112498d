"""Fixtures shared by the declaration tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def states_with_speeds():
    """``states(ms, n=5)``: ``n`` reproducible random consistent states of
    ``ms`` (seeds 0..n-1), each ``(t, q, q', u)``, for systems whose speeds
    are not the coordinate rates (a quaternion's body rates)."""

    def states(ms, n=5):
        out = []
        for seed in range(n):
            t0, q, qd = ms.random_state(seed=seed)
            out.append((t0, q, qd, ms.speeds_from_rates(t0, q, qd)))
        return out

    return states
