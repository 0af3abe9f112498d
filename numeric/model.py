"""The numeric contract, generated identically for every formulation.

Two formulations agree on a system when :meth:`NumericModel.coordinate_accelerations`
returns the same q'' for the same (t, q, q').
"""

from __future__ import annotations

import math
import time
import types
import weakref
from collections.abc import Mapping

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from symbolic.plain import TIME, plain_replacements, to_plain

__all__ = [
    "NumericModel",
    "LambdifyModel",
    "SingularConfigurationError",
    "generate",
    "generated",
    "plain_symbols",
    "plain_parts",
    "is_equations_of_motion",
]

t = me.dynamicsymbols._t


class SingularConfigurationError(ValueError):
    """The mass matrix cannot be solved at a configuration (e.g. a
    mechanism at a dead point); the message names the configuration."""


def plain_symbols(eom):
    """Replacement of functions of time by plain symbols, derivatives first.

    Returns ``(rep, T, X, Z, Q, QD, P)``: the xreplace dict and the symbol
    lists for time, states, unknowns, coordinates, rates and parameters.
    """
    ms = eom.system
    _, s = plain_replacements(ms.coordinates)
    X = sm.symbols(f"_x0:{len(eom.states)}")
    Z = sm.symbols(f"_z0:{len(eom.unknowns)}")
    P = tuple(ms.parameters)
    return TIME, X, Z, s["Q"], s["QD"], P


def plain_parts(eom) -> dict:
    """Every piece of the numeric contract in plain symbols.

    Returns a dict with the symbol lists ``T, X, Z, Q, QD, P`` (see
    :func:`plain_symbols`) and the matrices ``M, f`` (mass matrix and
    forcing in (T, X, P)), ``R, A`` (state rates and coordinate
    accelerations in (T, X, Z, P)), ``C`` (coordinates and rates in
    (T, X, P)), ``S`` (state in (T, Q, QD, P)) and, when the formulation
    recovers constraint forces, ``F`` (in (T, X, Z, P)) with their names in
    ``forces_names``.  Every backend generates its code from these.
    """
    ms = eom.system
    T, X, Z, Q, QD, P = plain_symbols(eom)
    q = ms.coordinates
    # Keys ordered so derivatives are matched before the functions inside
    # them (xreplace is top-down, but two keys can nest).
    rep = {}
    for zi, s in zip(eom.unknowns, Z):
        rep[zi] = s
    for xi, s in zip(eom.states, X):
        rep[xi] = s
    rep[t] = T
    x_rep = dict(rep)
    qrep, _ = plain_replacements(q)
    memo = {}  # one substitution shared by every piece in x_rep
    parts = {
        "T": T,
        "X": X,
        "Z": Z,
        "Q": Q,
        "QD": QD,
        "P": P,
        "M": to_plain(eom.mass_matrix, x_rep, ms, memo),
        "f": to_plain(eom.forcing, x_rep, ms, memo),
        "R": to_plain(eom.state_rates, x_rep, ms, memo),
        "A": to_plain(eom.accelerations, x_rep, ms, memo),
        "C": to_plain(eom.coordinate_map, x_rep, ms, memo),
        "S": to_plain(eom.state_map, qrep, ms),
    }
    forces = eom.extras.get("constraint_forces")
    if forces:
        names = list(forces)
        parts["F"] = to_plain(sm.Matrix([forces[n] for n in names]), x_rep, ms, memo)
        parts["forces_names"] = names
    return parts


def _cse(exprs):
    # Without sorting the arguments of every subexpression (``ordered``
    # counts the nodes of each tree, shared subtrees at every occurrence:
    # exponential on the composite sums of long chains).
    return sm.cse(exprs, order="none", list=False)


def _lambdify(args, expr):
    """``lambdify`` with cse, not looking for implemented functions (a walk
    of the whole tree that generated equations never need)."""
    return sm.lambdify(args, expr, cse=_cse, use_imps=False)


