"""Integration of any formulation's equations with controlled constraint
drift.

Every formulation integrates an index-1 form: the constraints enter only at
acceleration level (differentiated holonomic constraints, or dependent
speeds solved from the velocity constraints), so numerical errors make the
position- and velocity-level residuals drift.  :func:`integrate` offers two
remedies:

``stabilization="projection"`` (default, works for every formulation)
    Unit quaternions (coordinates whose norm the kinematic equations keep,
    ``SystemStates.norm_invariants``) are normalised at each projection,
    their rates made tangent to the unit sphere.  The time span is split into segments of at most ``projection_interval``
    seconds; output times inside a segment are read from the integrator's
    dense output, so they neither cut its steps nor restart it (splitting
    at every one of 200 output times tripled the evaluations of a four-bar
    linkage over 10 s).  At the end of each segment the
    coordinates are projected onto ``Phi(t, q) = 0`` by Gauss-Newton steps
    of minimal Euclidean norm, ``q <- q - Phi_q^+ Phi``, and the rates onto
    the velocity constraints ``B(t, q) q' + c = 0`` by
    ``q' <- q' - B^+ (B q' + c)``; integration restarts from the projected
    state with the last step size, so a restart costs about one extra
    evaluation.
``stabilization="baumgarte"``
    Baumgarte's stabilization written into the equations themselves: the
    model must come from ``get_formulation("lagrange", baumgarte=(alpha,
    beta))``, whose acceleration-level constraint rows carry
    ``-2 alpha Phi' - beta^2 Phi``.  Nothing is projected.
``stabilization=None``
    Plain integration, to observe the drift.

The integrator is a ``solve_ivp`` method or a compiled driver
(:mod:`eomcompare.numeric.drivers`, ``method="odeint"``), which integrates
the same segments with the same projection, its step loop in compiled
code.

States are reported at output times as the integrator reached them, before
any projection, so the residuals in the result are the drift the
trajectory actually shows, not the (near zero) residual after projection.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me
from scipy.integrate import solve_ivp

from eomcompare.symbolic.plain import plain_replacements, to_plain
from eomcompare.symbolic.types import ArrayLike

from .drivers import DRIVERS
from .model import NumericModel, SingularConfigurationError, is_equations_of_motion
from .states import ConstraintError
from .watch import (
    DriverWatch,
    describe_configuration,
    raise_if_singular,
    singular_position,
    singularity_event,
)

__all__ = [
    "integrate",
    "IntegrationResult",
    "project_state",
    "prepare_projection",
    "STABILIZATIONS",
]

t = me.dynamicsymbols._t

#: Valid values of ``stabilization``.
STABILIZATIONS = ("projection", "baumgarte", None)


@dataclass(frozen=True, eq=False)
class IntegrationResult:
    """A trajectory with its constraint residuals.

    Attributes
    ----------
    t : ndarray, shape (n_points,)
    q, qd : ndarray, shape (n_points, n_coordinates)
        All coordinates (``system.coordinates`` order) and their rates.
    holonomic_residual : ndarray, shape (n_points, n_holonomic)
        ``Phi(t, q)`` along the trajectory.
    velocity_residual : ndarray, shape (n_points, n_velocity_constraints)
        Every velocity constraint (differentiated holonomic ones, then
        nonholonomic ones) along the trajectory.
    nfev : int
        Evaluations of the right-hand side (projection costs none).
    success : bool
    message : str
    stabilization : str or None
    n_projections : int
        Projections performed (0 unless ``stabilization="projection"``).
    system, formulation : str
        Names, for reports.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    holonomic_residual: np.ndarray
    velocity_residual: np.ndarray
    nfev: int
    success: bool
    message: str
    stabilization: str | None
    n_projections: int
    system: str
    formulation: str

    @property
    def max_holonomic_residual(self) -> float:
        r = self.holonomic_residual
        return float(np.max(np.abs(r))) if r.size else 0.0

    @property
    def max_velocity_residual(self) -> float:
        r = self.velocity_residual
        return float(np.max(np.abs(r))) if r.size else 0.0

    def __repr__(self):
        return (
            f"IntegrationResult(system={self.system!r}, "
            f"formulation={self.formulation!r}, points={len(self.t)}, "
            f"t_final={self.t[-1]:.6g}, nfev={self.nfev}, "
            f"success={self.success}, stabilization={self.stabilization!r}, "
            f"max_holonomic_residual={self.max_holonomic_residual:.3g}, "
            f"max_velocity_residual={self.max_velocity_residual:.3g})"
        )


