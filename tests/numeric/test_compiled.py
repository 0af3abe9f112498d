"""The compiled (C) backend and the batched right-hand side against the
lambdify backend, on every catalogue system.

The reference is the default numeric contract (sympy's lambdify of the same
equations, solved by numpy's LAPACK): the compiled code prints the same
expressions with sympy's C printer and solves with its own LU, so both must
agree to rounding (1e-12 relative) at every state.
"""

from __future__ import annotations

import functools
import re
import shlex

import numpy as np
import pytest
import sympy as sm
from conftest import cached_eom, cached_system, derivation_group
from scipy.integrate import solve_ivp

from eomcompare.formulations import FORMULATIONS, get_formulation
from eomcompare.numeric import c_code, compiled
from eomcompare.numeric.c_code import c_source, factor_numbers
from eomcompare.numeric.compiled import CompiledModel, CompilerNotFoundError
from eomcompare.numeric.model import (
    LambdifyModel,
    NumericModel,
    SingularConfigurationError,
)
from eomcompare.symbolic.calculus import symmetric_from_lower
from eomcompare.systems import CATALOGUE, get_system, system_facts

RTOL = 1e-12
# A second formulation with other unknowns (multipliers) and other states.
SECOND = "lagrange"


def close(a, b, rtol=RTOL):
    """Agreement relative to the size of the reference vector."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape
    scale = max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)
    err = float(np.max(np.abs(a - b))) if b.size else 0.0
    assert err <= rtol * scale, f"max difference {err:.3g} (scale {scale:.3g})"


# Derivations of these take tens of seconds.
HEAVY = {s for s in CATALOGUE if system_facts(s).heavy}


def _cases(formulation, slow=False):
    out = []
    cls = FORMULATIONS[formulation]
    # Building every declaration to ask costs seconds at collection (in
    # every xdist worker); a formulation that handles every kind of system
    # refuses none.
    handles_all = (
        cls.handles_holonomic
        and cls.handles_nonholonomic
        and cls.handles_rheonomic
        and not cls.needs_dependent_solutions
    )
    # Systems with an independent oracle have their own tests against it.
    for name in (s for s in CATALOGUE if system_facts(s).oracle is None):
        form = get_formulation(formulation)
        try:
            if not handles_all:
                form.check_supported(cached_system(name))
        except ValueError:
            continue  # refused by the formulation: no equations to compare
        marks = [pytest.mark.slow] if slow or name in HEAVY else []
        if name in HEAVY:
            marks.append(derivation_group(name, formulation))
        out.append(
            pytest.param(formulation, name, id=f"{formulation}-{name}", marks=marks)
        )
    return out


CASES = _cases("kane") + _cases(SECOND, slow=True)


@functools.cache
def models(formulation, name):
    eom = cached_eom(formulation, name)
    return eom, eom.numeric(), eom.numeric(backend="c")


def states(eom, lam, k=3):
    out = []
    for seed in range(k):
        t0, q, qd = eom.system.states.random_state(seed=seed)
        out.append((t0, q, qd, lam.state_from(q, qd, t0)))
    return out


@pytest.mark.parametrize("formulation, name", CASES)
def test_compiled_agrees_with_lambdify(formulation, name):
    eom, lam, cm = models(formulation, name)
    assert isinstance(cm, CompiledModel) and isinstance(cm, NumericModel)
    for t0, q, qd, x in states(eom, lam):
        close(cm.state_from(q, qd, t0), x)
        for a, b in zip(cm.coordinates_from(x, t0), lam.coordinates_from(x, t0)):
            close(a, b)
        for a, b in zip(
            cm.mass_matrix_and_forcing(t0, x), lam.mass_matrix_and_forcing(t0, x)
        ):
            close(a, b)
        close(cm.rhs(t0, x), lam.rhs(t0, x))
        close(
            cm.coordinate_accelerations(t0, q, qd),
            lam.coordinate_accelerations(t0, q, qd),
        )
        if "forces" in lam._f:
            fc, fl = cm.constraint_forces(t0, q, qd), lam.constraint_forces(t0, q, qd)
            assert list(fc) == list(fl)
            close(list(fc.values()), list(fl.values()))


@pytest.mark.parametrize("formulation, name", CASES)
def test_batch_agrees_with_single_states(formulation, name):
    eom, lam, cm = models(formulation, name)
    st = states(eom, lam, k=4)
    X = np.array([s[3] for s in st])
    T = np.array([s[0] + 0.1 * i for i, s in enumerate(st)])
    t_one = st[0][0]
    expect_one = np.array([lam.rhs(t_one, x) for x in X])
    expect_each = np.array([lam.rhs(ti, x) for ti, x in zip(T, X)])
    for model in (lam, cm):
        got = model.rhs_batch(t_one, X)
        assert got.shape == X.shape
        close(got, expect_one)
        close(model.rhs_batch(T, X), expect_each)


def test_fresh_output_arrays():
    eom, lam, cm = models("kane", "double_pendulum")
    (t0, _, _, x1), (t1, _, _, x2) = states(eom, lam, k=2)
    for model in (lam, cm):
        a = model.rhs(t0, x1)
        keep = a.copy()
        b = model.rhs(t1, x2)
        assert not np.shares_memory(a, b)
        np.testing.assert_array_equal(a, keep)
        A = model.rhs_batch(t0, np.array([x1, x2]))
        B = model.rhs_batch(t0, np.array([x2, x1]))
        assert not np.shares_memory(A, B)
        np.testing.assert_array_equal(A[0], keep)


def test_solve_ivp_same_path_as_lambdify():
    # RK45 keeps references to earlier derivatives across rejected steps:
    # an output array reused between calls changes the step sequence.
    eom, lam, cm = models("kane", "double_pendulum")
    t0, q, qd, x = states(eom, lam, k=1)[0]
    runs = [
        solve_ivp(m.rhs, (t0, t0 + 2.0), x, method="RK45", rtol=1e-9, atol=1e-9)
        for m in (lam, cm)
    ]
    assert runs[0].nfev == runs[1].nfev
    close(runs[1].y[:, -1], runs[0].y[:, -1], rtol=1e-9)


def test_parameters_are_runtime_arguments(tmp_path):
    eom = cached_eom("kane", "double_pendulum")
    p = {sym: 2.0 * v for sym, v in eom.system.parameters.items()}
    a = eom.numeric(backend="c", cache_dir=tmp_path)
    b = eom.numeric(p, backend="c", cache_dir=tmp_path)
    assert a._module is b._module  # one compiled module for both
    t0, q, qd = eom.system.states.random_state(seed=3)
    x = a.state_from(q, qd, t0)
    close(b.rhs(t0, x), eom.numeric(p).rhs(t0, x))
    close(a.rhs(t0, x), eom.numeric().rhs(t0, x))
    with pytest.raises(ValueError, match="parameter values expected"):
        a.p = [1.0]


def test_disk_cache_keyed_by_source(tmp_path, monkeypatch):
    # Two derivations of the same system give the same source and so one
    # file; another system another file.  The files are loaded, not rebuilt,
    # by a process that has not loaded them yet.
    e1 = get_formulation("kane", count_ops=False).derive(
        get_system("n_link_pendulum", n=1)
    )
    e2 = get_formulation("kane", count_ops=False).derive(
        get_system("n_link_pendulum", n=1)
    )
    assert c_source(e1)[0] == c_source(e2)[0]
    e3 = cached_eom("kane", "rotating_tube")
    monkeypatch.setattr(compiled, "_LOADED", {})
    m1 = CompiledModel(e1, cache_dir=tmp_path)
    files = sorted(p.name for p in tmp_path.glob("_eomc_*.c"))
    assert len(files) == 1 and re.fullmatch(r"_eomc_[0-9a-f]{32}\.c", files[0])
    CompiledModel(e3, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("_eomc_*.c"))) == 2
    monkeypatch.setattr(compiled, "_LOADED", {})
    m2 = CompiledModel(e2, cache_dir=tmp_path)
    assert m1.compile_seconds > 0 and m2.compile_seconds == 0
    assert len(list(tmp_path.glob("_eomc_*.c"))) == 2
    assert not list(tmp_path.glob("build-*"))  # build directories removed
    # The equations compile without the Python headers; the one extension
    # that calls them is built once for both systems.
    for src in tmp_path.glob("_eomc_*.c"):
        assert "Python.h" not in src.read_text()
    assert len(list(tmp_path.glob("_eomcall_*.so"))) == 1
    t0, q, qd = e1.system.states.random_state(seed=0)
    x = m1.state_from(q, qd, t0)
    close(m2.rhs(t0, x), e1.numeric().rhs(t0, x))


def _recording_compiler(monkeypatch):
    """The compiler command lines of the builds that follow."""
    commands = []
    run = compiled._run_compiler

    def record(cmd, cwd):
        commands.append(list(cmd))
        return run(cmd, cwd)

    monkeypatch.setattr(compiled, "_run_compiler", record)
    return commands


def test_native_instructions_where_the_compiler_takes_them(tmp_path, monkeypatch):
    eom = cached_eom("kane", "double_pendulum")
    t0, q, qd = eom.system.states.random_state(seed=2)
    reference = eom.numeric().coordinate_accelerations(t0, q, qd)
    real = compiled.find_compiler()
    # A compiler that refuses -march=native (as one for an architecture
    # without it would): the build goes on without it.
    refusing = tmp_path / "cc-refusing"
    refusing.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do [ "$a" = -march=native ] && '
        "{ echo 'unknown option' >&2; exit 1; }; done\n"
        f'exec {shlex.join(real)} "$@"\n'
    )
    refusing.chmod(0o755)
    assert compiled.native_cflags((str(refusing),)) == ()
    commands = _recording_compiler(monkeypatch)
    monkeypatch.setattr(compiled, "_LOADED", {})
    plain = eom.numeric(backend="c", compiler=str(refusing), cache_dir=tmp_path)
    library = [c for c in commands if any(a.endswith(".so") for a in c)]
    assert library and all("-march=native" not in c for c in library)
    close(plain.coordinate_accelerations(t0, q, qd), reference)
    # The machine's own compiler: with the flag exactly when it takes it.
    native = compiled.native_cflags(tuple(real))
    commands.clear()
    monkeypatch.setattr(compiled, "_LOADED", {})
    first = eom.numeric(backend="c", cache_dir=tmp_path)
    built = [c for c in commands if str(tmp_path) in " ".join(c)]
    assert built and all(("-march=native" in c) == bool(native) for c in built)
    close(first.coordinate_accelerations(t0, q, qd), reference)
    if native:
        # A library for this processor's instructions is not handed to
        # another processor sharing the cache directory.
        monkeypatch.setattr(compiled, "_LOADED", {})
        monkeypatch.setattr(compiled, "_processor_fingerprint", lambda: "another")
        other = eom.numeric(backend="c", cache_dir=tmp_path)
        assert other.compile_seconds > 0 and first.compile_seconds > 0
        assert len(list(tmp_path.glob("_eomc_*.so"))) == 3


def test_singular_mass_matrix_raises_like_lambdify():
    # With every mass zero the mass matrix is zero: no solution exists.
    eom = cached_eom("kane", "n_link_pendulum", (("n", 2),))
    zero = {s: 0.0 for s in eom.system.parameters if str(s).startswith("m")}
    cm, lam = eom.numeric(zero, backend="c"), eom.numeric(zero)
    x = np.array([0.3, 0.2, 0.0, 0.0])
    for model in (lam, cm):
        with pytest.raises(SingularConfigurationError, match="singular"):
            model.rhs(0.0, x)
        with pytest.raises(SingularConfigurationError, match="singular"):
            model.rhs_batch(0.0, np.array([x, x]))


def test_wrong_shapes_are_refused():
    eom, lam, cm = models("kane", "double_pendulum")
    for model in (lam, cm):
        with pytest.raises(ValueError, match=r"shape \(k, 4\)"):
            model.rhs_batch(0.0, np.zeros(4))
        with pytest.raises(ValueError, match="t0"):
            model.rhs_batch(np.zeros(3), np.zeros((2, 4)))
    with pytest.raises(ValueError, match="4 entries"):
        cm.rhs(0.0, np.zeros(3))
    # Non-float and strided input is converted, not reinterpreted.
    X = np.zeros((4, 8))
    X[:, ::2] = [[0, 1, 0, 0]] * 4
    close(cm.rhs(0.0, X[0, ::2]), lam.rhs(0.0, [0.0, 1.0, 0.0, 0.0]))
    close(cm.rhs(0.0, [0, 1, 0, 0]), lam.rhs(0.0, [0.0, 1.0, 0.0, 0.0]))


def test_missing_compiler_is_named(monkeypatch):
    eom = cached_eom("kane", "double_pendulum")
    missing = "/nonexistent/bin/cc-missing"
    monkeypatch.setenv("CC", missing)
    with pytest.raises(CompilerNotFoundError, match=re.escape(missing)) as info:
        eom.numeric(backend="c")
    assert "lambdify" in str(info.value)
    with pytest.warns(RuntimeWarning, match="not available.*cc-missing"):
        model = eom.numeric(backend="auto")
    assert type(model) is LambdifyModel
    t0, q, qd = eom.system.states.random_state(seed=0)
    assert model.coordinate_accelerations(t0, q, qd).shape == (2,)
    # The default never needs a compiler.
    assert type(eom.numeric()) is LambdifyModel


def test_backend_names_are_checked():
    eom = cached_eom("kane", "double_pendulum")
    with pytest.raises(ValueError, match=r"\['lambdify', 'c', 'auto'\]"):
        eom.numeric(backend="fortran")
    with pytest.raises(TypeError, match="no options"):
        eom.numeric(backend="lambdify", cflags=["-O3"])


def test_evaluations_are_counted_once_whatever_the_backend(monkeypatch):
    """The contract's methods live in NumericModel: a backend supplies the
    evaluations only, and rhs counts each call once (a batch of k: k)."""
    from eomcompare.numeric import backends

    eom = cached_eom("kane", "double_pendulum")
    lam = eom.numeric()
    calls = []

    class Delegating(NumericModel):
        """A backend written from the documented evaluations alone."""

        backend = "delegating"

        def _mass_matrix_and_forcing(self, t0, x):
            calls.append("Mf")
            return lam._mass_matrix_and_forcing(t0, x)

        def _rates(self, t0, x, z):
            return lam._rates(t0, x, z)

        def _state(self, t0, q, qd):
            return lam._state(t0, q, qd)

        def _coordinates(self, t0, x):
            return lam._coordinates(t0, x)

        def _accelerations(self, t0, x, z):
            return lam._accelerations(t0, x, z)

        def _rhs_batch(self, T, X):
            return np.array([self._rhs(T, x) for x in X])

    monkeypatch.setitem(backends.BACKENDS, "delegating", Delegating)
    models_ = [lam, eom.numeric(backend="delegating")]
    try:
        models_.append(eom.numeric(backend="c"))
    except CompilerNotFoundError:
        pass  # the two others still make the point
    t0, q, qd = eom.system.states.random_state(seed=1)
    x = lam.state_from(q, qd, t0)
    expected = lam.rhs(t0, x)
    for m in models_:
        m.nfev = 0
        close(m.rhs(t0, x), expected)
        m.rhs_batch(t0, np.array([x, x, x]))
        m.coordinate_accelerations(t0, q, qd)
        m.mass_matrix_and_forcing(t0, x)
        assert m.nfev == 4, type(m).__name__
    assert "Mf" in calls  # the base solved through the backend's M and f
    with pytest.raises(ValueError, match="asks for no constraint forces"):
        models_[1].constraint_forces(t0, q, qd)


# ----------------------------------------------------------------------
# The solve: LDL^T on a symmetric mass matrix, LU for the others
# ----------------------------------------------------------------------
def test_symmetric_as_written_is_structural():
    x = sm.Symbol("x")
    assert c_code.is_structurally_symmetric(sm.Matrix([[1, x], [x, 2]]))
    # Equal in value, written differently: not symmetric for the backend,
    # which then evaluates the whole matrix and solves by LU.
    assert not c_code.is_structurally_symmetric(
        sm.Matrix([[1, (x + 1) ** 2], [x**2 + 2 * x + 1, 1]])
    )
    assert not c_code.is_structurally_symmetric(sm.Matrix([[1, 2, 3], [2, 1, 3]]))
    assert symmetric_from_lower(sm.Matrix([[1, 5], [2, 3]])) == sm.Matrix(
        [[1, 2], [2, 3]]
    )
    with pytest.raises(ValueError, match="square"):
        symmetric_from_lower(sm.Matrix([[1, 2, 3], [2, 1, 3]]))


def _shared_graph(depth, last):
    """(e + x)(e + y) nested ``depth`` times: a graph of 3 nodes a level,
    a tree of 2**depth paths."""
    x, y = sm.symbols("x y")
    e = x
    for _ in range(depth - 1):
        e = (e + x) * (e + y)
    return (e + x) * (e + last)


def test_mirrored_entries_compared_once_per_pair_of_subtrees():
    from sympy.core.cache import clear_cache

    y, z = sm.symbols("y z")
    depth = 40
    a = _shared_graph(depth, y)
    clear_cache()  # the second copy made of distinct objects
    b = _shared_graph(depth, y)
    clear_cache()
    c = _shared_graph(depth, z)  # differs in one leaf
    assert a is not b
    memo = {}
    # sympy's == would walk 2**40 paths here.
    assert c_code.same_expression(a, b, memo)
    assert len(memo) <= 4 * depth
    assert not c_code.same_expression(a, c)
    M = sm.Matrix([[1, a], [b, 2]])
    assert c_code.is_structurally_symmetric(M)
    assert not c_code.is_structurally_symmetric(sm.Matrix([[1, a], [c, 2]]))
    # Leaves and small expressions as sympy's == has them.
    x = sm.Symbol("x")
    pairs = [
        (x, sm.Symbol("x")),
        (x, sm.Symbol("x", positive=True)),
        (sm.Float(2.0), sm.Integer(2)),
        (sm.Rational(1, 2), sm.Float(0.5)),
        (sm.sin(x) * 2, 2 * sm.sin(x)),
        (x + 1, 1 + x),
        ((x + 1) ** 2, x**2 + 2 * x + 1),
    ]
    for p, q in pairs:
        assert c_code.same_expression(p, q) == (p == q), (p, q)


def _solve_reference(lam, t0, x):
    M, f = lam.mass_matrix_and_forcing(t0, x)
    return np.linalg.solve(M, f)


def _states(eom, lam, n=3):
    """(t, x) at the declaration's random states, seeds 0 .. n - 1."""
    for seed in range(n):
        t0, q, qd = eom.system.states.random_state(seed=seed)
        yield t0, lam.state_from(q, qd, t0)