#: numpy functions lambdify prints, and their ``math`` equivalents: on one
#: state of Python floats the latter are several times faster.  They raise
#: where numpy returns inf or nan (a division by zero, a square root of a
#: negative number), and the caller then evaluates with numpy, whose
#: non-finite result is diagnosed as before.
_MATH_NAMES = {
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "arcsin": math.asin,
    "arccos": math.acos,
    "arctan": math.atan,
    "arctan2": math.atan2,
    "sinh": math.sinh,
    "cosh": math.cosh,
    "tanh": math.tanh,
    "sqrt": math.sqrt,
    "exp": math.exp,
    "log": math.log,
    "hypot": math.hypot,
}

#: What evaluating on Python floats raises where numpy gives inf or nan
#: (TypeError: a negative base to a fractional power makes a complex).
_SCALAR_FAILURES = (ArithmeticError, ValueError, TypeError)


def _scalar_version(fn):
    """``fn``, a lambdified function, with its numpy functions replaced by
    their ``math`` equivalents (see :data:`_MATH_NAMES`)."""
    namespace = dict(fn.__globals__)
    for name, f in _MATH_NAMES.items():
        if name in namespace:
            namespace[name] = f
    return types.FunctionType(
        fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__
    )


def generate(eom) -> dict:
    """Lambdify (with cse) the pieces of the numeric contract."""
    start = time.perf_counter()
    parts = plain_parts(eom)
    T, X, Z, Q, QD, P = (parts[k] for k in ("T", "X", "Z", "Q", "QD", "P"))
    M, f, R, A, C, S = (parts[k] for k in ("M", "f", "R", "A", "C", "S"))
    args_x = [T, list(X), list(P)]
    args_xz = [T, list(X), list(Z), list(P)]
    out = {
        "Mf": _lambdify(args_x, [M, f]),
        "rates": _lambdify(args_xz, R),
        "acc": _lambdify(args_xz, A),
        "coords": _lambdify(args_x, C),
        "state": _lambdify([T, list(Q), list(QD), list(P)], S),
    }
    if "F" in parts:
        out["forces"] = (parts["forces_names"], _lambdify(args_xz, parts["F"]))
    # The integrator's hot path, on one state of Python floats.
    out["scalar"] = {k: _scalar_version(out[k]) for k in ("Mf", "rates")}
    out["seconds"] = time.perf_counter() - start
    return out


_GENERATED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def generated(eom) -> dict:
    """:func:`generate` of ``eom``, once per equations object (kept beside
    it, not in it: the equations are immutable)."""
    got = _GENERATED.get(eom)
    if got is None:
        got = _GENERATED.setdefault(eom, generate(eom))
    return got


def _generate_batch(eom) -> dict:
    """Lambdified mass matrix, forcing and rates as flat lists of entries,
    for states stacked along a leading axis (entries may be scalars)."""
    parts = plain_parts(eom)
    T, X, Z, P = (parts[k] for k in ("T", "X", "Z", "P"))
    return {
        "Mf": _lambdify([T, list(X), list(P)], list(parts["M"]) + list(parts["f"])),
        "rates": _lambdify([T, list(X), list(Z), list(P)], list(parts["R"])),
    }


def is_equations_of_motion(obj) -> bool:
    """True for an ``EquationsOfMotion`` (from ``Formulation.derive``).

    Read by its attributes: this package imports nothing of
    ``formulations``, so that the contract can import the runtime without
    a cycle.
    """
    return all(
        hasattr(obj, a)
        for a in (
            "system",
            "formulation",
            "mass_matrix",
            "forcing",
            "unknowns",
            "states",
            "state_rates",
            "numeric",
        )
    )