# ----------------------------------------------------------------------
# Constraint functions in (t, q, q') for projection
# ----------------------------------------------------------------------
_PROJECTORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _projection_functions(ms):
    """Lambdified Phi, Phi_q, B, c of one declaration (cached per object)."""
    try:
        return _PROJECTORS[ms]
    except KeyError:
        pass
    q = list(ms.coordinates)
    n = len(q)
    rep, s = plain_replacements(q)
    Ts, Q, QD = s["T"], s["Q"], s["QD"]
    P = list(ms.parameters)
    u_map = dict(ms.kinematics.u_of_qdot)

    def plain(exprs):
        return to_plain([sm.sympify(e).xreplace(u_map) for e in exprs], rep, ms)

    hol = plain(ms.holonomic_constraints)
    nonhol = plain(ms.nonholonomic_constraints)
    if len(hol):
        # Explicit time derivative after the prescribed functions are
        # substituted, so it is a plain derivative in _t.
        jac = hol.jacobian(Q)
        vel = jac * sm.Matrix(QD) + hol.xreplace({t: Ts}).diff(Ts)
    else:
        jac = sm.zeros(0, n)
        vel = sm.zeros(0, 1)
    vel = vel.col_join(nonhol) if len(nonhol) else vel
    vel = vel.xreplace({t: Ts})
    hol = hol.xreplace({t: Ts})
    jac = jac.xreplace({t: Ts})
    B = vel.jacobian(QD) if len(vel) else sm.zeros(0, n)
    c = vel.xreplace({s: 0 for s in QD}) if len(vel) else sm.zeros(0, 1)
    args = [Ts, list(Q), P]
    funcs = {
        "n_hol": len(hol),
        "n_vel": len(vel),
        "n": n,
        "phi": sm.lambdify(args, hol, cse=True),
        "phi_q": sm.lambdify(args, jac, cse=True),
        "B": sm.lambdify(args, B, cse=True),
        "c": sm.lambdify(args, c, cse=True),
        # Read once: the declaration's constraint lists are sympy matrices
        # built anew at each access, which for the 40-window four-bar cost
        # more than the rest of a projection.
        "deficient": len(ms.redundant_holonomic_constraints),
    }
    _PROJECTORS[ms] = funcs
    return funcs


def _projects(ms) -> bool:
    """Whether projection has anything to hold on ``ms``'s states."""
    c = ms.holonomic_constraints or ms.nonholonomic_constraints
    return bool(c or ms.states.norm_invariants)


def prepare_projection(system) -> None:
    """Build once the functions :func:`project_state` evaluates for
    ``system`` (none where nothing is projected): processes forked
    afterwards (a system's cases) inherit them."""
    if _projects(system):
        _projection_functions(system)


