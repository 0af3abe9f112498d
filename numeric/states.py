"""The numeric half of a declaration: numbers that satisfy its constraints.

A :class:`~eomcompare.systems.MechanicalSystem` is a symbolic declaration; this module
evaluates it: constraint residuals, Newton's method on the holonomic
constraints, dependent speeds from the velocity constraints, consistent
initial and random states, kinetic and potential energy, and the numeric
checks of :meth:`~eomcompare.systems.MechanicalSystem.validate`.  The
declaration's ``states`` attribute is the one way in, built on first read
(``ms.states.random_state(seed=0)``).

Nothing here imports ``systems``: a :class:`SystemStates` reads the
declaration through its attributes.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.plain import plain_replacements, to_plain
from eomcompare.symbolic.types import ArrayLike, FloatArray, ParameterValues, State

if TYPE_CHECKING:
    from eomcompare.systems.base import MechanicalSystem

__all__ = ["SystemStates", "ConstraintError"]

t = me.dynamicsymbols._t


class ConstraintError(ValueError):
    """A state or configuration cannot satisfy the constraints."""


class SystemStates:
    """Numbers from one declaration.

    Parameters
    ----------
    system : MechanicalSystem
    """

    def __init__(self, system: MechanicalSystem) -> None:
        self.system = system

    def __repr__(self) -> str:
        return f"SystemStates({self.system.name!r})"

    @cached_property
    def _n_speeds(self) -> int:
        # Read once, as the constraint functions are: the declaration's
        # speeds are rebuilt as a matrix on every read.
        return len(self.system.speeds)

    @cached_property
    def _constraint_functions(self):
        """Lambdified constraint functions with parameters as an argument."""
        ms = self.system
        q = list(ms.coordinates)
        u = list(ms.speeds)
        p = list(ms.parameters)
        rep, s = plain_replacements(q, u)
        qs, us, qds, ts = s["Q"], s["U"], s["QD"], s["T"]

        def prep(expr):
            return to_plain(expr, rep, ms)

        kin = ms.kinematics
        hol = prep(sm.Matrix(list(ms.holonomic_constraints)))
        nq_dep = len(ms.q_dep)
        dep_syms = qs[len(ms.q_ind) :]
        jac = hol.jacobian(dep_syms) if nq_dep else sm.zeros(0, 0)
        A = prep(kin.velocity_constraint_A)
        b = prep(kin.velocity_constraint_b)
        qdot = prep(sm.Matrix([kin.qdot[qi.diff(t)] for qi in q]))
        args = [ts, list(qs), list(us), p]
        f = {
            "hol": sm.lambdify(args, hol, cse=True),
            "hol_jac": sm.lambdify(args, jac, cse=True),
            "A": sm.lambdify(args, A, cse=True),
            "b": sm.lambdify(args, b, cse=True),
            "qdot": sm.lambdify(args, qdot, cse=True),
        }
        uq = prep(sm.Matrix([kin.u_of_qdot[ui] for ui in u]))
        f["u_of_qdot"] = sm.lambdify([ts, list(qs), list(qds), p], uq, cse=True)
        return f

    @cached_property
    def _speed_rate_function(self):
        """u' in (t, q, q', q''): the time derivative of the speeds as the
        kinematic equations define them from the coordinate rates."""
        ms = self.system
        q = list(ms.coordinates)
        rep, s = plain_replacements(q, accelerations=True)
        uq = sm.Matrix([ms.kinematics.u_of_qdot[ui] for ui in ms.speeds])
        ud = to_plain(uq.diff(t), rep, ms)
        args = [
            s["T"],
            list(s["Q"]),
            list(s["QD"]),
            list(s["QDD"]),
            list(ms.parameters),
        ]
        return sm.lambdify(args, ud, cse=True)

    def speed_rates(
        self,
        t0: float,
        q: ArrayLike,
        qd: ArrayLike,
        qdd: ArrayLike,
        parameters: ParameterValues | None = None,
    ) -> FloatArray:
        """u' of every speed at (t, q, q', q'')."""
        p = self.parameter_vector(parameters)
        return np.asarray(
            self._speed_rate_function(t0, q, qd, qdd, p), dtype=float
        ).ravel()

    @cached_property
    def norm_invariants(self) -> tuple[tuple[int, ...], ...]:
        """Index groups of independent coordinates whose Euclidean norm the
        kinematic equations keep constant: the four of a quaternion
        orientation (``orient_quaternion``) with q' = Q(q) w / 2, or with the
        norm's derivative among the kinematic equations.

        A candidate is the four coordinates of one orientation step; it is
        kept when q . q' vanishes at random (q, u), so the motion stays on
        the sphere of the initial norm and so must every state drawn."""
        from eomcompare.symbolic.frames import connected_frames, declared_orientations

        ms = self.system
        q = list(ms.coordinates)
        index = {qi: i for i, qi in enumerate(q)}
        ind = set(ms.q_ind)
        groups = set()
        for F in connected_frames(ms.frame):
            for dcm in declared_orientations(F).values():
                coords = [x for x in sm.Matrix(dcm).atoms(sm.Function) if x in ind]
                if len(coords) == 4:
                    groups.add(tuple(sorted(index[x] for x in coords)))
        if not groups:
            return ()
        rng = np.random.default_rng(2024)
        p = self.parameter_vector()
        q0 = np.array([ms.initial_state.get(qi, 0.1) for qi in q], float)
        kept = []
        for g in sorted(groups):
            idx = list(g)
            ok = True
            for _ in range(3):
                qs = q0 + rng.uniform(-0.5, 0.5, size=len(q))
                us = rng.uniform(-1.0, 1.0, size=self._n_speeds)
                qd = np.asarray(
                    self._constraint_functions["qdot"](
                        float(rng.uniform(0, 1)), qs, us, p
                    ),
                    dtype=float,
                ).ravel()
                dot = float(qs[idx] @ qd[idx])
                ok &= abs(dot) <= 1e-9 * (1 + np.abs(qs[idx]).max() * np.abs(qd).max())
            if ok:
                kept.append(g)
        return tuple(kept)

    def parameter_vector(self, parameters: ParameterValues | None = None) -> FloatArray:
        """Default parameter values, overridden by ``parameters``.

        Raises
        ------
        ValueError
            For a parameter the declaration does not have, listing the valid
            ones.
        """
        ms = self.system
        values = dict(ms.parameters)
        if parameters and all(k in values for k in parameters):
            # Keyed by the declaration's own symbols (what the integrator
            # passes at every output time): no names to look up.
            for k, v in parameters.items():
                values[k] = float(v)
        elif parameters:
            by_name = {str(k): k for k in values}
            unknown = [
                k for k in parameters if k not in values and str(k) not in by_name
            ]
            if unknown:
                raise ValueError(
                    f"unknown parameters {unknown} for system {ms.name!r}; "
                    f"valid: {sorted(by_name)}"
                )
            for k, v in parameters.items():
                values[k if k in values else by_name[str(k)]] = float(v)
        return np.array([values[k] for k in ms.parameters], dtype=float)

    @cached_property
    def _energy_function(self):
        ms = self.system
        rep, s = plain_replacements(ms.coordinates)
        V = ms.potential_energy if ms.potential_energy is not None else 0
        E = to_plain(sm.Matrix([ms.kinetic_energy(), V]), rep, ms)
        return sm.lambdify(
            [s["T"], list(s["Q"]), list(s["QD"]), list(ms.parameters)], E, cse=True
        )

    def energy(
        self,
        t0: float,
        q: ArrayLike,
        qd: ArrayLike,
        parameters: ParameterValues | None = None,
    ) -> tuple[float, float]:
        """(T, V) at a state; V is 0 where no potential energy is declared."""
        p = self.parameter_vector(parameters)
        T, V = np.asarray(self._energy_function(t0, q, qd, p), float).ravel()
        return float(T), float(V)

    def holonomic_residual(
        self, t0: float, q: ArrayLike, parameters: ParameterValues | None = None
    ) -> FloatArray:
        return self._holonomic(t0, q, self.parameter_vector(parameters))

    def velocity_residual(
        self,
        t0: float,
        q: ArrayLike,
        qd: ArrayLike,
        parameters: ParameterValues | None = None,
    ) -> FloatArray:
        """Residual of every velocity constraint at (t, q, q')."""
        return self._velocity(t0, q, qd, self.parameter_vector(parameters))

    def residuals(
        self,
        T: ArrayLike,
        Q: ArrayLike,
        QD: ArrayLike,
        parameters: ParameterValues | None = None,
    ) -> tuple[FloatArray, FloatArray]:
        """:meth:`holonomic_residual` and :meth:`velocity_residual` at every
        ``(T[k], Q[k], QD[k])`` of a trajectory, as the rows of two arrays:
        the same evaluations, with the parameters looked up once rather
        than at every state."""
        p = self.parameter_vector(parameters)
        hol = [self._holonomic(t0, q, p) for t0, q in zip(T, Q)]
        vel = [self._velocity(t0, q, qd, p) for t0, q, qd in zip(T, Q, QD)]
        n = len(hol)
        return np.array(hol).reshape(n, -1), np.array(vel).reshape(n, -1)

    def _holonomic(self, t0: float, q: ArrayLike, p: FloatArray) -> FloatArray:
        """The holonomic residual at (t, q), the parameters as a vector."""
        u = np.zeros(self._n_speeds)
        return np.asarray(
            self._constraint_functions["hol"](t0, q, u, p), dtype=float
        ).ravel()

    def _velocity(
        self, t0: float, q: ArrayLike, qd: ArrayLike, p: FloatArray
    ) -> FloatArray:
        """The velocity constraints' residual at (t, q, q'), the parameters
        as a vector."""
        f = self._constraint_functions
        u = np.asarray(f["u_of_qdot"](t0, q, qd, p), dtype=float).ravel()
        A = np.asarray(f["A"](t0, q, u, p), dtype=float).reshape(-1, len(u))
        return A @ u + np.asarray(f["b"](t0, q, u, p), dtype=float).ravel()

    def speeds_from_rates(
        self,
        t0: float,
        q: ArrayLike,
        qd: ArrayLike,
        parameters: ParameterValues | None = None,
    ) -> FloatArray:
        return self._evaluated("u_of_qdot", t0, q, qd, parameters)

    def rates_from_speeds(
        self,
        t0: float,
        q: ArrayLike,
        u: ArrayLike,
        parameters: ParameterValues | None = None,
    ) -> FloatArray:
        return self._evaluated("qdot", t0, q, u, parameters)

    def _evaluated(
        self,
        function: str,
        t0: float,
        q: ArrayLike,
        x: ArrayLike,
        parameters: ParameterValues | None,
    ) -> FloatArray:
        """The lambdified ``function`` of (t, q, x, p) as a flat vector."""
        p = self.parameter_vector(parameters)
        return np.asarray(
            self._constraint_functions[function](t0, q, x, p), dtype=float
        ).ravel()

    def solve_dependent_coordinates(
        self,
        t0: float,
        q_ind: ArrayLike,
        guess: ArrayLike,
        parameters: ParameterValues | None = None,
        tol: float = 1e-13,
        maxiter: int = 50,
    ) -> FloatArray:
        """Newton's method on the holonomic constraints for q_dep.

        Raises
        ------
        ConstraintError
            When Newton does not converge, with the final residual.
        """
        ms = self.system
        nind = len(ms.q_ind)
        if not ms.q_dep:
            return np.asarray(q_ind, dtype=float)
        p = self.parameter_vector(parameters)
        f = self._constraint_functions
        q = np.concatenate([np.asarray(q_ind, float), np.asarray(guess, float)])
        u = np.zeros(len(ms.speeds))
        res = np.inf
        for _ in range(maxiter):
            r = np.asarray(f["hol"](t0, q, u, p), dtype=float).ravel()
            res = np.max(np.abs(r))
            if res < tol:
                return q
            J = np.asarray(f["hol_jac"](t0, q, u, p), dtype=float).reshape(
                len(r), len(q) - nind
            )
            try:
                # Gauss-Newton where redundant constraints outnumber the
                # dependent coordinates (consistent: a zero residual).
                step = (
                    np.linalg.solve(J, -r)
                    if J.shape[0] == J.shape[1]
                    else np.linalg.lstsq(J, -r, rcond=None)[0]
                )
            except np.linalg.LinAlgError:
                break
            q[nind:] += step
            if np.max(np.abs(step)) < tol * (1 + np.max(np.abs(q))):
                r = np.asarray(f["hol"](t0, q, u, p), dtype=float).ravel()
                res = np.max(np.abs(r))
                if res < 1e-10:
                    return q
        raise ConstraintError(
            f"system {ms.name!r}: the holonomic constraints cannot be "
            f"satisfied for q_ind = {np.round(q_ind, 6).tolist()} (Newton "
            f"residual {res:.3g})"
        )

    def solve_dependent_speeds(
        self,
        t0: float,
        q: ArrayLike,
        u_ind: ArrayLike,
        parameters: ParameterValues | None = None,
    ) -> FloatArray:
        """All speeds from the independent ones and the velocity constraints.

        Raises
        ------
        ConstraintError
            At a singular configuration of the velocity constraints.
        """
        ms = self.system
        nu_ind = len(ms.u_ind)
        u = np.concatenate([np.asarray(u_ind, float), np.zeros(len(ms.u_dep))])
        if not ms.u_dep:
            return u
        p = self.parameter_vector(parameters)
        f = self._constraint_functions
        A = np.asarray(f["A"](t0, q, u, p), dtype=float).reshape(-1, len(u))
        b = np.asarray(f["b"](t0, q, u, p), dtype=float).ravel()
        A_ind, A_dep = A[:, :nu_ind], A[:, nu_ind:]
        cond = np.linalg.cond(A_dep)
        if not np.isfinite(cond) or cond > 1e12:
            raise ConstraintError(
                f"system {ms.name!r}: the velocity constraints cannot be "
                f"solved for the dependent speeds at q = "
                f"{np.round(q, 6).tolist()} (singular configuration, "
                f"condition number {cond:.3g})"
            )
        u[nu_ind:] = np.linalg.solve(A_dep, -(A_ind @ u[:nu_ind] + b))
        return u

    def _initial_values(self) -> dict:
        """The declaration's parameters, initial coordinates (0.1 where not
        given) and speeds (0 where not given) at t = 0, for the checks."""
        ms = self.system
        d = dict(ms.parameters)
        for qi in ms.coordinates:
            d[qi] = ms.initial_state.get(qi, 0.1)
        for ui in ms.speeds:
            d[ui] = ms.initial_state.get(ui, 0.0)
        d[t] = 0.0
        return d

    def check_kinematic_equations(self) -> None:
        """The kinematic differential equations solvable for the coordinate
        rates (and, with as many speeds as coordinates, for the speeds) at
        the initial state: their coefficient matrix is not singular there (a
        symbolic determinant is too costly in general).

        Raises
        ------
        ConstraintError
            Naming what they cannot be solved for.
        """
        ms = self.system
        kdes = sm.Matrix(list(ms.kdes))
        qd = list(ms.coordinate_rates)
        num = self._initial_values()
        for what, variables in (
            ("coordinate rates", qd),
            ("speeds", list(ms.speeds)),
        )[: 1 if len(ms.speeds) != len(qd) else 2]:
            K = kdes.jacobian(variables)
            K_n = np.array(K.xreplace(num).evalf(), dtype=float)
            if abs(np.linalg.det(K_n)) < 1e-12:
                raise ConstraintError(
                    f"system {ms.name!r}: the kinematic differential "
                    f"equations cannot be solved for the {what} (singular "
                    f"coefficient matrix at the initial state)"
                )

    def consistent_initial_state(
        self, parameters: ParameterValues | None = None
    ) -> State:
        """(t0, q, q') at the declared initial state, dependent parts solved.

        Raises
        ------
        ConstraintError
            When the declared state violates a constraint (with residual),
            or the dependent coordinates cannot be solved.
        """
        ms = self.system
        t0 = 0.0
        q_ind = np.array([ms.initial_state.get(qi, 0.0) for qi in ms.q_ind])
        given_dep = [qi in ms.initial_state for qi in ms.q_dep]
        guess = np.array([ms.initial_state.get(qi, 0.0) for qi in ms.q_dep])
        if ms.q_dep and all(given_dep):
            q = np.concatenate([q_ind, guess])
            res = self.holonomic_residual(t0, q, parameters)
            if np.max(np.abs(res)) > 1e-8:
                raise ConstraintError(
                    f"system {ms.name!r}: the initial state violates the "
                    f"holonomic constraints (residual {res.tolist()})"
                )
        else:
            q = self._solve_initial_dependent(t0, q_ind, guess, given_dep, parameters)
        u_ind = np.array([ms.initial_state.get(ui, 0.0) for ui in ms.u_ind])
        u = self.solve_dependent_speeds(t0, q, u_ind, parameters)
        if ms.u_dep and all(ui in ms.initial_state for ui in ms.u_dep):
            given = np.array([ms.initial_state[ui] for ui in ms.u_dep])
            diff = given - u[len(ms.u_ind) :]
            if np.max(np.abs(diff)) > 1e-8:
                raise ConstraintError(
                    f"system {ms.name!r}: the initial state violates the "
                    f"velocity constraints (dependent speeds given "
                    f"{given.tolist()}, constraints require "
                    f"{u[len(ms.u_ind) :].tolist()})"
                )
        qd = self.rates_from_speeds(t0, q, u, parameters)
        return t0, q, qd

    def _solve_initial_dependent(
        self,
        t0: float,
        q_ind: FloatArray,
        guess: FloatArray,
        given: list[bool],
        parameters: ParameterValues | None,
    ) -> FloatArray:
        """The dependent coordinates at the initial state, by Newton from the
        given ones and, for those left out, from several starting points:
        0 first, then 1, -1 and a few seeded random points.  Starting at 0
        alone fails where 0 is a critical point of the constraints (the
        unit norm of a quaternion with its scalar part dependent)."""
        ms = self.system
        missing = ~np.array(given, dtype=bool)
        rng = np.random.default_rng(0)
        starts = [0.0, 1.0, -1.0] + [
            rng.uniform(-2.0, 2.0, size=len(guess)) for _ in range(3)
        ]
        last = None
        for start in starts:
            trial = guess.copy()
            trial[missing] = np.broadcast_to(start, guess.shape)[missing]
            try:
                return self.solve_dependent_coordinates(t0, q_ind, trial, parameters)
            except ConstraintError as exc:
                last = exc
        left_out = [qi for qi, g in zip(ms.q_dep, given) if not g]
        raise ConstraintError(
            f"system {ms.name!r}: could not solve the dependent coordinates "
            f"{left_out} left out of initial_state from the holonomic "
            f"constraints (Newton from {len(starts)} starting points; {last}): "
            f"either no configuration satisfies the constraints at these "
            f"independent coordinates, or Newton needs a start: give the "
            f"dependent coordinates in initial_state"
        )

    def random_state(
        self, seed: int | None = None, parameters: ParameterValues | None = None
    ) -> State:
        """A random state consistent with every constraint.

        Independent coordinates are drawn uniformly about the initial state
        (half-width ``random_spread``), scaled back to the initial norm where
        the kinematic equations keep a norm (:attr:`norm_invariants`, a
        quaternion's), dependent ones solved by Newton from
        the holonomic constraints, independent speeds drawn uniformly in
        ``[-speed_scale, speed_scale]`` and dependent speeds solved from the
        velocity constraints.  Reproducible from ``seed``.

        Returns
        -------
        t : float
        q : ndarray, all coordinates in ``coordinates`` order
        qd : ndarray, their time derivatives
        """
        ms = self.system
        rng = np.random.default_rng(seed)
        t0 = float(rng.uniform(0.0, 2.0)) if ms.is_rheonomic else 0.0
        _, q0, _ = self.consistent_initial_state(parameters)
        nind = len(ms.q_ind)
        spread = np.array(
            [
                (
                    ms.random_spread.get(qi, 0.5)
                    if isinstance(ms.random_spread, Mapping)
                    else ms.random_spread
                )
                for qi in ms.q_ind
            ],
            dtype=float,
        )
        draw = rng.uniform(-1.0, 1.0, size=nind)
        u_draw = rng.uniform(-1.0, 1.0, size=len(ms.u_ind)) * ms.speed_scale
        last = None
        for shrink in (1.0, 0.5, 0.25, 0.1, 0.03):
            q_ind = q0[:nind] + shrink * spread * draw
            for g in self.norm_invariants:
                # Back onto the sphere the motion keeps (a unit quaternion).
                idx = list(g)
                q_ind[idx] *= np.linalg.norm(q0[idx]) / np.linalg.norm(q_ind[idx])
            try:
                q = self.solve_dependent_coordinates(t0, q_ind, q0[nind:], parameters)
                u = self.solve_dependent_speeds(t0, q, u_draw, parameters)
            except ConstraintError as exc:
                last = exc
                continue
            qd = self.rates_from_speeds(t0, q, u, parameters)
            return t0, q, qd
        raise ConstraintError(
            f"system {ms.name!r}: no consistent random state for seed {seed}: {last}"
        )