def _check_solve(cm, lam, t0, x, path):
    """The compiled solve took ``path`` and agrees with numpy's solution
    and with the lambdify backend's rates."""
    z, took = cm.compiled_unknowns(t0, x)
    assert took == path
    close(z, _solve_reference(lam, t0, x))
    close(cm.rhs(t0, x), lam.rhs(t0, x))


@pytest.mark.parametrize(
    "formulation", ["kane", "lagrange", "modified_lagrange", "gibbs_appell"]
)
def test_unconstrained_mass_matrix_is_solved_by_ldlt(formulation):
    # Every own formulation writes the mass matrix of an unconstrained
    # system symmetric (Kane's sums by construction, the others as the
    # Hessian of an energy, by its lower triangle): the backend evaluates
    # one triangle and solves by LDL^T, to the same numbers as numpy's LU.
    eom = cached_eom(formulation, "n_link_pendulum", (("n", 3),))
    assert c_code.is_structurally_symmetric(eom.mass_matrix)
    # Rigid bodies with a full inertia (w_r . I w_s written two ways
    # unless the lower triangle is mirrored): a 3-joint arm.
    arm = cached_eom(formulation, "spatial_chain", (("n", 3),))
    assert c_code.is_structurally_symmetric(arm.mass_matrix)
    src, info = c_source(eom)
    assert info["symmetric"] and "#define EOM_SYMMETRIC 1" in src
    # Only the lower triangle is assigned by the solve's evaluation.
    mf = src[src.index("static void eom_mf_solve") : src.index("static void eom_mf(")]
    assigned = set(re.findall(r"\bM\[(\d+)\] =", mf))
    assert assigned == {str(i * 3 + j) for i in range(3) for j in range(i + 1)}
    lam, cm = eom.numeric(), eom.numeric(backend="c")
    for t0, x in _states(eom, lam):
        _check_solve(cm, lam, t0, x, "ldlt")
        # The full matrix is still served to callers of M and f.
        close(
            cm.mass_matrix_and_forcing(t0, x)[0], lam.mass_matrix_and_forcing(t0, x)[0]
        )


