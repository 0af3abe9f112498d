"""The tree-walking derivatives of symbolic.calculus against sympy's own
``diff``/``jacobian`` on random expressions (compared by value at random
points, so no simplification decides the outcome)."""

from __future__ import annotations

import math

import pytest
import sympy as sm
import sympy.physics.mechanics as me
from hypothesis import given
from hypothesis import strategies as st

from eomcompare.symbolic.calculus import (
    derivative,
    directional_derivative,
    dynamic_symbols,
    gradient,
    jacobian,
    lagrange_terms,
    reverse_gradient,
    substitute,
    time_derivative,
)
from eomcompare.symbolic.frames import FrameAlgebra, kinetic_energy

t = me.dynamicsymbols._t
x, y, z = sm.symbols("x y z")
q1, q2 = me.dynamicsymbols("q1 q2")
u1, u2 = me.dynamicsymbols("u1 u2")
LEAVES = [
    x,
    y,
    z,
    q1,
    q2,
    q1.diff(t),
    u1,
    u2,
    u1.diff(t),
    t,
    sm.Integer(2),
    sm.Rational(1, 3),
]
UNARY = [
    sm.sin,
    sm.cos,
    sm.exp,
    lambda a: sm.sqrt(a**2 + 1),
    lambda a: a**2,
    lambda a: 1 / (a**2 + 2),
    sm.atan,
]
BINARY = [
    sm.Add,
    sm.Mul,
    lambda a, b: a - b,
    lambda a, b: sm.atan2(a, b + 3),
    lambda a, b: (a**2 + 1) ** b,
]  # a moving exponent: the log rule


def _expr(draw, depth):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(LEAVES))
    if draw(st.booleans()):
        return draw(st.sampled_from(UNARY))(_expr(draw, depth - 1))
    return draw(st.sampled_from(BINARY))(_expr(draw, depth - 1), _expr(draw, depth - 1))


expressions = st.composite(lambda draw: _expr(draw, 4))()


def _values(seed):
    """Distinct values for every leaf: derivatives before their functions
    (xreplace is top-down)."""
    import random

    rng = random.Random(seed)
    funcs = [
        q1.diff(t, 2),
        u1.diff(t, 2),
        q1.diff(t),
        q2.diff(t),
        u1.diff(t),
        u2.diff(t),
        q1,
        q2,
        u1,
        u2,
    ]
    return (
        {f: sm.Float(rng.uniform(-1.5, 1.5)) for f in funcs},
        {s: sm.Float(rng.uniform(-1.5, 1.5)) for s in (x, y, z, t)},
    )


def _value(e, seed=1):
    funcs, syms = _values(seed)
    v = complex(sm.sympify(e).xreplace(funcs).xreplace(syms).evalf())
    return v


def _same(a, b, seeds=(1, 2, 3)):
    """``a`` (ours) equals ``b`` (sympy's) at a few random points; a point
    where sympy's own value is not finite (a pole) decides nothing, but
    ours must be finite wherever sympy's is."""
    for seed in seeds:
        va, vb = _value(a, seed), _value(b, seed)
        if not all(map(math.isfinite, (vb.real, vb.imag))):
            continue
        if not all(map(math.isfinite, (va.real, va.imag))):
            return False
        if abs(va - vb) > 1e-9 * (1 + abs(vb)):
            return False
    return True


@given(expressions)
def test_jacobian_matches_sympy(e):
    variables = [x, q1, q1.diff(t), u1]
    ours = jacobian(sm.Matrix([e]), variables)
    ref = sm.Matrix([e]).jacobian(variables)
    assert all(_same(a, b) for a, b in zip(ours, ref))


@given(expressions)
def test_directional_derivative_matches_sympy(e):
    direction = {q1: q1.diff(t), q2: q2.diff(t), x: y}
    ours = directional_derivative(e, direction)
    ref = sum(e.diff(s) * v for s, v in direction.items())
    assert _same(ours, ref)


@given(expressions)
def test_time_derivative_matches_sympy(e):
    assert _same(time_derivative(e, t), e.diff(t))


@given(expressions)
def test_reverse_gradient_matches_sympy(e):
    variables = [x, q1, q1.diff(t), u1, y]
    ours = reverse_gradient(e, variables)
    assert len(ours) == len(variables)
    assert all(_same(a, e.diff(v)) for a, v in zip(ours, variables))