def project_state(system, t0, q, qd, parameters=None, *, tol=1e-12, maxiter=20):
    """Project (q, q') onto the position and velocity constraints.

    Minimal-norm corrections: Gauss-Newton ``q <- q - Phi_q^+ Phi(t, q)``
    until ``max |Phi| <= tol``, then ``q' <- q' - B^+ (B q' + c)`` with the
    velocity constraints written as ``B(t, q) q' + c(t, q) = 0``, where
    ``max |B q' + c|`` exceeds ``tol`` (a state on the constraints, as the
    equations that solve for the dependent coordinates keep it, costs no
    least-squares solve).

    Parameters
    ----------
    system : MechanicalSystem
    t0 : float
    q, qd : array_like
        All coordinates and their rates.
    parameters : mapping or array_like, optional
        Parameter values (a mapping of overrides, or the full vector in
        ``system.parameters`` order).
    tol : float
        Tolerance on the holonomic and the velocity residual.
    maxiter : int
        Gauss-Newton iterations before giving up.

    Returns
    -------
    q, qd : ndarray
        Projected copies.

    Raises
    ------
    ConstraintError
        When the iteration does not converge (a configuration where the
        constraints cannot be met or their Jacobian is singular), naming it.

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> ms = get_system("four_bar")
    >>> t0, q, qd = ms.states.random_state(seed=0)
    >>> q2, qd2 = project_state(ms, t0, q + 1e-6, qd)
    >>> bool(abs(ms.states.holonomic_residual(t0, q2)).max() < 1e-12)
    True
    """
    f = _projection_functions(system)
    if parameters is None or isinstance(parameters, Mapping):
        p = system.states.parameter_vector(parameters)
    else:
        p = np.asarray(parameters, dtype=float)
    n = f["n"]
    q = np.array(q, dtype=float)
    qd = np.array(qd, dtype=float)
    # Redundant holonomic constraints (Bricard's mechanism): their rows are
    # rank-deficient by that many on the manifold, and only nearly so off
    # it; a least-squares solve at full rank would read the drift's tiny
    # singular values as real and jump the state.
    deficient = f["deficient"]
    solve = _lstsq if not deficient else functools.partial(_truncated, k=deficient)
    if f["n_hol"]:
        res = np.inf
        for _ in range(maxiter):
            r = np.asarray(f["phi"](t0, q, p), dtype=float).ravel()
            res = np.max(np.abs(r))
            if res <= tol:
                break
            J = np.asarray(f["phi_q"](t0, q, p), dtype=float).reshape(-1, n)
            q -= solve(J, r)
        else:
            raise ConstraintError(
                f"system {system.name!r}: cannot project onto the holonomic "
                f"constraints at t={t0:.6g}, {describe_configuration(system, q)} "
                f"(residual {res:.3g} after {maxiter} iterations)"
            )
    if f["n_vel"]:
        B = np.asarray(f["B"](t0, q, p), dtype=float).reshape(-1, n)
        c = np.asarray(f["c"](t0, q, p), dtype=float).ravel()
        r = B @ qd + c
        if r.size and np.max(np.abs(r)) > tol:
            qd -= solve(B, r)
    for g in system.states.norm_invariants:
        # A unit quaternion (the norm its kinematic equations keep): back
        # onto the unit sphere, its rates onto the sphere's tangent plane.
        idx = list(g)
        q[idx] /= np.linalg.norm(q[idx])
        qd[idx] -= (q[idx] @ qd[idx]) * q[idx]
    return q, qd


def _lstsq(A, b):
    return np.linalg.lstsq(A, b, rcond=None)[0]


def _truncated(A, b, k):
    """Minimum-norm least squares with the ``k`` smallest singular values
    taken as zero."""
    U, sv, Vt = np.linalg.svd(A, full_matrices=False)
    r = len(sv) - k
    return Vt[:r].T @ ((U[:, :r].T @ b) / sv[:r])


# ----------------------------------------------------------------------
# Integration
# ----------------------------------------------------------------------
def _resolve_model(eom_or_model, parameters):
    if is_equations_of_motion(eom_or_model):
        return eom_or_model.numeric(parameters)
    if isinstance(eom_or_model, NumericModel):
        if parameters is not None:  # the same backend, other values
            return type(eom_or_model)(eom_or_model.eom, parameters)
        return eom_or_model
    raise TypeError(
        f"eom_or_model must be an EquationsOfMotion or a NumericModel, not "
        f"{type(eom_or_model).__name__}"
    )


def _start(ms, pmap, initial_state, t_final, consistency_tol):
    """``(t0, q0, qd0, t_final)`` of an integration: the declared
    consistent state, or ``initial_state`` checked against the constraints;
    ``t_final`` after ``t0``.  Shared by the ODE and DAE paths."""
    if initial_state is None:
        t0, q0, qd0 = ms.states.consistent_initial_state(pmap)
        q0 = np.asarray(q0, dtype=float)
        qd0 = np.asarray(qd0, dtype=float)
    else:
        try:
            t0, q0, qd0 = initial_state
        except (TypeError, ValueError):
            raise TypeError("initial_state must be a tuple (t0, q, qd)") from None
        t0 = float(t0)
        q0, qd0 = _check_initial(ms, t0, q0, qd0, pmap, consistency_tol)
    t_final = float(t_final)
    if not t_final > t0:
        raise ValueError(f"t_final ({t_final}) must exceed the initial time ({t0})")
    return t0, q0, qd0, t_final