@pytest.mark.parametrize(
    "masses",
    [
        (-1.0, -1.0),  # negative definite: the first pivot is negative
        (3.0, -1.0),  # indefinite: the first pivot positive, the second not
    ],
)
def test_not_positive_definite_falls_back_to_lu(masses):
    # Negative masses make the (symmetric) mass matrix of a 2-link pendulum
    # not positive definite: LDL^T meets a pivot that is not positive and
    # the same call solves by LU with partial pivoting instead, from the
    # untouched matrix, to numpy's solution.
    eom = cached_eom("kane", "n_link_pendulum", (("n", 2),))
    p = dict(eom.system.parameters)
    by_name = {str(s): s for s in p}
    p.update({by_name["m1"]: masses[0], by_name["m2"]: masses[1]})
    lam, cm = eom.numeric(p), eom.numeric(p, backend="c")
    for t0, x in _states(eom, lam):
        M = lam.mass_matrix_and_forcing(t0, x)[0]
        assert np.min(np.linalg.eigvalsh(M)) < 0  # the case is what it claims
        _check_solve(cm, lam, t0, x, "lu")
        close(cm.rhs_batch(t0, np.array([x, x]))[1], lam.rhs(t0, x))


def test_constrained_mass_matrix_is_solved_by_lu():
    # Lagrange's augmented matrix [[M, -C^T], [C, 0]] is not symmetric:
    # the whole matrix is evaluated and solved by LU.
    eom = cached_eom("lagrange", "four_bar")
    src, info = c_source(eom)
    assert not info["symmetric"] and "#define EOM_SYMMETRIC 0" in src
    lam, cm = eom.numeric(), eom.numeric(backend="c")
    for t0, x in _states(eom, lam):
        _check_solve(cm, lam, t0, x, "lu")


