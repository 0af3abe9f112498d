"""The literature's operation-count convention on hand-counted expressions,
and the LU solve's count against its loops run with counters."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import sympy as sm

from eomcompare.bench.literature_counts import (
    PUBLISHED,
    count_ops_literature,
    featherstone,
    ldl_solve_counts,
    lu_solve_counts,
)

a, b, c, d, x, y, q, m, l = sm.symbols("a b c d x y q m l")


def counts(exprs, params=()):
    n = count_ops_literature(exprs, params)
    return n.mul, n.add, dict(n.calls)


@pytest.mark.parametrize(
    "expr,expected",
    [
        (a * b + c, (1, 1, {})),
        (a * b - c * d, (2, 1, {})),  # a subtraction is an addition
        (-a * b, (1, 0, {})),  # the sign is free
        (a / b, (1, 0, {})),  # a division is a multiplication
        (1 / (a * b), (2, 0, {})),  # a*b, then 1/(a*b)
        (a / (b * c), (2, 0, {})),
        (x**3, (2, 0, {})),
        (a / x**2, (2, 0, {})),  # x*x, a/(x*x)
        (2 * x + 3 * y - 1, (2, 2, {})),
        (sm.sin(q) * sm.cos(q) + sm.sqrt(x), (1, 1, {"sin": 1, "cos": 1, "sqrt": 1})),
        (x ** sm.Rational(3, 2), (0, 0, {"pow": 1})),
    ],
)
def test_hand_counted(expr, expected):
    assert counts([expr]) == expected


def test_common_subexpressions_count_once():
    s = a * sm.sin(q)
    # x0 = a*sin(q); (x0 + b)*(x0 + c): 2 multiplications, 2 additions.
    assert counts([(s + b) * (s + c)]) == (2, 2, {"sin": 1})
    # Two outputs sharing x0: counted once across the set.
    assert counts([s + b, s - c]) == (1, 2, {"sin": 1})


def test_parameter_only_parts_are_counted_apart():
    n = count_ops_literature([m * l * sm.sin(q) + m * l**2 * x], [m, l])
    # Per evaluation: p0*sin(q) + p1*x (p0 = m*l, p1 = m*l**2).
    assert (n.mul, n.add, dict(n.calls)) == (2, 1, {"sin": 1})
    # Per parameter set: m*l (1) and m*l**2 (2, or 1 reusing m*l: cse
    # does not see l**2 inside m*l**2 as l*l, so 2).
    assert n.param_mul in (2, 3) and n.param_add == 0
    # The same expression with m, l as inputs costs more per evaluation.
    plain = count_ops_literature([m * l * sm.sin(q) + m * l**2 * x])
    assert plain.mul > n.mul


def test_parameter_sums_are_set_apart():
    n = count_ops_literature([(m + l) * x + 2 * m * y + m + l], [m, l])
    # p0 = m + l, p1 = 2*m, p2 = m + l (the constant terms of the sum,
    # the same as p0): per evaluation p0*x + p1*y + p0.
    assert (n.mul, n.add) == (2, 2)
    assert n.param_add == 1 and n.param_mul == 1


def _lu_solve_instrumented(A, b):
    """eom_lu_solve of numeric.compiled, transcribed with counters."""
    A, b = A.copy(), b.copy()
    n = len(b)
    mul = add = 0
    for k in range(n):
        piv = max(range(k, n), key=lambda i: abs(A[i, k]))
        A[[k, piv]] = A[[piv, k]]
        b[[k, piv]] = b[[piv, k]]
        inv = 1.0 / A[k, k]
        mul += 1
        for i in range(k + 1, n):
            l_ = A[i, k] * inv
            mul += 1
            if l_ != 0.0:
                for j in range(k + 1, n):
                    A[i, j] -= l_ * A[k, j]
                    mul += 1
                    add += 1
                b[i] -= l_ * b[k]
                mul += 1
                add += 1
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= A[i, j] * b[j]
            mul += 1
            add += 1
        b[i] = s / A[i, i]
        mul += 1
    return b, mul, add


@pytest.mark.parametrize("n", range(1, 9))
def test_lu_solve_counts_match_the_loops(n):
    rng = np.random.default_rng(n)
    A = rng.normal(size=(n, n)) + n * np.eye(n)
    rhs = rng.normal(size=n)
    z, mul, add = _lu_solve_instrumented(A, rhs)
    assert np.allclose(A @ z, rhs)
    assert lu_solve_counts(n) == (mul, add)


def _ldl_solve_instrumented(A, b):
    """eom_ldl_solve of numeric.compiled, in Python, counting."""
    n = len(b)
    L, d, dinv, v = np.zeros((n, n)), np.zeros(n), np.zeros(n), np.zeros(n)
    b = b.astype(float).copy()
    mul = add = 0
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            v[k] = L[j, k] * d[k]
            s -= L[j, k] * v[k]
            mul += 2
            add += 1
        d[j], dinv[j] = s, 1.0 / s
        mul += 1
        for i in range(j + 1, n):
            r = A[i, j]
            for k in range(j):
                r -= L[i, k] * v[k]
                mul += 1
                add += 1
            L[i, j] = r * dinv[j]
            mul += 1
    for i in range(1, n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * b[k]
            mul += 1
            add += 1
        b[i] = s
    for i in range(n - 1, -1, -1):
        s = b[i] * dinv[i]
        mul += 1
        for k in range(i + 1, n):
            s -= L[k, i] * b[k]
            mul += 1
            add += 1
        b[i] = s
    return b, mul, add


@pytest.mark.parametrize("n", range(1, 9))
def test_ldl_solve_counts_match_the_loops(n):
    rng = np.random.default_rng(n)
    B = rng.normal(size=(n, n))
    A = B @ B.T + n * np.eye(n)  # symmetric positive definite
    rhs = rng.normal(size=n)
    z, mul, add = _ldl_solve_instrumented(A, rhs)
    assert np.allclose(A @ z, rhs)
    assert ldl_solve_counts(n) == (mul, add)
    if n >= 6:  # fewer than LU's (n^3/6 against n^3/3 for large n)
        lm, la = lu_solve_counts(n)
        assert mul < lm and add < la


def test_compiled_backend_has_the_counted_ldl_solver():
    from eomcompare.numeric import c_code

    src = c_code._SOLVE  # the solve compiled into every model
    for line in (
        "v[k] = L[j * NZ + k] * d[k];",
        "s -= L[j * NZ + k] * v[k];",
        "double inv = 1.0 / s;",
        "for (int k = 0; k < j; ++k) r -= L[i * NZ + k] * v[k];",
        "L[i * NZ + j] = r * inv;",
        "for (int k = 0; k < i; ++k) s -= L[i * NZ + k] * b[k];",
        "double s = b[i] * dinv[i];",
        "for (int k = i + 1; k < NZ; ++k) s -= L[k * NZ + i] * b[k];",
    ):
        assert line in src, line


def test_compiled_backend_has_the_counted_solver():
    # The counted loops are the backend's: guard against a silent change.
    from eomcompare.numeric import c_code

    src = c_code._SOLVE  # the solve compiled into every model
    for line in (
        "double inv = 1.0 / A[k * n + k];",
        "double l = A[i * n + k] * inv;",
        "A[i * n + j] -= l * A[k * n + j];",
        "b[i] -= l * b[k];",
        "s -= A[i * n + j] * b[j];",
        "b[i] = s / A[i * n + i];",
    ):
        assert line in src


def test_published_figures_are_self_consistent():
    f1 = featherstone(1)
    # One joint: solving 1x1 is one division, no addition.
    assert f1["factorize+solve"] == (1, 0)
    f6 = featherstone(6)
    assert f6["RNEA"] == (450, 386) and f6["ABA"] == (1085, 982)
    # Hollerbach's polynomial disagrees with his tabulated 66,271.
    poly = (
        sm.Rational(65, 2) * 6**4
        + sm.Rational(1037, 12) * 6**3
        + sm.Rational(685, 4) * 6**2
        + sm.Rational(160, 3) * 6
        - 128
    )
    assert poly == 67143
    assert (
        PUBLISHED["Lagrangian, 4x4 matrices (Uicker/Kahn; Hollerbach 1980)"][0] == 66271
    )
    assert (150 * 6 - 48, 131 * 6 - 48) == PUBLISHED[
        "recursive Newton-Euler (Hollerbach 1980)"
    ][:2]


def test_table_from_a_run():
    from eomcompare.bench.literature_table import literature_markdown, literature_rows

    frame = literature_rows(
        ns=(1, 2), formulations=("lagrange",), stanford=False, progress=lambda row: None
    )
    one = frame[frame["n"] == 1].iloc[0]
    # One joint about the vertical: M is a constant of the parameters and
    # the forcing vanishes, so forward dynamics per evaluation is the
    # solve alone (a reciprocal and a division) and inverse dynamics one
    # multiplication, p * q''.
    assert (one["mf_mul"], one["mf_add"]) == (0, 0)
    assert (one["fd_mul"], one["fd_add"]) == (2, 0)
    assert (one["id_mul"], one["id_add"]) == (1, 0)
    assert one["param_mul"] > 0
    two = frame[frame["n"] == 2].iloc[0]
    # Joint 2 moves off the vertical: its sine and cosine appear.
    assert two["fd_calls"] == 2 and two["fd_mul"] > 2
    text = literature_markdown(frame)
    assert "| 2 | lagrange |" in text and "224" not in text.split("\n")[0]
    assert "67,143" in text


def test_table_names_the_recursion_and_leaves_its_inverse_dynamics_out():
    from eomcompare.bench.literature_table import literature_markdown, literature_rows

    frame = literature_rows(
        ns=(2,),
        formulations=("kane_articulated",),
        stanford=False,
        progress=lambda row: None,
    )
    row = frame.iloc[0]
    # The explicit form: no solve, and at or below ABA's 189 / 162 at n = 2
    # (Featherstone 2008, Table 10.1: 224n - 259 / 205n - 248).
    assert (row["solve_mul"], row["solve_add"]) == (0, 0)
    assert row["fd_mul"] <= 189 and row["fd_add"] <= 162
    assert pd.isna(row["id_mul"])
    line = next(
        ln for ln in literature_markdown(frame).splitlines() if "kane_articulated" in ln
    )
    assert line.startswith("| 2 | kane_articulated |") and "| — |" in line


# The Stanford arm's inverse dynamics by Kane's equations evaluated
# recursively in body frames (bench.robots, part 2): the figures the
# benchmark's robot table and the theory page publish beside Kane &
# Levinson's 646 / 394, pinned so that a regression cannot pass.
@pytest.mark.slow
@pytest.mark.parametrize(
    "assumptions, expected",
    [
        ("general", (359, 293)),
        ("principal axes", (359, 285)),
        ("principal axes, mass centres on joint axes", (224, 161)),
    ],
)
def test_stanford_arm_recursive_inverse_dynamics_counts(assumptions, expected):
    from eomcompare.bench.literature_counts import recursive_inverse_dynamics_counts
    from eomcompare.bench.robots import ASSUMPTION_SETS, KANE_LEVINSON
    from eomcompare.systems import get_system

    ms = get_system(
        "stanford_arm", symbolic_inertia=True, **ASSUMPTION_SETS[assumptions][0]
    )
    n = recursive_inverse_dynamics_counts(ms)
    assert (n.mul, n.add) == expected
    # Below Kane & Levinson's published figures under every assumption set.
    assert n.mul <= KANE_LEVINSON[0] and n.add <= KANE_LEVINSON[1]
