"""The multiplier form integrated as a differential-algebraic system by
SUNDIALS' IDA: the stabilised index-2 form of Gear, Leimkuhler and Gupta.

:func:`eomcompare.numeric.integrate.integrate` integrates every formulation as an
ODE: the constraints enter at acceleration level only, and projection or
Baumgarte's terms hold the drift of the position and velocity residuals.
Equations with multipliers (``lagrange``, ``sympy_lagrange``: unknowns
``(q'', lambda)``, the first n rows ``M q'' - C^T lambda = f``) can instead
be integrated as a DAE, with the constraints themselves among the
equations.  The form used here, named ``"ida-ggl"`` in results, is the GGL
(Gear, Leimkuhler and Gupta, 1985) stabilised index-2 form in the unknowns
``y = (q, v, lambda, mu)``::

    q' - v + Phi_q^T mu   = 0        (n rows)
    M v' - C^T lambda - f = 0        (n rows; M, C, f of the formulation)
    C v + c               = 0        (every velocity constraint row)
    Phi(t, q)             = 0        (the holonomic rows)

``v`` is the velocity, ``lambda`` the formulation's multipliers, ``mu`` one
extra multiplier per holonomic row that keeps ``q`` on ``Phi = 0``; on the
exact solution ``mu = 0`` and ``q' = v``.  Position and velocity
constraints are equations IDA solves at every step, so neither drifts
beyond the Newton iteration's tolerance: no projection, no gains.  Why not
the index-1 form (``q''`` and ``lambda`` algebraic, the constraints at
acceleration level): it is the ODE path's own equations with a slower
solver, and drifts as they do.  The index-3 form (``Phi = 0`` with
``M v' = f + C^T lambda`` only) makes BDF's error estimate and Newton
matrix ill-conditioned as ``1/h^3``; GGL is the usual remedy and keeps
BDF's convergence for ``q`` and ``v``.  ``lambda`` and ``mu`` are
index-2 variables, whose local error BDF does not control: they are left
out of IDA's error test (a vast absolute tolerance, the effect of IDA's
``suppressalg``, which the binding does not expose).

Redundant constraints (Bricard's mechanism, IFToMM A04): the rows of
``Phi_q`` are dependent, so are ``lambda`` and ``mu``, and the Newton
matrix is singular.  As many holonomic rows as the declaration's rank are
kept, chosen at the initial state by a QR factorization of ``Phi_q^T``
with column pivoting; where the kept rows lose rank while the whole set
does not (an IDA root function compares their reciprocal condition
numbers, :data:`RESELECT`: Bricard's, about 1.2 s into its motion), IDA
stops and restarts with rows chosen again there.  The accelerations do not
depend on which rows are kept; the multipliers of the rows left out are
zero (so not the minimum-norm ones ``model.multipliers`` gives).  At a
singular position (IFToMM A02's horizontal N-four-bar, 0.714 s into its
motion), where the rank of the whole set drops, IDA's Newton iteration
fails at tight tolerances (1e-10), and the result says so
(``success=False``, the time, the configuration and the condition
number); at looser ones (1e-6, 1e-8) IDA stepped across it onto the
parallelogram branch in our runs, which is luck, not design.

The binding is ``scikit-sundae`` (``pip install -e '.[dae]'``, module
``sksundae``): it is maintained, its wheels on the package index bundle
SUNDIALS 7 (so no system package is needed, unlike ``scikits-odes``, whose
sundials module builds only from source against a system SUNDIALS), and it
exposes IDA's residual form, algebraic-variable ids and per-variable
tolerances.  SUNDIALS' own ``sundials4py`` had no wheel for Python 3.11.

Cost: ``nfev`` counts every evaluation of the residual, those of IDA's
difference-quotient Jacobian included (each evaluates the formulation's
mass matrix and forcing once, without solving), and ``cpu_seconds`` the
processor time of the solve in this thread.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy.physics.mechanics as me

from eomcompare.symbolic.types import ArrayLike

from .integrate import (
    IntegrationResult,
    _projection_functions,
    _resolve_model,
    _start,
)
from .model import SingularConfigurationError
from .watch import describe_configuration

__all__ = [
    "integrate_dae",
    "DAEResult",
    "NoMultiplierFormError",
    "DAE_TREATMENT",
    "DAE_METHOD",
    "dae_available",
]

t = me.dynamicsymbols._t

#: The name results give the DAE form integrated here.
DAE_TREATMENT = "ida-ggl"

#: The integrator's name where a method is chosen (``compare run --method``).
DAE_METHOD = "IDA"

#: Absolute tolerance given to the index-2 variables (lambda, mu): so large
#: that they take no part in IDA's error test (see the module docstring).
_ALGEBRAIC_ATOL = 1e12

#: IDA's smallest step, in units in the last place of the horizon's
#: largest time: below it a step hardly moves t.
_MIN_STEP_ULPS = 64

#: A failure where the velocity constraint rows' reciprocal condition
#: number (at their rank) is below this is reported as a singular position
#: (``integrate``'s default ``singularity_tol``).
SINGULAR_RCOND = 1e-3

#: With redundant constraints, the kept holonomic rows are chosen again
#: where their reciprocal condition number falls below this fraction of
#: that of the whole set at the declaration's rank.
RESELECT = 0.2


class NoMultiplierFormError(ValueError):
    """The equations are not in the multiplier form the DAE path integrates
    (states (q, q'), unknowns (q'', multipliers)); the message says why."""


def _import_binding():
    try:
        from sksundae.ida import IDA
    except ImportError:
        raise ImportError(
            "the DAE integrator needs SUNDIALS' IDA through scikit-sundae: "
            "pip install -e '.[dae]' (or pip install scikit-sundae)"
        ) from None
    return IDA


def dae_available() -> bool:
    """True when the IDA binding (``scikit-sundae``) can be imported."""
    try:
        _import_binding()
    except ImportError:
        return False
    return True


@dataclass(frozen=True, eq=False, repr=False)
class DAEResult(IntegrationResult):
    """An :class:`~eomcompare.numeric.integrate.IntegrationResult` of the DAE path.

    ``stabilization`` is :data:`DAE_TREATMENT` (``"ida-ggl"``), ``qd`` the
    velocity ``v`` of the GGL form and ``n_projections`` 0.

    Attributes
    ----------
    multipliers : ndarray, shape (n_points, n_multipliers)
        The formulation's multipliers along the trajectory (zero for rows
        dropped as dependent).
    position_multipliers : ndarray, shape (n_points, n_kept_holonomic)
        The GGL multipliers ``mu`` (zero on the exact solution).
    kept_rows : tuple of tuple of int
        The multiplier rows integrated (all but dependent holonomic rows),
        one tuple per stretch between choices of rows.
    n_reselections : int
        Times the rows were chosen again along the motion.
    njev : int
        Newton matrices IDA formed (by difference quotients).
    cpu_seconds : float
        Processor time of the solve, in this thread.
    """

    multipliers: np.ndarray = None  # type: ignore[assignment]
    position_multipliers: np.ndarray = None  # type: ignore[assignment]
    kept_rows: tuple[tuple[int, ...], ...] = ()
    n_reselections: int = 0
    njev: int = 0
    cpu_seconds: float = float("nan")


def _check_form(model) -> tuple[int, int]:
    """(n, m): coordinates and multipliers of equations in the multiplier
    form, else :class:`NoMultiplierFormError`."""
    eom, ms = model.eom, model.system
    q = tuple(ms.coordinates)
    qd = tuple(c.diff(t) for c in q)
    qdd = tuple(c.diff(t, 2) for c in q)
    n = len(q)
    mult = tuple(getattr(eom, "multipliers", ()))
    if tuple(eom.states) != q + qd or tuple(eom.unknowns) != qdd + mult:
        raise NoMultiplierFormError(
            f"{eom.formulation}: the DAE integrator needs the multiplier form "
            f"(states q and q', unknowns q'' of every coordinate and the "
            f"multipliers, as lagrange and sympy_lagrange derive); "
            f"{eom.formulation}'s equations of {ms.name!r} have unknowns "
            f"{getattr(eom, 'unknowns_kind', '?')!r}: integrate them with "
            f"numeric.integrate.integrate (an ODE method)"
        )
    return n, len(mult)


def _select_rows(f, ms, t0, q0, p, n_rows):
    """Indices of the multiplier rows to integrate: every row but the
    holonomic rows that depend on others at the initial state (as many as
    the declaration's redundant holonomic constraints)."""
    n_hol = f["n_hol"]
    redundant = len(ms.redundant_holonomic_constraints)
    if not redundant:
        return list(range(n_rows))
    import scipy.linalg

    J = np.asarray(f["phi_q"](t0, q0, p), dtype=float).reshape(n_hol, -1)
    _, _, piv = scipy.linalg.qr(J.T, pivoting=True, mode="economic")
    keep = sorted(int(i) for i in piv[: n_hol - redundant])
    return keep + list(range(n_hol, n_rows))


def _near_singular(Bf, tt, q, p, m, n, rank):
    """A clause naming a singular position at ``q`` (the velocity
    constraint rows below their rank), or nothing."""
    if not m:
        return ""
    B = np.asarray(Bf(tt, q, p), dtype=float).reshape(m, n)
    sv = np.linalg.svd(B, compute_uv=False)
    if not np.all(np.isfinite(sv)) or sv[0] == 0:
        return ""
    rcond = sv[rank - 1] / sv[0]
    if rcond >= SINGULAR_RCOND:
        return ""
    return (
        f" (near a singular position: reciprocal condition number of the "
        f"velocity constraint rows {rcond:.3g}, below {SINGULAR_RCOND:g}; the "
        f"degrees of freedom jump there and the Newton iteration fails)"
    )


def integrate_dae(
    eom_or_model: Any,
    t_final: float,
    *,
    rtol: float = 1e-10,
    atol: float = 1e-10,
    t_eval: ArrayLike | None = None,
    initial_state: tuple[float, ArrayLike, ArrayLike] | None = None,
    parameters: Mapping[Any, float] | None = None,
    consistency_tol: float = 1e-8,
    max_step: float = np.inf,
    max_num_steps: int = 100_000,
) -> DAEResult:
    """Integrate equations in the multiplier form as a DAE with IDA.

    The stabilised index-2 (GGL) form of the module documentation, named
    ``"ida-ggl"`` in the result's ``stabilization``.

    Parameters
    ----------
    eom_or_model : EquationsOfMotion or NumericModel
        Equations with multipliers (``lagrange``, ``sympy_lagrange``).
    t_final : float
        End time; integration starts at the initial state's time.
    rtol, atol : float
        IDA's tolerances on q and v (the multipliers are not in the error
        test).
    t_eval : array_like, optional
        Output times; default: IDA's own steps.
    initial_state : (t0, q, qd), optional
        As in :func:`~eomcompare.numeric.integrate.integrate`; must satisfy the
        constraints within ``consistency_tol``.
    parameters : mapping, optional
        Parameter overrides.
    consistency_tol : float
    max_step : float
        Largest step (``inf``: unbounded).
    max_num_steps : int
        Steps IDA may take between two output times.

    Returns
    -------
    DAEResult
        What :func:`~eomcompare.numeric.integrate.integrate` returns, with the
        multipliers, IDA's counts and the processor time.  A failure of
        IDA (its Newton iteration stalls at a singular position, too many
        steps) is ``success=False`` with IDA's message and the trajectory
        up to there.

    Raises
    ------
    ImportError
        When scikit-sundae is not installed (naming the extra ``dae``).
    NoMultiplierFormError
        For equations without the multiplier form (kane, gibbs_appell,
        modified_lagrange, sympy_kane), or whose multiplier rows are not
        the declaration's constraint rows.
    ConstraintError
        For an inconsistent initial state.
    SingularConfigurationError
        When the equations cannot be solved at the initial state.

    Examples
    --------
    >>> from eomcompare.formulations import get_formulation
    >>> eom = get_formulation("lagrange").derive("four_bar")
    >>> res = integrate_dae(eom, 1.0, rtol=1e-8, atol=1e-8)
    >>> res.success, res.stabilization, bool(res.max_holonomic_residual < 1e-8)
    (True, 'ida-ggl', True)
    """
    IDA = _import_binding()
    for name, value in (("rtol", rtol), ("atol", atol)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name} must be a number, not {type(value).__name__}")
        if not (value > 0 and math.isfinite(value)):
            raise ValueError(f"{name} must be a positive finite number, not {value!r}")
    if isinstance(max_num_steps, bool) or not isinstance(max_num_steps, int):
        raise TypeError(f"max_num_steps must be an integer, not {max_num_steps!r}")
    if max_num_steps < 1:
        raise ValueError(f"max_num_steps must be at least 1, not {max_num_steps}")
    model = _resolve_model(eom_or_model, parameters)
    eom, ms = model.eom, model.system
    n, m = _check_form(model)
    pmap = dict(zip(ms.parameters, model.p))
    p = model.p
    t0, q0, v0, t_final = _start(ms, pmap, initial_state, t_final, consistency_tol)
    if t_eval is not None:
        t_eval = np.asarray(t_eval, dtype=float).ravel()
        if (
            t_eval.size == 0
            or np.any(np.diff(t_eval) <= 0)
            or t_eval[0] < t0
            or t_eval[-1] > t_final
        ):
            raise ValueError(f"t_eval must be increasing and within [{t0}, {t_final}]")

    f = _projection_functions(ms)
    if f["n_vel"] != m:
        raise NoMultiplierFormError(
            f"{eom.formulation}: {ms.name!r} has {m} multipliers but "
            f"{f['n_vel']} declared velocity constraint rows: the DAE "
            f"integrator pairs each multiplier with a declared row"
        )
    x0 = np.concatenate([q0, v0])
    try:
        M0, f0 = model.mass_matrix_and_forcing(t0, x0)
    except Exception as exc:  # non-finite at the start
        raise SingularConfigurationError(
            f"{eom.formulation}: the equations of {ms.name!r} cannot be "
            f"evaluated at t={t0:.6g}, {describe_configuration(ms, q0)} ({exc})"
        ) from None
    if m:
        B0 = np.asarray(f["B"](t0, q0, p), dtype=float).reshape(m, n)
        if not np.allclose(
            M0[n:, :n], B0, rtol=1e-8, atol=1e-10 * max(1, abs(B0).max())
        ):
            raise NoMultiplierFormError(
                f"{eom.formulation}: the constraint rows of its equations of "
                f"{ms.name!r} are not the declared velocity constraint rows "
                f"(rows reduced by rank or set by the declaration): the DAE "
                f"integrator pairs each multiplier with a declared row"
            )
    n_hol = f["n_hol"]
    redundant = len(ms.redundant_holonomic_constraints)
    rank = n_hol - redundant
    phi, phi_q, Bf, cf = f["phi"], f["phi_q"], f["B"], f["c"]
    nres = [0]

    def kept_rcond(tt, q, hol_rows):
        """Reciprocal condition number of the kept holonomic rows, beside
        that of the whole Jacobian at the declaration's rank."""
        J = np.asarray(phi_q(tt, q, p), dtype=float).reshape(n_hol, n)
        sk = np.linalg.svd(J[hol_rows], compute_uv=False)
        sa = np.linalg.svd(J, compute_uv=False)
        return sk[-1] / sk[0], sa[rank - 1] / sa[0]

    def start(tt, q, v, rows):
        """y and y' of the GGL form at a consistent (q, v), with the kept
        rows' multipliers and q'' from the augmented system restricted to
        those rows (square, regular)."""
        x = np.concatenate([q, v])
        M, fv = model.mass_matrix_and_forcing(tt, x)
        sel = list(range(n)) + [n + r for r in rows]
        A = M[np.ix_(sel, sel)]
        try:
            z = np.linalg.solve(A, fv[sel])
            cond = np.linalg.cond(A)
        except np.linalg.LinAlgError:
            z, cond = np.full(len(sel), np.nan), np.inf
        if not (np.all(np.isfinite(z)) and cond < 1e13):
            raise SingularConfigurationError(
                f"{eom.formulation}: the augmented system of {ms.name!r} is "
                f"singular at t={tt:.6g}, {describe_configuration(ms, q)}: the constraint "
                f"rows lose rank there (a singular position)"
            )
        h = sum(1 for r in rows if r < n_hol)
        y = np.concatenate([q, v, z[n:], np.zeros(h)])
        yp = np.concatenate([v, z[:n], np.zeros(len(rows) + h)])
        return y, yp

    horizon = float(t_final - t0)

    def make_solver(rows):
        hol_rows = [r for r in rows if r < n_hol]
        k, h = len(rows), len(hol_rows)
        cols = [n + r for r in rows]
        hol_idx = np.asarray(hol_rows, dtype=int)
        row_idx = np.asarray(rows, dtype=int)

        def resfn(tt, y, yp, res):
            nres[0] += 1
            q, v = y[:n], y[n : 2 * n]
            lam, mu = y[2 * n : 2 * n + k], y[2 * n + k :]
            M, fv = model.mass_matrix_and_forcing(tt, y[: 2 * n])
            r1 = yp[:n] - v
            if h:
                J = np.asarray(phi_q(tt, q, p), dtype=float).reshape(n_hol, n)
                r1 = r1 + J[hol_idx].T @ mu
            res[:n] = r1
            res[n : 2 * n] = M[:n, :n] @ yp[n : 2 * n] + M[:n, cols] @ lam - fv[:n]
            if k:
                B = np.asarray(Bf(tt, q, p), dtype=float).reshape(m, n)
                c = np.asarray(cf(tt, q, p), dtype=float).ravel()
                res[2 * n : 2 * n + k] = B[row_idx] @ v + c[row_idx]
            if h:
                res[2 * n + k :] = np.asarray(phi(tt, q, p), dtype=float).ravel()[
                    hol_idx
                ]

        options: dict[str, Any] = {}
        if redundant:
            # The kept rows may lose rank where the whole set does not
            # (Bricard's mechanism about 1.2 s into its motion): stop
            # there and choose the rows again.
            def eventsfn(tt, y, yp, events):
                kept, whole = kept_rcond(tt, y[:n], hol_idx)
                events[0] = kept - RESELECT * whole

            eventsfn.terminal = [True]
            options = {"eventsfn": eventsfn, "num_events": 1}
        N = 2 * n + k + h
        atol_vec = np.concatenate(
            [np.full(2 * n, float(atol)), np.full(k + h, _ALGEBRAIC_ATOL)]
        )
        return IDA(
            resfn,
            rtol=float(rtol),
            atol=atol_vec,
            algebraic_idx=list(range(2 * n, N)) if k + h else None,
            # (Unbounded is the whole horizon: sksundae's 0 for "none" is
            # refused beside a minimum step.)
            max_step=float(max_step) if np.isfinite(max_step) else horizon,
            max_num_steps=int(max_num_steps),
            # A step too small to move t in floating point never makes
            # progress: near a singular position IDA would otherwise try
            # such steps until max_num_steps, each with a Jacobian.
            min_step=_MIN_STEP_ULPS
            * float(np.spacing(max(abs(t0), abs(t_final), 1.0))),
            linsolver="dense",
            **options,
        )

    rows = _select_rows(f, ms, t0, q0, p, m)
    y, yp = start(t0, q0, v0, rows)
    ts: list[float] = []
    qs_out: list[np.ndarray] = []
    vs_out: list[np.ndarray] = []
    lam_out: list[np.ndarray] = []
    mu_out: list[np.ndarray] = []
    if t_eval is None or t_eval[0] == t0:
        ts.append(t0)
        qs_out.append(q0)
        vs_out.append(v0)
        lam_full = np.zeros(m)
        lam_full[rows] = y[2 * n : 2 * n + len(rows)]
        lam_out.append(lam_full)
        mu_out.append(y[2 * n + len(rows) :])
    t_now, njev, n_reselect = t0, 0, 0
    success, message = True, ""
    row_sets = [tuple(rows)]
    cpu = time.thread_time()
    while True:
        outs = np.array([t_final]) if t_eval is None else t_eval[t_eval > t_now]
        if t_eval is None:
            tspan = np.array([t_now, t_final])
        elif len(outs) == 1:
            # Two times would make IDA report its own steps.
            tspan = np.array([t_now, 0.5 * (t_now + outs[0]), outs[0]])
        else:
            tspan = np.concatenate([[t_now], outs])
        solver = make_solver(rows)
        sol = solver.solve(tspan, y, yp)
        njev += int(getattr(sol, "njev", 0) or 0)
        T = np.asarray(sol.t, dtype=float).ravel()
        k = len(rows)
        Y = np.asarray(sol.y, dtype=float).reshape(len(T), -1)
        event = int(sol.status) == 2
        keep = T > t_now
        if t_eval is not None:
            keep &= np.isin(T, outs)
        for tt, yy in zip(T[keep], Y[keep]):
            ts.append(float(tt))
            qs_out.append(yy[:n])
            vs_out.append(yy[n : 2 * n])
            lam_full = np.zeros(m)
            lam_full[rows] = yy[2 * n : 2 * n + k]
            lam_out.append(lam_full)
            mu_out.append(yy[2 * n + k :])
        if not sol.success:
            success = False
            message = (
                f"IDA stopped at t={T[-1]:.6g}, {describe_configuration(ms, Y[-1, :n])}: "
                f"{sol.message}{_near_singular(Bf, T[-1], Y[-1, :n], p, m, n, k)}"
            )
            break
        if not event or T[-1] >= t_final:
            message = str(sol.message)
            break
        # Choose the rows again where the kept ones lose rank.
        t_now = float(T[-1])
        q_e, v_e = Y[-1, :n], Y[-1, n : 2 * n]
        new_rows = _select_rows(f, ms, t_now, q_e, p, m)
        kept, whole = kept_rcond(t_now, q_e, [r for r in new_rows if r < n_hol])
        n_reselect += 1
        if tuple(new_rows) == tuple(rows) or kept <= RESELECT * whole:
            success = False
            message = (
                f"IDA stopped at t={t_now:.6g}, {describe_configuration(ms, q_e)}: no "
                f"{rank} of the {n_hol} holonomic constraint rows are "
                f"independent there (reciprocal condition number {whole:.3g})"
            )
            break
        rows = new_rows
        row_sets.append(tuple(rows))
        y, yp = start(t_now, q_e, v_e, rows)
    cpu = time.thread_time() - cpu
    T = np.asarray(ts, dtype=float)
    qs = np.asarray(qs_out, dtype=float).reshape(len(T), n)
    vs = np.asarray(vs_out, dtype=float).reshape(len(T), n)
    lam_arr = np.asarray(lam_out, dtype=float).reshape(len(T), m)
    n_mu = max((len(x) for x in mu_out), default=0)
    mu_arr = np.zeros((len(T), n_mu))
    for i, x in enumerate(mu_out):
        mu_arr[i, : len(x)] = x
    if success:
        message = "IDA reached the end of the integration interval."
    hol, vel = ms.states.residuals(T, qs, vs, pmap)
    return DAEResult(
        t=T,
        q=qs,
        qd=vs,
        holonomic_residual=hol,
        velocity_residual=vel,
        nfev=nres[0],
        success=success,
        message=message,
        stabilization=DAE_TREATMENT,
        n_projections=0,
        system=ms.name,
        formulation=eom.formulation,
        multipliers=lam_arr,
        position_multipliers=mu_arr,
        kept_rows=tuple(row_sets),
        n_reselections=n_reselect,
        njev=njev,
        cpu_seconds=cpu,
    )