def test_explicit_form_needs_no_solve():
    eom = get_formulation("kane_articulated", count_ops=False).derive(
        get_system("spatial_chain", n=2)
    )
    lam, cm = eom.numeric(), eom.numeric(backend="c")
    for t0, x in _states(eom, lam, 1):
        _check_solve(cm, lam, t0, x, "none")


def test_factor_numbers_shares_a_multiplication_and_keeps_the_value():
    from sympy.core.parameters import distribute

    from eomcompare.bench.literature_counts import count_ops_literature

    a, b, c, q = sm.symbols("a b c q")
    e = 0.25 * a * sm.sin(q) - 0.25 * b + 0.25 * c**2 + 3 * a - 3 * q + 7 * c + 1
    with distribute(False):
        got = factor_numbers(e)
        # 0.25 and 3 each multiply once; 7 * c is alone; the constant stays.
        assert (
            count_ops_literature([got], hoist=False).mul
            < count_ops_literature([e], hoist=False).mul
        )
        assert got.has(sm.Mul(sm.Float(0.25), a * sm.sin(q) - b + c**2))
        assert got.has(sm.Mul(3, a - q))
    # The same function: equal values at random points.
    rng = np.random.default_rng(0)
    f0, f1 = sm.lambdify((a, b, c, q), e), sm.lambdify((a, b, c, q), got)
    for point in rng.normal(size=(5, 4)):
        assert np.isclose(f0(*point), f1(*point), rtol=1e-14, atol=1e-14)
    # Outside distribute(False) sympy distributes the numbers again.
    assert sm.expand(got - e) == 0