def test_reverse_gradient_of_shared_subtrees_and_fallbacks():
    # A subtree met along several paths gets the adjoints of all of them;
    # a piecewise node goes to sympy; a variable that is the whole
    # expression, or is absent, has derivative one, or zero.
    s = sm.sin(q1 * x)
    e = s**2 * q1.diff(t) + s * sm.cos(s) + sm.Piecewise((x**2, x > 0), (q1, True))
    variables = [q1, x, q1.diff(t), z]
    got = reverse_gradient(e, variables)
    for g, v in zip(got, variables):
        for xv in (0.7, -0.7):
            point = {q1.diff(t): 0.4, q1: 0.3, x: xv}
            assert float(g.subs(point)) == pytest.approx(
                float(e.diff(v).subs(point)), rel=1e-12
            )
    assert got[3] == 0
    assert reverse_gradient(q1, [q1, x]) == [1, 0]


def test_lagrange_terms_are_sympys_derivatives_by_either_pass():
    # One coordinate: the forward passes (their very expressions); from
    # two on, the backward pass.  Either way the values of sympy's diff.
    qd1, qd2 = q1.diff(t), q2.diff(t)
    T1 = x * sm.sin(q1) ** 2 * qd1**2 / 2
    p, M, dTdq, dp = lagrange_terms(T1, [q1], [qd1])
    assert (p, dTdq) == (gradient(T1, [qd1]), gradient(T1, [q1]))
    T2 = T1 + y * sm.cos(q1 - q2) * qd1 * qd2 + z * qd2**2 / 2
    p, M, dTdq, dp = lagrange_terms(T2, [q1, q2], [qd1, qd2])
    assert p == reverse_gradient(T2, [qd1, qd2, q1, q2])[:2]
    for T, qs, rates in ((T1, [q1], [qd1]), (T2, [q1, q2], [qd1, qd2])):
        p, M, dTdq, dp = lagrange_terms(T, qs, rates)
        for i, (qi, ri) in enumerate(zip(qs, rates)):
            assert _same(p[i], T.diff(ri))
            assert _same(dTdq[i], T.diff(qi))
            ref = sum(T.diff(ri).diff(qj) * rj for qj, rj in zip(qs, rates))
            assert _same(dp[i], ref)
            for j, rj in enumerate(rates):
                assert _same(M[i, j], T.diff(ri).diff(rj))


def test_linear_coefficients_read_off_exactly():
    # Linear in the speeds: the coefficients come back as they are.
    v = sm.Matrix(
        [(u1 + u2) * sm.cos(q1) + 3 * u2 * q2 + q1.diff(t) ** 2, u1 * sm.sin(q1 + q2)]
    )
    J = jacobian(v, [u1, u2])
    assert J == sm.Matrix([[sm.cos(q1), sm.cos(q1) + 3 * q2], [sm.sin(q1 + q2), 0]])


def test_variables_are_independent_of_each_other():
    # As in sympy's diff by a function: q' is held fixed when q varies, and
    # u(t) does not move when u'(t) does.
    e = q1 * q1.diff(t) ** 2 + u1.diff(t) * u1
    assert jacobian(sm.Matrix([e]), [q1, q1.diff(t), u1.diff(t)]) == sm.Matrix(
        [[q1.diff(t) ** 2, 2 * q1 * q1.diff(t), u1]]
    )


def test_nonlinear_entries_are_differentiated():
    e = sm.Matrix([u1 * u2 + sm.sin(u1)])
    assert sm.simplify(jacobian(e, [u1, u2]) - e.jacobian([u1, u2])) == sm.zeros(1, 2)


def test_gradient_and_piecewise_fallback():
    e = sm.Piecewise((x**2, x > 0), (y, True)) + x * y
    ref = [e.diff(x), e.diff(y)]
    got = gradient(e, [x, y])
    for g, r in zip(got, ref):
        for xv, yv in ((0.7, 0.3), (-0.7, 0.3)):
            assert float(g.subs({x: xv, y: yv})) == pytest.approx(
                float(r.subs({x: xv, y: yv}))
            )


def test_kinetic_energy_components_equal_sympys():
    """T from components in the bodies' own frames (merged rotations) is
    sympy's ``kinetic_energy`` of the same bodies."""
    from eomcompare.systems import get_system

    for name, options in (
        ("n_link_pendulum", {"n": 4}),
        ("rolling_disc", {}),
        ("solar_panels", {}),
    ):
        ms = get_system(name, **options)
        N = ms.frame
        ours = kinetic_energy(ms.bodies, N, FrameAlgebra())
        ref = sum(b.kinetic_energy(N) for b in ms.bodies)
        for seed in (1, 2):
            funcs = {
                f: sm.Float(0.1 * (i + 1) * seed)
                for i, f in enumerate(
                    sorted(
                        me.find_dynamicsymbols(ref) | me.find_dynamicsymbols(ours),
                        key=sm.count_ops,
                        reverse=True,
                    )
                )
            }
            pars = {p: sm.Float(v) for p, v in ms.parameters.items()}
            a = ours.xreplace(funcs).xreplace(pars).xreplace({t: 0.4})
            b = ref.xreplace(funcs).xreplace(pars).xreplace({t: 0.4})
            assert float(a) == pytest.approx(float(b), rel=1e-12), name


