"""The canonical pass of operation counts on hand-made expressions."""

from __future__ import annotations

import random

import pytest
import sympy as sm
from sympy.core.function import AppliedUndef

from eomcompare.symbolic.canonical import canonical, collapse_pythagorean
from eomcompare.symbolic.counting import count_ops

x, y, z, m1, m2, a, b = sm.symbols("x y z m1 m2 a b")
s, c = sm.sin(x), sm.cos(x)


def _one(e, **kw):
    return canonical([e], **kw).exprs[0]


@pytest.mark.parametrize(
    "given,expected",
    [
        # kolev_manipulator's kane mass-matrix entry, and its variants
        (m1 + m2 * (s**2 + c**2), m1 + m2),
        (m1 + m2 * s**2 + m2 * c**2, m1 + m2),
        (-m2 * s**2 - m2 * c**2 + z, z - m2),
        # modified_lagrange's form: the numeric content cancels too
        (m2 * (2 * s**2 + 2 * c**2) / 2, m2),
        # a pair inside a larger sum, with a common factor of its own
        (2 * s**2 * sm.cos(y) + 2 * c**2 * sm.cos(y) + z, 2 * sm.cos(y) + z),
        # two pairs of different angles in one sum
        (s**2 + c**2 + sm.sin(y) ** 2 + sm.cos(y) ** 2, sm.Integer(2)),
        # nested: the inner sum collapses first, then the outer one
        (a * sm.sin(y) ** 2 * (s**2 + c**2) + a * sm.cos(y) ** 2, a),
        # numeric content of a sum moved into its product
        (m1 * (2 * x + 2 * y) / 2, m1 * (x + y)),
        # floats that are integers
        (sm.Float(1.0) * x + sm.Float(0.0) * y, x),
    ],
)
def test_rewrites(given, expected):
    assert sm.expand(_one(given) - expected) == 0
    assert count_ops(_one(given)) == count_ops(expected)


@pytest.mark.parametrize(
    "kept",
    [
        a * s**2 + b * c**2,  # different coefficients: not an identity
        s**2 + sm.cos(y) ** 2,  # different angles
        s**4 + c**4,  # not squares
        s**2 - c**2,
    ],
)
def test_what_is_not_an_identity_is_kept(kept):
    assert _one(kept) == kept
    assert collapse_pythagorean(kept) == kept


def test_values_unchanged_on_a_derivation():
    # The pass changes no value: double_pendulum's equations by kane.
    from eomcompare.formulations import get_formulation
    from eomcompare.systems import get_system

    ms = get_system("double_pendulum")
    eom = get_formulation("kane", count_ops=False).derive(ms)
    exprs = list(eom.mass_matrix) + list(eom.forcing)
    out = canonical(exprs).exprs
    symbols = sorted(set().union(*(e.free_symbols for e in exprs)), key=str)
    functions = sorted(set().union(*(e.atoms(AppliedUndef) for e in exprs)), key=str)
    rng = random.Random(0)
    for _ in range(5):
        point = {v: rng.uniform(-2, 2) for v in symbols + functions}
        for before, after in zip(exprs, out):
            want = complex(before.xreplace(point).evalf())
            got = complex(after.xreplace(point).evalf())
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12)


def _nodes(e, seen=None):
    seen = set() if seen is None else seen
    if e not in seen:
        seen.add(e)
        for a in e.args:
            _nodes(a, seen)
    return seen


def test_each_shared_subexpression_is_visited_once():
    # 40 levels of sharing: 2**40 paths, a few dozen distinct nodes.
    e = m2 * (s**2 + c**2)
    for k in range(40):
        e = e * sm.Symbol(f"p{k}") + e
    out = _one(e)
    # (a walk of the result's distinct nodes: ``has`` would follow paths)
    assert not any(isinstance(n, (sm.sin, sm.cos)) for n in _nodes(out))


def test_trigsimp_within_its_cap():
    # A common factor is what trigsimp finds after the other steps.
    common = 3 * x * s + 3 * x * y * c
    applied = canonical([common], trig_cap=30.0)
    assert applied.trigsimp == "applied"
    assert count_ops(applied.exprs[0]) < count_ops(common)
    assert canonical([common]).trigsimp == "off"
    assert canonical([common]).exprs[0] == common


def test_a_capped_trigsimp_is_reported_and_keeps_the_other_steps():
    capped = canonical([m2 * (s**2 + c**2), 3 * x * s + 3 * x * y * c], trig_cap=0.0)
    assert capped.trigsimp == "capped"
    assert capped.exprs[0] == m2  # step 1 still applied
    assert capped.exprs[1] == 3 * x * s + 3 * x * y * c


@pytest.mark.parametrize(
    "given,expected",
    [
        (a * c * sm.cos(y) + a * s * sm.sin(y), a * sm.cos(x - y)),
        (a * c * sm.cos(y) - a * s * sm.sin(y), a * sm.cos(x + y)),
        (s * sm.cos(y) - c * sm.sin(y), sm.sin(x - y)),
        (s * sm.cos(y) + c * sm.sin(y), sm.sin(x + y)),
        # sympy_kane's double_pendulum entry beside kane's cos(theta1 - theta2)
        (m1 * (s * sm.sin(y) + c * sm.cos(y)) / 2, m1 * sm.cos(x - y) / 2),
    ],
)
def test_angle_sums(given, expected):
    assert _one(given) == expected


def test_what_is_not_an_angle_sum_is_kept():
    for kept in (a * c * sm.cos(y) + b * s * sm.sin(y), s * sm.sin(y) + c * sm.sin(y)):
        assert _one(kept) == kept


t = sm.Symbol("t")
q, h, g = sm.Function("q")(t), sm.Symbol("h"), sm.Symbol("gamma")


def test_terms_of_moving_angles_are_expanded_where_they_cancel():
    # kolev_manipulator's kane mass-matrix entry: -h*m2*cos(gamma) once
    # expanded (sin(q)**2 + cos(q)**2 collapses after the expansion).
    inner1 = -h * sm.sin(g) * sm.sin(q) - h * sm.cos(g) * sm.cos(q)
    inner2 = -h * sm.sin(g) * sm.cos(q) + h * sm.sin(q) * sm.cos(g)
    entry = m2 * (inner1 * sm.cos(q) - inner2 * sm.sin(q))
    assert _one(entry) == -h * m2 * sm.cos(g)
    # A square of such sums: J - h**2*m2 + m2*h**2*(...) is J.
    assert _one(z - h**2 * m2 + m2 * (inner1**2 + inner2**2)) == z


def test_terms_without_a_moving_angle_keep_their_grouping():
    grouped = -a * (q + z) + b * sm.sin(q)
    assert _one(grouped) == grouped
    # a parameter angle is not expanded either
    constant = g * h * m2 * (-q * sm.sin(g) + sm.cos(g))
    assert _one(constant) == constant


def test_quotients_of_moving_angles_are_not_expanded():
    # expanding would multiply out the denominator; the entry is kept.
    e = (sm.sin(q) ** 2 + a) ** 2 / (sm.cos(q) + b) ** 3
    assert _one(e) == e