def test_lambdified_functions_carry_no_printed_expression():
    # lambdify prints the expression into the docstring unless told not
    # to; the model's functions are not printed, and compute the same.
    from eomcompare.numeric.model import _cse, generate, plain_parts

    eom = get_formulation("kane").derive(get_system("double_pendulum"))
    fns = generate(eom)
    for name in ("Mf", "rates", "acc", "coords", "state"):
        assert "Matrix" not in (fns[name].__doc__ or ""), name
    p = plain_parts(eom)
    args = [p["T"], list(p["X"]), list(p["P"])]
    printed = sm.lambdify(args, [p["M"], p["f"]], cse=_cse, use_imps=False)
    assert "Matrix" in printed.__doc__  # what the option leaves out
    model = LambdifyModel(eom)
    t0, q, qd = eom.system.states.random_state(seed=1)
    x = model.state_from(q, qd, t0)
    for got, want in zip(fns["Mf"](t0, x, model.p), printed(t0, x, model.p)):
        assert np.array_equal(np.asarray(got, float), np.asarray(want, float))


def test_c_source_empties_sympys_cache_once(monkeypatch):
    # Every change of sympy's distribute setting empties its cache: the
    # functions of a model are built inside one distribute(False), and
    # give the C they gave when each function set it (and emptied the
    # cache) on its own.
    import sympy.core.parameters as parameters

    eom = get_formulation("kane").derive(get_system("rolling_disc"))
    clears = []
    real = parameters.clear_cache
    monkeypatch.setattr(parameters, "clear_cache", lambda: clears.append(real()))
    source, _ = c_source(eom)
    assert 1 <= len(clears) <= 2

    function = c_code._c_function

    def emptied_first(*args, **kwargs):
        real()
        return function(*args, **kwargs)

    monkeypatch.setattr(c_code, "_c_function", emptied_first)
    assert c_source(eom)[0] == source