def _check_initial(ms, t0, q, qd, pmap, tol):
    n = len(ms.coordinates)
    q = np.asarray(q, dtype=float).ravel()
    qd = np.asarray(qd, dtype=float).ravel()
    if q.shape != (n,) or qd.shape != (n,):
        raise ValueError(
            f"initial_state of {ms.name!r} needs {n} coordinates and {n} "
            f"rates ({[str(c) for c in ms.coordinates]}), got {q.size} and "
            f"{qd.size}"
        )
    hol = ms.states.holonomic_residual(t0, q, pmap)
    vel = ms.states.velocity_residual(t0, q, qd, pmap)
    bad = []
    if hol.size and np.max(np.abs(hol)) > tol:
        bad.append(f"holonomic residual {np.max(np.abs(hol)):.3g}")
    if vel.size and np.max(np.abs(vel)) > tol:
        bad.append(f"velocity residual {np.max(np.abs(vel)):.3g}")
    if bad:
        raise ConstraintError(
            f"inconsistent initial state of {ms.name!r} at t={t0:.6g}, "
            f"{describe_configuration(ms, q)}: {' and '.join(bad)} exceed {tol:.1g}; "
            f"start from system.states.consistent_initial_state() or "
            f"system.states.random_state(seed), or project with project_state()"
        )
    return q, qd


