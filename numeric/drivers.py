"""Compiled integrator drivers for :func:`eomcompare.numeric.integrate.integrate`.

``solve_ivp`` steps in Python: every step of its explicit and implicit
methods is a few dozen numpy calls, which costs far more than the compiled
right-hand side of a small model (on the IFToMM pendulum over 2,000 s at
rtol = atol = 1e-9, about 20 microseconds per evaluation of which the
equations take under one).  A driver here runs the whole step loop in
compiled code and calls back into Python only for the right-hand side, so
a solve costs about what its evaluations cost.

``"odeint"``
    ODEPACK's LSODA through ``scipy.integrate.odeint``: Adams methods
    (orders 1 to 12) switching to BDF (orders 1 to 5, with a Jacobian of
    its own finite differences) where the problem turns stiff.  Output
    times are interpolated from its own steps (they neither cut its steps
    nor restart it); it does not step past the end of a segment
    (``tcrit``).
``"dop853"``
    solve_ivp's DOP853, the same steps, with its whole step loop in
    compiled code calling a compiled model's own right-hand side (no call
    into Python between two steps): :mod:`eomcompare.numeric.dop853`.
    Compiled models only; :func:`integrate` runs solve_ivp's ``"DOP853"``
    for the others.

A driver reports the state at the output times it is given and at the end
of its segment, nothing in between (it has no step-by-step output and no
event location).  The watch for singular positions of equations that
integrate dependent coordinates (``singularity_tol``), which solve_ivp's
methods keep as an event between step ends, is kept by
:func:`integrate` around the driver instead: it checks the state of the
first right-hand-side evaluation at each new time (LSODA's attempted step
ends) or of each accepted step's end (DOP853's), and every state returned (``integrate``'s documentation says
what it can miss).  :class:`UnsupportedDriverError` remains for what a
driver cannot do.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "DRIVERS",
    "Segment",
    "UnsupportedDriverError",
    "dop853_segment",
    "odeint_segment",
]


class UnsupportedDriverError(ValueError):
    """A driver cannot integrate what was asked (the message says why and
    what can)."""


@dataclass
class Segment:
    """One segment's solution, in the shape of ``solve_ivp``'s.

    Attributes
    ----------
    t : ndarray, shape (k,)
        The output times reached (the segment's end only if asked for).
    y : ndarray, shape (n_states, k)
    x_end : ndarray or None
        The state at the segment's end (None on failure).
    last_step : float or None
        The last step size, to start the next segment with.
    success : bool
    message : str
    nfev : int
        Evaluations the driver reports (its Jacobian's included).
    """

    t: np.ndarray
    y: np.ndarray
    x_end: np.ndarray | None
    last_step: float | None
    success: bool
    message: str
    nfev: int
    status: int = 0
    sol: None = None
    #: False when the evaluations did not go through the caller's ``fun``
    #: (the compiled loop calls the model's own): ``nfev`` counts them.
    counted: bool = True


#: LSODA's largest number of steps between two output times (its default
#: of 500 stops a 2,000 s pendulum with no output in between).
ODEINT_MXSTEP = 2**31 - 1


def odeint_segment(
    fun: Callable[[float, np.ndarray], np.ndarray],
    a: float,
    b: float,
    x: np.ndarray,
    *,
    rtol: float,
    atol: float,
    t_out: np.ndarray,
    first_step: float | None = None,
    max_step: float = math.inf,
    model=None,
    watch=None,
) -> Segment:
    """Integrate ``x' = fun(t, x)`` from ``a`` to ``b`` with LSODA
    (``scipy.integrate.odeint``), reporting the states at ``t_out``
    (increasing, within ``(a, b]``) and at ``b``.

    An exception raised by ``fun`` propagates.  ``watch`` (the caller's
    :class:`~eomcompare.numeric.watch.DriverWatch`) checks the first
    evaluation at each new time; ``model`` is not needed.

    Examples
    --------
    >>> import numpy as np
    >>> seg = odeint_segment(lambda t, x: -x, 0.0, 1.0, np.array([1.0]),
    ...                      rtol=1e-10, atol=1e-10, t_out=np.array([0.5]))
    >>> bool(abs(seg.y[0, 0] - np.exp(-0.5)) < 1e-8), seg.t.tolist()
    (True, [0.5])
    """
    from scipy.integrate import ODEintWarning, odeint

    if watch is not None:
        fun = watch.wrap(fun)
    t_out = np.asarray(t_out, dtype=float).ravel()
    ends_at_b = bool(t_out.size) and t_out[-1] == b
    times = np.concatenate([[a], t_out, [] if ends_at_b else [b]])
    with warnings.catch_warnings():
        # A failure is reported in the result, not as a warning.
        warnings.simplefilter("ignore", ODEintWarning)
        y, info = odeint(
            fun,
            np.asarray(x, dtype=float),
            times,
            tfirst=True,
            rtol=rtol,
            atol=atol,
            full_output=True,
            tcrit=np.array([b]),
            h0=float(first_step or 0.0),
            hmax=float(max_step) if math.isfinite(max_step) else 0.0,
            mxstep=ODEINT_MXSTEP,
        )
    message = str(info["message"])
    success = message == "Integration successful."
    nfev = int(info["nfe"][-1]) if len(info["nfe"]) else 0
    if success:
        reached = len(times)
    else:
        # tcur[i] is where the integration stood after output time i + 1.
        tcur = np.asarray(info["tcur"], dtype=float)
        reached = 1 + int(np.argmax(~(tcur >= times[1:]))) if len(tcur) else 1
    rows = y[1:reached]
    k = min(len(t_out), len(rows))
    last = info["hu"][reached - 2] if reached >= 2 else 0.0
    return Segment(
        t=t_out[:k].copy(),
        y=np.asarray(rows[:k], dtype=float).T.reshape(len(x), k),
        x_end=np.array(y[-1], dtype=float) if success else None,
        last_step=float(last) if last > 0 else None,
        success=success,
        message=message,
        nfev=nfev,
        status=0 if success else -1,
    )


def dop853_segment(fun, a, b, x, *, t_out, model, watch=None, **solver) -> Segment:
    """Integrate a compiled ``model``'s ``x' = rhs(t, x)`` from ``a`` to
    ``b`` with DOP853 in compiled code, reporting the states at ``t_out``
    (increasing, within ``(a, b]``) and at ``b``; ``solver`` holds the
    other driver arguments (``rtol``, ``atol``, ``first_step``,
    ``max_step``: :func:`eomcompare.numeric.dop853.run_compiled`'s).

    ``fun`` is the caller's right-hand side: it is called only where the
    compiled one failed or the step size collapsed, so that it raises the
    caller's error for that state (a singular configuration, a non-finite
    derivative) or records it.  ``watch`` (the caller's
    :class:`~eomcompare.numeric.watch.DriverWatch`) checks every accepted
    step's end and may raise to stop.  See :mod:`eomcompare.numeric.dop853`.

    Examples
    --------
    >>> import numpy as np
    >>> from eomcompare.formulations import get_formulation
    >>> model = get_formulation("kane").derive("double_pendulum").numeric(backend="c")
    >>> x0 = model.state_from(np.array([0.5, 0.0]), np.array([0.0, 0.0]), 0.0)
    >>> seg = dop853_segment(model.rhs, 0.0, 1.0, x0, rtol=1e-10, atol=1e-10,
    ...                      t_out=np.array([0.5, 1.0]), model=model)
    >>> seg.success, seg.t.tolist(), bool(np.allclose(seg.y[:, -1], seg.x_end))
    (True, [0.5, 1.0], True)
    """
    t_out = np.asarray(t_out, dtype=float).ravel()
    code, ys, t_stop, x_stop, next_step, nfev = model.dop853_segment(
        a, b, x, t_out=t_out, watch=None if watch is None else watch.check, **solver
    )
    if code in (1, 2):
        # The caller's right-hand side at the failing state: raises the
        # caller's error for it (and records it, for the caller's report of
        # a collapsed step size).
        fun(t_stop, x_stop)
    message = {
        1: "Required step size is less than spacing between numbers.",
        2: f"the compiled right-hand side failed at t={t_stop:.6g}",
    }.get(code, "")
    success = code == 0
    return Segment(
        t=t_out[: len(ys)].copy(),
        y=np.ascontiguousarray(ys.T),
        x_end=x_stop if success else None,
        last_step=next_step,
        success=success,
        message=message or "The solver successfully reached the end of the segment.",
        nfev=nfev,
        status=0 if success else -1,
        counted=False,
    )


#: Driver name -> segment solver ``(fun, a, b, x, *, rtol, atol, t_out,
#: first_step, max_step, model, watch) -> Segment``.
DRIVERS: dict[str, Callable[..., Segment]] = {
    "odeint": odeint_segment,
    "dop853": dop853_segment,
}