class NumericModel:
    """Numeric evaluation of one :class:`EquationsOfMotion`: the contract
    every backend meets (see :mod:`numeric.backends`).

    The public methods are written here once: they check their arguments,
    count right-hand-side evaluations in :attr:`nfev` and solve
    ``M z = f``.  A backend implements the evaluations they call:
    ``_mass_matrix_and_forcing(t, x)``, ``_rates(t, x, z)``,
    ``_state(t, q, qd)``, ``_coordinates(t, x)`` (q and q' stacked),
    ``_accelerations(t, x, z)``, ``_forces(t, x, z)`` with the names in
    ``force_names``, ``_rhs_batch(T, X)`` and, where it has a faster way
    than solving and then evaluating the rates, ``_rhs(t, x)``; and it sets
    :attr:`p` from its ``_set_parameters``.

    Every method returns a fresh array: integrators may keep references to
    earlier results.

    Attributes
    ----------
    eom, system : the equations and their declaration.
    n_states, n_coordinates, n_unknowns : sizes of x, q and z.
    nfev : int
        Right-hand-side evaluations so far (a batch of k states counts k).
    """

    #: The name of the backend in :data:`numeric.backends.BACKENDS`.
    backend: str = ""
    #: Names of the constraint forces the formulation recovers.
    force_names: tuple = ()

    def __init__(self, eom, parameters: Mapping | None = None):
        self.eom = eom
        self.system = eom.system
        self.n_states = len(eom.states)
        self.n_coordinates = len(eom.system.coordinates)
        self.n_unknowns = len(eom.unknowns)
        self.nfev = 0
        self.p = eom.system.parameter_vector(parameters)

    @property
    def p(self) -> np.ndarray:
        """Parameter values in ``system.parameters`` order."""
        return self._p

    @p.setter
    def p(self, value):
        p = np.array(value, dtype=float).ravel()
        if p.shape != (len(self.system.parameters),):
            raise ValueError(
                f"{len(self.system.parameters)} parameter values expected, not {p.size}"
            )
        self._p = p
        self._set_parameters(p)

    def _set_parameters(self, p):
        """Hook: a backend that keeps the parameters in its own form."""

    @property
    def codegen_seconds(self) -> float:
        """Seconds spent generating the backend's code."""
        return float("nan")

    def __repr__(self):
        return (
            f"{type(self).__name__}(system={self.system.name!r}, "
            f"formulation={self.eom.formulation!r}, "
            f"states={self.n_states})"
        )

    # -- argument checks ------------------------------------------------
    @staticmethod
    def _vec(x, n, what):
        x = np.ascontiguousarray(x, dtype=float)
        if x.shape != (n,):
            x = x.ravel()
            if x.shape != (n,):
                raise ValueError(f"{what} must have {n} entries, not {x.size}")
        return x

    def _describe(self, t0, x):
        q, _ = self.coordinates_from(x, t0)
        names = [str(c).replace("(t)", "") for c in self.system.coordinates]
        return ", ".join(f"{n}={v:.6g}" for n, v in zip(names, q))

    # -- the contract ---------------------------------------------------
    def mass_matrix_and_forcing(self, t0, x):
        """``(M, f)`` at (t, x): arrays (n_unknowns, n_unknowns) and
        (n_unknowns,)."""
        return self._mass_matrix_and_forcing(t0, self._vec(x, self.n_states, "x"))

    def solve_unknowns(self, t0, x, check: bool = False) -> np.ndarray:
        """z with M(t, x) z = f(t, x).

        Raises
        ------
        SingularConfigurationError
            When M is singular (or, with ``check``, ill-conditioned beyond
            1e13) at the configuration, naming it.
        """
        M, f = self.mass_matrix_and_forcing(t0, x)
        if not check:
            # The integrator's path: one finiteness test, on the solution
            # (a non-finite M or f gives a non-finite or no solution); the
            # diagnosis below runs only when something is wrong.
            try:
                z = np.linalg.solve(M, f)
            except np.linalg.LinAlgError:
                z = None
            if z is not None and math.isfinite(z.sum()):
                return z
        if not (np.all(np.isfinite(M)) and np.all(np.isfinite(f))):
            raise SingularConfigurationError(
                f"{self.eom.formulation}: the equations of "
                f"{self.system.name!r} are not finite at t={t0:.6g}, "
                f"{self._describe(t0, x)}"
            )
        if check:
            cond = np.linalg.cond(M)
            if not np.isfinite(cond) or cond > 1e13:
                raise SingularConfigurationError(
                    f"{self.eom.formulation}: the mass matrix of "
                    f"{self.system.name!r} is singular at t={t0:.6g}, "
                    f"{self._describe(t0, x)} (condition number {cond:.3g})"
                )
        try:
            z = np.linalg.solve(M, f)
        except np.linalg.LinAlgError:
            raise SingularConfigurationError(
                f"{self.eom.formulation}: the mass matrix of "
                f"{self.system.name!r} is singular at t={t0:.6g}, "
                f"{self._describe(t0, x)}"
            ) from None
        if not np.all(np.isfinite(z)):
            raise SingularConfigurationError(
                f"{self.eom.formulation}: non-finite solution for "
                f"{self.system.name!r} at t={t0:.6g}, {self._describe(t0, x)}"
            )
        return z

    def rhs(self, t0, x) -> np.ndarray:
        """x' = rhs(t, x) for the formulation's own state vector."""
        self.nfev += 1
        return self._rhs(t0, x)

    def _rhs(self, t0, x):
        x = self._vec(x, self.n_states, "x")
        return self._rates(t0, x, self.solve_unknowns(t0, x))

    def rhs_batch(self, t0, X) -> np.ndarray:
        """x' for many states at once, vectorized over the leading axis.

        Parameters
        ----------
        t0 : float or array of shape (k,)
        X : array of shape (k, n_states)

        Returns
        -------
        ndarray of shape (k, n_states), fresh.

        Examples
        --------
        >>> from formulations import get_formulation
        >>> model = get_formulation("kane").derive("double_pendulum").numeric()
        >>> model.rhs_batch(0.0, [[0.1, 0.2, 0.0, 0.0]] * 3).shape
        (3, 4)
        """
        X = np.ascontiguousarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.n_states:
            raise ValueError(f"X must have shape (k, {self.n_states}), not {X.shape}")
        k = X.shape[0]
        T = np.asarray(t0, dtype=float)
        if T.ndim and T.shape != (k,):
            raise ValueError(f"t0 must be a number or have shape ({k},), not {T.shape}")
        self.nfev += k
        if k == 0:
            return np.empty((0, self.n_states))
        return self._rhs_batch(T, X)

    def state_from(self, q, qd, t0=0.0) -> np.ndarray:
        """The formulation's state x from all coordinates and their rates."""
        n = self.n_coordinates
        return self._state(t0, self._vec(q, n, "q"), self._vec(qd, n, "qd"))

    def coordinates_from(self, x, t0=0.0):
        """(q, q') of all coordinates from the formulation's state x."""
        c = self._coordinates(t0, self._vec(x, self.n_states, "x"))
        n = self.n_coordinates
        return c[:n].copy(), c[n:].copy()

    def coordinate_accelerations(self, t0, q, qd) -> np.ndarray:
        """q'' of all coordinates at a state (t, q, q') consistent with the
        constraints."""
        x = self.state_from(q, qd, t0)
        z = self.solve_unknowns(t0, x, check=True)
        return self._accelerations(t0, x, z)

    def multipliers(self, t0, q, qd) -> np.ndarray:
        """Lagrange multipliers at a state, one per constraint row in the
        declaration's order, with ``M q'' = f + C^T lambda``
        (the convention: :mod:`formulations.multipliers`)."""
        idx = self.eom.multiplier_indices()
        if not idx:
            return np.zeros(0)
        x = self.state_from(q, qd, t0)
        z = self.solve_unknowns(t0, x, check=True)
        return np.asarray(z, dtype=float)[idx]

    def constraint_forces(self, t0, q, qd) -> dict:
        """Constraint forces recovered by the formulation, by name.

        Raises
        ------
        UnsupportedSystemError
            When the formulation recovers none of the forces the system asks
            for (the message says why).
        """
        if not self.force_names:
            raise self.eom.constraint_forces_refusal()
        x = self.state_from(q, qd, t0)
        z = self.solve_unknowns(t0, x, check=True)
        return dict(zip(self.force_names, self._forces(t0, x, z).tolist()))