@given(st.lists(expressions, min_size=1, max_size=3))
def test_substitute_is_xreplace(exprs):
    # Derivatives nest their functions: the substitution must match the
    # derivative whole, as xreplace does, and share work across the list.
    a, b, c = sm.symbols("a b c")
    mapping = {q1.diff(t): a, q1: b, x: c * y, u1.diff(t): sm.Integer(3)}
    memo = {}
    ours = substitute(exprs, mapping, memo)
    assert ours == [e.xreplace(mapping) for e in exprs]
    # The memo is reusable: a second call with the same mapping agrees.
    assert substitute(exprs, mapping, memo) == ours


@given(st.lists(expressions, min_size=1, max_size=3))
def test_dynamic_symbols_is_find_dynamicsymbols(exprs):
    ref = set().union(*(me.find_dynamicsymbols(e) for e in exprs))
    assert dynamic_symbols(exprs) == ref


def test_substitute_visits_shared_subtrees_once():
    # A chain of products of sums: its tree doubles at every level, its
    # graph grows by a few nodes; the walks must follow the graph.
    def chain(leaf):
        e = leaf
        for _ in range(40):
            e = (e + 1) * (e + 2)
        return e

    calls = []

    class Mapping(dict):
        def __contains__(self, key):
            calls.append(key)
            return dict.__contains__(self, key)

    (out,) = substitute([chain(x)], Mapping({x: y}))
    assert out == chain(y)
    assert len(calls) < 400  # the tree has more than 2**40 nodes
    assert dynamic_symbols([chain(q1)]) == {q1}


def test_functions_of_a_variable_go_through_the_chain_rule():
    # f(u(t)) depends on u, f(x) on x: not leaves like q(t) (sympy's diff
    # by a function differentiates through the argument).
    f = sm.Function("f")
    cases = [
        (sm.Matrix([f(u1)]), [u1]),
        (sm.Matrix([f(q1) * q1.diff(t)]), [q1, q1.diff(t)]),
        (sm.Matrix([f(x) + f(t) * x]), [x]),
    ]
    for exprs, variables in cases:
        ours = jacobian(exprs, variables)
        ref = exprs.jacobian(variables)
        assert (ours - ref).applyfunc(lambda e: sm.simplify(e.doit())) == sm.zeros(
            *ref.shape
        )
        assert ours != sm.zeros(*ref.shape)
    assert directional_derivative(f(x), {x: y}) == y * f(x).diff(x)


def test_coefficients_of_a_long_sum():
    # One sum per variable at the end: the read-off is linear in the terms.
    a = sm.symbols("a0:300")
    e = sum(ai * u1 for ai in a) + sum(ai * u2 for ai in a[:100]) + u1
    J = jacobian(sm.Matrix([e]), [u1, u2])
    assert J[0, 0] == sm.Add(*a) + 1 and J[0, 1] == sm.Add(*a[:100])


@given(expressions)
def test_exact_time_derivative_is_sympys_expression(e):
    # Not only equal in value: the very expression, term for term, so a
    # formulation can switch to it without changing its operation counts.
    assert time_derivative(e, t, exact=True) == e.diff(t)


@given(expressions)
def test_derivative_by_a_symbol_is_sympys_expression(e):
    # By each plain symbol the expression holds (and one it does not).
    for s in (x, y, sm.Symbol("absent")):
        assert derivative(e, s) == e.diff(s)


def test_derivative_by_a_symbol_keeps_a_sign_on_its_sum():
    # The product rule's term -1 * (sum) * sin(y) is one Mul, not -(sum)
    # distributed first: by a symbol and by time alike (sympy's
    # Mul._eval_derivative_n_times), the case the pair-by-pair product
    # got wrong by time.
    e = sm.Mul(-1, x * y + x**2 * q1, sm.sin(y))
    assert derivative(e, x) == e.diff(x)
    assert str(derivative(e, x)).startswith("-(")
    assert time_derivative(e, x, exact=True) == e.diff(x)
    g = x - (x + y) * q1
    assert time_derivative(g, t, exact=True) == g.diff(t)
    assert str(g.diff(t)).startswith("-(")
    h = sm.Mul(-1, t * y + t**2 * q1, sm.sin(q1))
    assert time_derivative(h, t, exact=True) == h.diff(t)


def test_exact_time_derivative_keeps_numbers_out_of_sums():
    # The case that differs in the default form: sympy keeps 2*b*b' for
    # d/dt b**2 unexpanded where 2*(sum) would be distributed.
    b = x * q1 - y
    assert time_derivative(b**2, t, exact=True) == (b**2).diff(t)
    assert time_derivative(b**2, t) != (b**2).diff(t)


