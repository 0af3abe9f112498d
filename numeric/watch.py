"""The watch for singular positions along an integration, and the errors
that name a configuration.

Equations that integrate the dependent coordinates of a closed loop rely
on the constraint Jacobian: where its velocity rows lose rank (the IFToMM
A02 N-four-bar's horizontal position) the degrees of freedom jump and a
second branch of motion crosses.  :func:`singularity_event` is solve_ivp's
terminal event for it; :class:`DriverWatch` keeps the same watch around a
compiled driver (:mod:`eomcompare.numeric.drivers`), which has no event
location.
"""

from __future__ import annotations

import math

import numpy as np

from eomcompare.symbolic.text import display_name

from .model import SingularConfigurationError

__all__ = [
    "DESCRIBED_COORDINATES",
    "describe_configuration",
    "DriverWatch",
    "raise_if_singular",
    "singular_position",
    "singularity_event",
]


#: Coordinates an error message names (a long chain's first ones).
DESCRIBED_COORDINATES = 12


def describe_configuration(ms, q) -> str:
    """``q0=0.5, q1=1, ...``: the coordinates of ``ms`` at ``q``, the first
    :data:`DESCRIBED_COORDINATES` of a long chain."""
    names = [display_name(c) for c in ms.coordinates]
    shown = ", ".join(f"{n}={v:.6g}" for n, v in zip(names[:DESCRIBED_COORDINATES], q))
    if len(names) > DESCRIBED_COORDINATES:
        shown += (
            f", ... (the first {DESCRIBED_COORDINATES} of {len(names)} coordinates)"
        )
    return shown


def singularity_event(model, tol):
    """A terminal ``solve_ivp`` event at the configurations where the
    velocity constraint rows lose rank, for equations whose state holds
    the dependent coordinates; None when there is nothing to watch."""
    ms = model.system
    if tol is None or not ms.q_dep:
        return None
    if not set(ms.q_dep) & set(model.eom.states):
        # The dependent coordinates were eliminated (explicit solutions):
        # the equations never meet the constraint Jacobian.
        return None
    f = ms.states._constraint_functions["A"]
    n_u = len(ms.speeds)
    p = model.p

    def rcond(tt, x):
        q, _ = model.coordinates_from(x, tt)
        A = np.asarray(f(tt, q, np.zeros(n_u), p), dtype=float).reshape(-1, n_u)
        sv = np.linalg.svd(A, compute_uv=False)
        if not np.all(np.isfinite(sv)) or sv[0] == 0:
            return -tol
        return float(sv[-1] / sv[0]) - tol

    rcond.terminal = True
    rcond.tol = tol
    return [rcond]


def singular_position(model, te, q, tol):
    """The error of the singularity watch at time ``te``, coordinates ``q``."""
    ms = model.system
    return SingularConfigurationError(
        f"{model.eom.formulation}: {ms.name!r} reached a singular position "
        f"at t={te:.6g}, {describe_configuration(ms, q)}: the constraint Jacobian "
        f"loses rank there (reciprocal condition number of the "
        f"velocity constraints below {tol:g}), the "
        f"degrees of freedom jump and the motion may change branch; "
        f"integration stopped"
    )


class DriverWatch:
    """The watch for singular positions with a compiled driver, which has
    no event location and no step-by-step output.

    It checks the reciprocal condition number of the velocity constraint
    rows (the event function of :func:`singularity_event`) at

    - the first evaluation of the right-hand side at each new time: the
      driver's step ends, attempted or accepted (LSODA evaluates the
      predicted state at ``t_n + h`` before correcting it, and calls again
      at the same time for its corrector and its Jacobian), and
    - every state the driver returns (output times, segment ends);

    and stops with the same :class:`SingularConfigurationError` as the
    solve_ivp path, naming the time of the first check below the threshold
    (solve_ivp locates the crossing between two step ends; here it is the
    first checked time past it, at most one step later).

    What it can miss: like solve_ivp's event, which compares the step ends
    too, a dip of the condition number below the threshold that begins and
    ends between two checked times (within one step).  The checked state at
    a step end is the predictor, not the corrected solution, and may
    belong to a step that is then rejected: it differs from the solution
    by about the local error, which only matters within that distance of
    the threshold.
    """

    def __init__(self, model, event):
        self.model = model
        self.event = event
        self.prev = math.nan

    def check(self, tt, x):
        g = self.event(tt, x)
        if g < 0:
            q, _ = self.model.coordinates_from(np.asarray(x, dtype=float), tt)
            raise singular_position(self.model, float(tt), q, self.event.tol)

    def check_all(self, ts, xs):
        for tt, x in zip(ts, xs):
            self.check(float(tt), x)

    def wrap(self, fun):
        def watched(tt, x):
            if tt != self.prev:
                self.prev = tt
                self.check(tt, x)
            return fun(tt, x)

        return watched


def raise_if_singular(model, sol, last):
    """A failed integration near a singular configuration is reported as
    such (the step size collapses there instead of producing NaN)."""
    if not last:
        return
    tt, x = last["t"], np.asarray(last["x"], dtype=float)
    M, _ = model.mass_matrix_and_forcing(tt, x)
    cond = np.linalg.cond(M)
    if not np.isfinite(cond) or cond > 1e10:
        q, _ = model.coordinates_from(x, tt)
        raise SingularConfigurationError(
            f"{model.eom.formulation}: integration of {model.system.name!r} "
            f"stopped near a singular configuration at t={tt:.6g}, "
            f"{describe_configuration(model.system, q)} (condition number of the mass "
            f"matrix {cond:.3g}): {sol.message}"
        )