def integrate(
    eom_or_model: Any,
    t_final: float,
    *,
    method: str = "DOP853",
    rtol: float = 1e-10,
    atol: float = 1e-10,
    t_eval: ArrayLike | None = None,
    stabilization: str | None = "projection",
    initial_state: tuple[float, ArrayLike, ArrayLike] | None = None,
    parameters: Mapping[Any, float] | None = None,
    projection_interval: float = 0.5,
    projection_tol: float = 1e-12,
    consistency_tol: float = 1e-8,
    max_step: float = np.inf,
    singularity_tol: float | None = 1e-3,
    residuals: bool = True,
) -> IntegrationResult:
    """Integrate a formulation's equations of motion from a consistent state.

    Parameters
    ----------
    eom_or_model : EquationsOfMotion or NumericModel
        Any formulation's equations (``get_formulation(name).derive(sys)``)
        or their numeric model.
    t_final : float
        End time; integration starts at the initial state's time.
    method : str
        A ``scipy.integrate.solve_ivp`` method, or a compiled driver of
        :data:`eomcompare.numeric.drivers.DRIVERS`, far cheaper per step
        than solve_ivp: ``"odeint"`` (LSODA stepping in compiled code) or
        ``"dop853"`` (solve_ivp's DOP853, the same steps, its loop in
        compiled code calling a compiled model's right-hand side; solve_ivp's
        ``"DOP853"`` for a model that is not compiled).
        The drivers take no events: with equations that integrate
        dependent coordinates their watch for singular positions checks the
        times they evaluate and return (see ``singularity_tol``).
    rtol, atol : float
        Integrator tolerances.
    t_eval : array_like, optional
        Output times.  Default: every segment boundary (every
        ``projection_interval``), or the integrator's own steps when nothing
        is projected; a driver, which reports no steps, every
        ``projection_interval`` in both cases.
    stabilization : {"projection", "baumgarte", None}
        See the module documentation.  ``"baumgarte"`` needs equations
        derived with ``get_formulation("lagrange", baumgarte=(alpha, beta))``.
    initial_state : (t0, q, qd), optional
        Start here instead of ``system.states.consistent_initial_state()``; must
        satisfy the constraints within ``consistency_tol``.
    parameters : mapping, optional
        Parameter overrides (as in ``system.states.parameter_vector``).
    projection_interval : float
        Longest time between projections (seconds).
    projection_tol : float
        Holonomic residual the projection reaches.
    consistency_tol : float
        Largest constraint residual accepted in ``initial_state``.
    max_step : float
        Passed to ``solve_ivp``.
    singularity_tol : float or None
        For equations that integrate the dependent coordinates (they rely
        on the constraint Jacobian): stop with
        :class:`SingularConfigurationError` where the reciprocal condition
        number of the independent velocity constraint rows (smallest over
        largest singular value of their coefficients of the speeds) falls
        below this, a singular position of the mechanism (the IFToMM A02
        N-four-bar's horizontal position), where the degrees of freedom
        jump and a second branch of motion crosses.  ``None`` integrates
        on, at the risk of leaving the branch silently.  solve_ivp's
        methods check it at their step ends and locate the crossing
        between two; a compiled driver (no event location) checks it at
        the first evaluation of each new time (its attempted step ends)
        and at the states it returns, and names the first time checked
        below it.  Either misses a dip below it that begins and ends
        within one step.
    residuals : bool
        Evaluate the constraint residuals at the output times (default).
        ``False`` leaves ``holonomic_residual`` and ``velocity_residual``
        empty (``n_points`` rows, no columns): a caller timing the solve
        alone over many output times (the IFToMM pendulum's 4,000) does not
        pay for them.

    Returns
    -------
    IntegrationResult

    Raises
    ------
    ConstraintError
        For an initial state that violates the constraints (naming it).
    SingularConfigurationError
        When the equations cannot be solved at a configuration met at the
        start or along the way (e.g. a linkage at a dead point), naming it.
    ValueError
        For an unknown ``stabilization`` or ``"baumgarte"`` without gains.

    Examples
    --------
    >>> from eomcompare.formulations import get_formulation
    >>> from eomcompare.numeric.integrate import integrate
    >>> eom = get_formulation("lagrange").derive("four_bar")
    >>> res = integrate(eom, 1.0)
    >>> res.success, bool(res.max_holonomic_residual < 1e-8)
    (True, True)
    """
    if stabilization not in STABILIZATIONS:
        raise ValueError(
            f"stabilization must be one of {list(STABILIZATIONS)}, not "
            f"{stabilization!r}"
        )
    model = _resolve_model(eom_or_model, parameters)
    eom, ms = model.eom, model.system
    if stabilization == "baumgarte" and not eom.options.get("baumgarte"):
        raise ValueError(
            f"stabilization='baumgarte' needs equations with Baumgarte gains: "
            f"derive them with get_formulation('lagrange', "
            f"baumgarte=(alpha, beta)); {eom.formulation!r} was derived with "
            f"options {dict(eom.options)}"
        )
    if not (isinstance(projection_interval, (int, float)) and projection_interval > 0):
        raise ValueError(
            f"projection_interval must be a positive number, not "
            f"{projection_interval!r}"
        )
    pmap = dict(zip(ms.parameters, model.p))
    t0, q0, qd0, t_final = _start(ms, pmap, initial_state, t_final, consistency_tol)
    # A singular configuration at the start is reported before integrating.
    try:
        model.coordinate_accelerations(t0, q0, qd0)
    except np.linalg.LinAlgError as exc:
        # Non-finite entries (a division by zero in the equations) make the
        # condition number itself fail.
        raise SingularConfigurationError(
            f"{eom.formulation}: the equations of {ms.name!r} cannot be "
            f"evaluated at t={t0:.6g}, {describe_configuration(ms, q0)} ({exc})"
        ) from None

    nfev = [0]
    last = {}
    events = singularity_event(model, singularity_tol)
    driver = DRIVERS.get(method)
    if method == "dop853" and getattr(model, "backend", None) != "c":
        # Its loop calls a compiled right-hand side: the same method, the
        # same steps, through solve_ivp for any other model.
        method, driver = "DOP853", None
    # A driver has no event location: the watch checks the states it
    # evaluates at each new time and the states it returns (DriverWatch).
    watch = DriverWatch(model, events[0]) if driver and events else None

    rhs = model.rhs

    def fun(tt, x):
        nfev[0] += 1
        last["t"], last["x"] = tt, x
        dx = rhs(tt, x)
        # One scalar test per call (the sum of finite entries is finite but
        # for an overflow, which the full test then tells apart); summed as
        # Python floats, which for a small state costs a fraction of a numpy
        # reduction's call.
        if not math.isfinite(sum(dx.tolist())) and not np.all(np.isfinite(dx)):
            q, _ = model.coordinates_from(x, tt)
            raise SingularConfigurationError(
                f"{eom.formulation}: non-finite derivative for {ms.name!r} "
                f"at t={tt:.6g}, {describe_configuration(ms, q)}"
            )
        return dx

    project = stabilization == "projection" and _projects(ms)
    if t_eval is not None:
        t_eval = np.asarray(t_eval, dtype=float).ravel()
        if (
            t_eval.size == 0
            or np.any(np.diff(t_eval) <= 0)
            or t_eval[0] < t0
            or t_eval[-1] > t_final
        ):
            raise ValueError(f"t_eval must be increasing and within [{t0}, {t_final}]")
    n_seg = int(np.ceil((t_final - t0) / projection_interval - 1e-9))
    if project:
        bounds = np.linspace(t0, t_final, n_seg + 1)
    else:
        bounds = np.array([t0, t_final])
    if driver is not None and t_eval is None:
        t_eval = np.linspace(t0, t_final, n_seg + 1)

    x = model.state_from(q0, qd0, t0)
    ts, xs = [], []
    # solve_ivp reports t0 itself only when it chooses the output times.
    if (t_eval is None and project) or (t_eval is not None and t_eval[0] == t0):
        ts.append(t0)
        xs.append(x.copy())
    success, message, first_step = True, "", None
    n_proj = 0
    for a, b in zip(bounds[:-1], bounds[1:]):
        if t_eval is not None:
            inside = t_eval[(t_eval > a) & (t_eval <= b)]
        elif project:
            inside = np.array([b])
        else:
            inside = None
        step = None if first_step is None else min(first_step, b - a)
        if driver is not None:
            sol = driver(
                fun,
                a,
                b,
                x,
                rtol=rtol,
                atol=atol,
                t_out=inside,
                first_step=step,
                max_step=max_step,
                model=model,
                watch=watch,
            )
            if not sol.counted:
                nfev[0] += sol.nfev
            if watch is not None:
                # The states returned, at the output times and the end.
                watch.check_all(sol.t, sol.y.T)
                if sol.x_end is not None:
                    watch.check(b, sol.x_end)
            if not sol.success:
                success, message = False, sol.message
                raise_if_singular(model, sol, last)
                ts.extend(sol.t)
                xs.extend(sol.y.T)
                break
            ts.extend(sol.t)
            xs.extend(sol.y.T)
            x = sol.x_end
            first_step = sol.last_step
            if project:
                q, qd = model.coordinates_from(x, b)
                q, qd = project_state(ms, b, q, qd, model.p, tol=projection_tol)
                x = model.state_from(q, qd, b)
                n_proj += 1
            continue
        sol = solve_ivp(
            fun,
            (a, b),
            x,
            method=method,
            rtol=rtol,
            atol=atol,
            t_eval=inside,
            first_step=step,
            max_step=max_step,
            dense_output=project,
            events=events,
        )
        if events is not None and sol.status == 1:
            te = float(sol.t_events[0][0])
            q, _ = model.coordinates_from(sol.y_events[0][0], te)
            raise singular_position(model, te, q, singularity_tol)
        if not sol.success:
            success, message = False, sol.message
            raise_if_singular(model, sol, last)
            if len(sol.t):
                ts.extend(sol.t)
                xs.extend(sol.y.T)
            break
        if len(sol.t):
            ts.extend(sol.t)
            xs.extend(sol.y.T)
        x = _final_state(sol, b)
        if project:
            if sol.sol is not None and len(sol.sol.ts) > 1:
                # The last step was cut to end the segment; the one before
                # is the integrator's own choice.
                first_step = float(np.max(np.abs(np.diff(sol.sol.ts[-3:]))))
            q, qd = model.coordinates_from(x, b)
            q, qd = project_state(ms, b, q, qd, model.p, tol=projection_tol)
            x = model.state_from(q, qd, b)
            n_proj += 1
    if success:
        message = "The solver successfully reached the end of the integration interval."
    T = np.asarray(ts, dtype=float)
    Xs = np.asarray(xs, dtype=float)
    n = len(ms.coordinates)
    qs = np.empty((len(T), n))
    qds = np.empty((len(T), n))
    for i, (tt, xx) in enumerate(zip(T, Xs)):
        qs[i], qds[i] = model.coordinates_from(xx, tt)
    if not np.all(np.isfinite(qs)) or not np.all(np.isfinite(qds)):
        finite = T[np.isfinite(qs).all(axis=1) & np.isfinite(qds).all(axis=1)]
        after = f" after t={finite[-1]:.6g}" if finite.size else ""
        raise SingularConfigurationError(
            f"{eom.formulation}: the trajectory of {ms.name!r} became non-finite{after}"
        )
    if residuals:
        hol, vel = ms.states.residuals(T, qs, qds, pmap)
    else:
        hol = vel = np.empty((len(T), 0))
    return IntegrationResult(
        t=T,
        q=qs,
        qd=qds,
        holonomic_residual=hol,
        velocity_residual=vel,
        nfev=nfev[0],
        success=success,
        message=message,
        stabilization=stabilization,
        n_projections=n_proj,
        system=ms.name,
        formulation=eom.formulation,
    )


def _final_state(sol, b):
    if sol.sol is not None:
        return np.asarray(sol.sol(b), dtype=float)
    return sol.y[:, -1].copy()