class LambdifyModel(NumericModel):
    """The ``"lambdify"`` backend: numpy code from sympy's lambdify (with
    cse), generated once per equations object; needs no compiler."""

    backend = "lambdify"

    def __init__(self, eom, parameters: Mapping | None = None):
        self._f = generated(eom)
        forces = self._f.get("forces")
        self.force_names = tuple(forces[0]) if forces else ()
        super().__init__(eom, parameters)

    @property
    def codegen_seconds(self) -> float:
        return self._f["seconds"]

    def _set_parameters(self, p):
        self._p_floats = p.tolist()

    def _mass_matrix_and_forcing(self, t0, x):
        n = self.n_unknowns
        try:
            M, f = self._f["scalar"]["Mf"](float(t0), x.tolist(), self._p_floats)
            return (
                np.asarray(M, dtype=float).reshape(n, n),
                np.asarray(f, dtype=float).reshape(n),
            )
        except _SCALAR_FAILURES:
            pass
        M, f = self._f["Mf"](t0, x, self.p)
        return (
            np.asarray(M, dtype=float).reshape(n, n),
            np.asarray(f, dtype=float).reshape(n),
        )

    def _rates(self, t0, x, z):
        try:
            r = self._f["scalar"]["rates"](
                float(t0), x.tolist(), z.tolist(), self._p_floats
            )
            return np.asarray(r, dtype=float).reshape(self.n_states)
        except _SCALAR_FAILURES:
            pass
        return np.asarray(self._f["rates"](t0, x, z, self.p), dtype=float).reshape(
            self.n_states
        )

    def _state(self, t0, q, qd):
        return np.asarray(self._f["state"](t0, q, qd, self.p), dtype=float).reshape(
            self.n_states
        )

    def _coordinates(self, t0, x):
        return np.asarray(self._f["coords"](t0, x, self.p), dtype=float).ravel()

    def _accelerations(self, t0, x, z):
        return np.asarray(self._f["acc"](t0, x, z, self.p), dtype=float).reshape(
            self.n_coordinates
        )

    def _forces(self, t0, x, z):
        return np.asarray(self._f["forces"][1](t0, x, z, self.p), dtype=float).ravel()

    def _rhs_batch(self, T, X):
        k = X.shape[0]
        fns = _BATCH.get(self.eom)
        if fns is None:
            fns = _BATCH.setdefault(self.eom, _generate_batch(self.eom))
        n = self.n_unknowns
        Mf = np.empty((k, n * n + n))
        for j, v in enumerate(fns["Mf"](T, X.T, self.p)):
            Mf[:, j] = v
        M, f = Mf[:, : n * n].reshape(k, n, n), Mf[:, n * n :]
        try:
            Z = np.linalg.solve(M, f[:, :, None])[:, :, 0]
            ok = bool(np.all(np.isfinite(Z)))
        except np.linalg.LinAlgError:
            ok = False
        if not ok:
            # One state at a time, to raise for the state that fails.
            Z = np.array(
                [
                    self.solve_unknowns(T if T.ndim == 0 else T[i], X[i])
                    for i in range(k)
                ]
            ).reshape(k, n)
        out = np.empty((k, self.n_states))
        for j, v in enumerate(fns["rates"](T, X.T, Z.T, self.p)):
            out[:, j] = v
        return out


_BATCH: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