def test_fast_call_is_the_cffi_call():
    # rhs takes plain float64 vectors by their data pointer (no cffi
    # conversion); it must give what the cffi call of the same C function
    # gives, bit for bit, and leave every other input to that call.
    eom, lam, cm = models("kane", "double_pendulum")
    assert cm._fast_rhs is not None  # numpy's C API is there: the path runs
    for t0, _, _, x in states(eom, lam):
        out = np.empty(4)
        status = cm._c_rhs(
            cm._table, t0, cm._fb("double[]", x), cm._pc, cm._fb("double[]", out)
        )
        assert status == 0
        got = cm.rhs(t0, x)
        assert type(got) is np.ndarray and got.dtype == float and got.flags.owndata
        np.testing.assert_array_equal(got, out)
        # Other dtypes, byte orders and strides are converted, not
        # reinterpreted; an integer time is a time.
        for other in (x.astype(np.float32), x.astype(">f8"), np.repeat(x, 2)[::2]):
            close(cm.rhs(t0, other), lam.rhs(t0, other.astype(float)))
        np.testing.assert_array_equal(cm.rhs(1, x), cm.rhs(1.0, x))
    with pytest.raises(ValueError, match="4 entries"):
        cm.rhs(0.0, np.zeros(5))


def test_parameters_set_later_are_used():
    eom = cached_eom("kane", "double_pendulum")
    cm = eom.numeric(backend="c")
    t0, q, qd = eom.system.states.random_state(seed=4)
    x = cm.state_from(q, qd, t0)
    before = cm.rhs(t0, x)
    # Gravity doubled (all of m, l, g doubled would leave the angles'
    # accelerations as they are).
    p = {
        sym: (2.0 if str(sym) == "g" else 1.0) * v
        for sym, v in eom.system.parameters.items()
    }
    cm.p = eom.system.states.parameter_vector(p)
    after = cm.rhs(t0, x)
    close(after, eom.numeric(p).rhs(t0, x))
    assert np.max(np.abs(after - before)) > 1e-3
