"""The ``"dop853"`` driver of :func:`eomcompare.numeric.integrate.integrate`:
DOP853 with its step loop in compiled code.

The method is solve_ivp's ``"DOP853"`` (Dormand and Prince's pair of order
8(5,3) as Hairer, Norsett and Wanner give it), with the same step-size
control, error norm, first-step selection and dense output, so on the same
problem the two take the same steps (``tests/numeric/test_dop853.py``
compares them step count for step count).  What differs is where the loop
runs: solve_ivp makes a few dozen numpy calls per step, which cost far more
than a compiled model's right-hand side (about 60 microseconds per step
against under one per evaluation for the small models of the catalogue);
here the stages, the error estimate and the output times are computed in
C (``numeric/c/eom_dop853.c``, in the call extension), calling the
model's own compiled right-hand side.  A segment is one call into C,
which calls back into Python only for the watch (below) or, without one,
every :data:`POLL_STEPS` steps, so that Python's signal handlers run:
Ctrl-C stops a long segment instead of waiting for its end.

It needs a compiled model (``backend="c"``); ``integrate`` runs solve_ivp's
``"DOP853"`` for any other.  Two more differences from the solve_ivp path,
both in what is evaluated, not in the steps taken: the dense output of a
step (three more evaluations) is formed only for steps that hold an output
time (solve_ivp forms it for every step when the segment's interpolant is
asked for), and the watch for singular positions is called at each
accepted step's end (solve_ivp's event also checks the step ends, then
locates the crossing between them; here the first step end past it is
named).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = ["run_compiled", "POLL_STEPS"]

#: Without a watch, the loop calls back into Python every this many
#: accepted steps, where Python's signal handlers run: Ctrl-C stops a long
#: segment within about a millisecond of stepping instead of at its end.
POLL_STEPS = 1024


def _poll(tt: float, x: np.ndarray) -> None:
    """The callback of a loop without a watch: nothing to check; Python's
    pending signal handlers run on the way in (and may raise)."""


def run_compiled(
    module,
    table,
    p,
    a: float,
    b: float,
    x: np.ndarray,
    *,
    rtol: float,
    atol: float,
    t_out: np.ndarray,
    first_step: float | None = None,
    max_step: float = math.inf,
    watch: Callable[[float, np.ndarray], None] | None = None,
):
    """One call of the compiled loop over ``[a, b]``.

    Returns ``(code, y_out, t_stop, x_stop, next_step, nfev)``: the C
    status (0 done, 1 step too small, 2 the right-hand side failed, 3 the
    watch stopped it), the states at the first output times reached (one
    row each), where the loop stopped and its state there (``b`` and the
    state at ``b`` on success), the first step of a next segment and the
    evaluations made.  An exception raised by ``watch``, or by a signal
    handler while the loop called back into Python, is raised again here,
    after the loop has stopped.
    """
    ffi, lib = module.ffi, module.call
    x = np.array(x, dtype=float)  # the loop writes its end state here
    n = x.size
    t_out = np.ascontiguousarray(t_out, dtype=float)
    y_out = np.empty((t_out.size, n))
    info = ffi.new("double[3]")
    done = ffi.new("long *")
    raised: list[BaseException] = []
    every = 1 if watch is not None else POLL_STEPS
    called = watch if watch is not None else _poll

    def check(tt, ptr):
        called(tt, np.frombuffer(ffi.buffer(ptr, 8 * n), dtype=float).copy())
        return 0

    def failed(exc_type, exc, traceback):
        # Whatever check raised, a signal handler's exception included
        # (raised on entering check, before any try of its own could
        # catch it): kept to raise below, and the loop told to stop.
        raised.append(exc)
        return 1

    callback = ffi.callback("int(double, const double *)", check, onerror=failed)
    fb = ffi.from_buffer
    code = lib.eom_call_dop853(
        table,
        p,
        n,
        float(a),
        float(b),
        fb("double[]", x),
        float(rtol),
        float(atol),
        float(first_step or 0.0),
        float(max_step),
        fb("double[]", t_out),
        t_out.size,
        fb("double[]", y_out),
        done,
        info,
        every,
        callback,
    )
    if code == 4:
        raise MemoryError("dop853: no memory for the stages")
    if raised:
        raise raised[0]
    next_step = info[1] if info[1] > 0 else None
    return code, y_out[: done[0]], info[0], x, next_step, int(info[2])