def test_products_without_zeros_are_sympys():
    from eomcompare.symbolic.frames import cross, dot, matmul

    A = sm.Matrix([[sm.cos(q1), 0, x], [0, 1, 0], [y * q2, 0, sm.sin(q1)]])
    B = sm.Matrix([[x + y, 0], [0, q2], [2, sm.cos(q2) - x]])
    assert matmul(A, B) == A * B
    a, b = sm.Matrix([0, x, q1 + y]), sm.Matrix([sm.sin(q2), 0, 3])
    assert cross(a, b) == a.cross(b)
    assert dot(a, b) == a.dot(b)
    with pytest.raises(sm.ShapeError):
        matmul(A, sm.Matrix([1, 2]))


@given(st.lists(expressions, min_size=6, max_size=6), expressions)
def test_entrywise_arithmetic_is_sympys(entries, s):
    # The same entries as sympy's matrix arithmetic, zero entries (exact
    # and Float) and cancelling sums included.
    from eomcompare.symbolic.dense import matrix
    from eomcompare.symbolic.frames import add, scale, sub

    entries = entries[:4] + [sm.S.Zero, sm.Float(0.0)]
    A = sm.Matrix(3, 2, entries)
    B = sm.Matrix(3, 2, [entries[1], -entries[0], 0, entries[3], x, 2])
    assert matrix(3, 2, entries) == A
    assert add(A, B) == A + B
    assert sub(A, B) == A - B
    assert sub(A, A) == A - A == sm.zeros(3, 2)
    assert scale(s, A) == s * A
    assert scale(-1, B) == -B
    with pytest.raises(sm.ShapeError):
        add(A, A.T)


def test_matrix_keeps_sympys_number_domains():
    # All-integer or all-rational matrices live in sympy's exact number
    # domains; expressions in its raw domain: the same representation.
    from eomcompare.symbolic.dense import entries, matrix

    for flat in ([1, 2, 0, 3], [sm.Rational(1, 2), 0, 1, 2], [x, 0, sm.Float(0.0), 1]):
        flat = [sm.sympify(e) for e in flat]
        ours, ref = matrix(2, 2, flat), sm.Matrix(2, 2, flat)
        assert ours == ref and type(ours) is type(ref)
        assert ours._rep.domain == ref._rep.domain
        assert entries(ours) == flat
    with pytest.raises(ValueError):
        matrix(2, 2, [x])


@given(st.lists(expressions, min_size=6, max_size=6))
def test_linear_split_is_jacobian_and_xreplace(c):
    # Expressions linear in a and b, the variables nested in sums and
    # products: coefficients equal sympy's jacobian, and the rest is the
    # very expression xreplace gives.
    from eomcompare.symbolic.calculus import linear_split

    a, b = sm.Symbol("a"), q2.diff(t, 2)
    exprs = [
        c[0] + c[1] * a + c[2] * (b + c[3] * a),
        c[4] * (c[5] + a) * c[0],
        c[2],
        a,
    ]
    got = linear_split(exprs, [a, b])
    assert got is not None
    J, rest = got
    ref = sm.Matrix(exprs).jacobian([a, b])
    assert all(_same(p, r) for p, r in zip(J, ref))
    assert rest == [e.xreplace({a: 0, b: 0}) for e in exprs]
    assert linear_split([a * b + c[0]], [a, b]) is None
    assert linear_split([sm.sin(a)], [a, b]) is None


def test_body_kinematics_without_partials_has_the_same_accelerations():
    from eomcompare.symbolic.frames import body_kinematics
    from eomcompare.systems import get_system

    ms = get_system("double_pendulum")
    qdot, u = dict(ms.kinematics.qdot), list(ms.speeds)
    full, bare = (
        body_kinematics(
            ms.bodies, ms.frame, qdot, u, FrameAlgebra(), speed_rates=True, partials=p
        )
        for p in (True, False)
    )
    for f, b in zip(full, bare):
        assert b.a == f.a and b.alpha == f.alpha and b.w == f.w
        assert f.vr is not None and b.vr is None and b.v is None
        assert b.wr is None


@given(expressions)
def test_time_derivative_with_rates_is_sympys_then_xreplace(e):
    # The rates replaced as the derivative is formed give sympy's
    # derivative with the rates replaced afterwards, node for node (the
    # expressions hold q2, u2 but not their rates).
    rates = {q2.diff(t): -x * u2, u2.diff(t): sm.S.Zero}
    assert not any(e.has(k) for k in rates)
    ours = time_derivative(e, t, exact=True, rates=rates)
    assert ours == e.diff(t).xreplace(rates)
    # A sum would meet the product rule's numbers first: refused.
    with pytest.raises(ValueError, match="sums"):
        time_derivative(e, t, exact=True, rates={q2.diff(t): u2 + x})
