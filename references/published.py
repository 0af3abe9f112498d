"""The field's published benchmarks, computed by every formulation.

Three benchmarks whose numbers nobody here chose:

* the Whipple bicycle (Meijaard, Papadopoulos, Ruina, Schwab 2007): the
  linearized matrices M, C1, K0, K2 of upright straight running and the
  lean/steer eigenvalues at v = 0..5 m/s; weave and capsize speeds by root
  finding;
* the rolling disc: the critical speed of upright rolling, 1/sqrt(3) for
  m = g = r = 1;
* Andrews' squeezing mechanism (the IVP test set): the angles at t = 0.03.

Every number is computed through the numeric contract, so each formulation
is held to the same published value by the same route
(:func:`eomcompare.numeric.linearize.linearize` for the linear ones,
:func:`eomcompare.numeric.integrate.integrate` for the trajectory).
:func:`published_vs_computed` lays the published numbers beside each
formulation's and their differences, for the comparison report.

Examples
--------
>>> from eomcompare.references.published import rolling_disc_critical_speed
>>> v = rolling_disc_critical_speed("gibbs_appell")   # m = g = r = 1
>>> bool(abs(v - 3 ** -0.5) < 1e-9)
True

The bicycle's equations take longer to derive (about ten seconds for
``kane``): the tutorial :doc:`/tutorials/plot_3_bicycle_eigenvalues`
computes its eigenvalues and sets them beside the published ones, and
shows it self-stable at 5 m/s (every real part negative).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from eomcompare.formulations.base import (
    EquationsOfMotion,
    formulation_names,
    get_formulation,
)
from eomcompare.numeric.linearize import LinearModel, linearize
from eomcompare.systems import get_system

__all__ = [
    "BICYCLE_MATRICES",
    "BICYCLE_EIGENVALUES",
    "BICYCLE_SPEEDS",
    "ROLLING_DISC_CRITICAL_SPEED",
    "ANDREWS_REFERENCE",
    "ANDREWS_ANGLES",
    "benchmark_equations",
    "bicycle_linear_model",
    "bicycle_eigenvalues",
    "bicycle_matrices",
    "bicycle_weave_speed",
    "bicycle_capsize_speed",
    "upright_bicycle_state",
    "rolling_disc_upright_state",
    "rolling_disc_lean_model",
    "rolling_disc_critical_speed",
    "andrews_angles",
    "published_vs_computed",
]

# ----------------------------------------------------------------------
# Published numbers
# ----------------------------------------------------------------------
#: Meijaard et al. (2007), the benchmark bicycle's linearized matrices, for
#: q = [roll, steer] (``../shared/benchmarks.md``).
BICYCLE_MATRICES = {
    "M": np.array([[80.81722, 2.31941332208709], [2.31941332208709, 0.29784188199686]]),
    "C1": np.array([[0.0, 33.86641391492494], [-0.85035641456978, 1.68540397397560]]),
    "K0": np.array(
        [[-80.95, -2.59951685249872], [-2.59951685249872, -0.80329488458618]]
    ),
    "K2": np.array([[0.0, 76.59734589573222], [0.0, 2.65431523794604]]),
}

#: Meijaard et al. (2007), eigenvalues of the lean/steer motion:
#: speed -> (capsize, weave real, weave imaginary, castor); at v = 0 the
#: modes are the real pairs +-3.1316... and +-5.5309....
BICYCLE_EIGENVALUES = {
    1.0: (-3.13423125066578, 3.52696170990070, 0.80774027519930, -7.11008014637442),
    2.0: (-3.07158645641514, 2.68234517512745, 1.68066296590675, -8.67387984831735),
    3.0: (-2.63366137253667, 1.70675605663975, 2.31582447384325, -10.35101467245920),
    4.0: (-1.42944427361326, 0.41325331521125, 3.07910818603206, -12.15861426576447),
    5.0: (-0.32286642900409, -0.77534188219585, 4.46486771378823, -14.07838969279822),
}
#: The real pairs at v = 0: (capsize-like, castor-like).
BICYCLE_EIGENVALUES_AT_REST = (3.13164324790656, 5.53094371765393)

#: Meijaard et al. (2007), Table 2(a): the weave and capsize speeds (m/s).
#: Not in ``../shared/benchmarks.md``; checked digit for digit against
#: independent public bicycle codes that quote the table.  This project's
#: root finding reproduces them to about 1e-14.
BICYCLE_SPEEDS = {"weave speed": 4.29238253634111, "capsize speed": 6.02426201538837}

#: Thin uniform disc, m = g = r = 1: upright rolling is stable above this.
ROLLING_DISC_CRITICAL_SPEED = 1.0 / math.sqrt(3.0)

#: Names of Andrews' angles, in the declaration's (and the test set's) order.
ANDREWS_ANGLES = ("beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon")
#: The IVP test set's reference solution of Andrews' mechanism at t = 0.03
#: (tolerance 1e-14), the seven angles: the ``SOLN`` routine of the test
#: set's drivers for this problem, checked digit for digit.  Not in
#: ``../shared/benchmarks.md``.  This project's stiff integration agrees to
#: about 1e-9 relative.
ANDREWS_REFERENCE = (
    15.81077119629904,
    -15.75637105984298,
    0.04082224013073101,
    -0.5347301163226948,
    0.5244099658805304,
    0.5347301163226948,
    1.048080741042263,
)

#: The lean/steer block of the bicycle's minimal state.
_BICYCLE_STATES = ("q4", "q6", "u4", "u6")
_BICYCLE_INPUTS = ("T_phi", "T_delta")


# ----------------------------------------------------------------------
# Derivations, cached per process
# ----------------------------------------------------------------------
@functools.cache
def _cached(formulation: str, system: str, use_cache: bool):
    ms = get_system(system)
    form = get_formulation(formulation)
    if use_cache:
        from eomcompare.formulations.cache import DerivationCache

        eom, _ = DerivationCache().derive(ms, form)
        return eom
    return form.derive(ms)


def _derive_and_store(formulation: str, system: str) -> None:
    from eomcompare.formulations.cache import DerivationCache

    DerivationCache().derive(get_system(system), get_formulation(formulation))


def _derive_within(formulation: str, system: str, seconds: float) -> None:
    """Derive into the on-disk cache in a child process, given up after
    ``seconds`` (the child is killed: :mod:`eomcompare.numeric.child`, the
    project's one time limit)."""
    from eomcompare.formulations.cache import DerivationCache
    from eomcompare.numeric.child import ChildTimeout, call_in_child

    if (
        DerivationCache().load(get_system(system), get_formulation(formulation))
        is not None
    ):
        return
    try:
        call_in_child(_derive_and_store, formulation, system, timeout=seconds)
    except ChildTimeout:
        raise TimeoutError(
            f"{formulation} did not derive {system!r} within {seconds:g} s"
        ) from None


def benchmark_equations(
    formulation, system: str, use_cache: bool = False
) -> EquationsOfMotion:
    """The equations of ``system`` by ``formulation``, derived once per
    process (and, with ``use_cache``, read from the on-disk cache).

    ``formulation`` may also be an :class:`EquationsOfMotion` already
    derived, which is returned as is after checking its system.
    """
    if isinstance(formulation, EquationsOfMotion):
        if formulation.system.name != system:
            raise ValueError(
                f"equations of {formulation.system.name!r} given where "
                f"{system!r} is needed"
            )
        return formulation
    if not isinstance(formulation, str):
        raise TypeError(
            f"formulation must be a name or an EquationsOfMotion, not "
            f"{type(formulation).__name__}"
        )
    get_formulation(formulation)  # ValueError naming the valid ones
    return _cached(formulation, system, bool(use_cache))


@functools.cache
def _declaration(system: str):
    """The catalogue's declaration, built once per process: the operating
    points below are computed in every step of a root search, and building
    the bicycle or the disc costs seconds (its checks run symbolically)."""
    return get_system(system)


# ----------------------------------------------------------------------
# The Whipple bicycle
# ----------------------------------------------------------------------
def upright_bicycle_state(speed: float, parameters=None, *, system=None):
    """(t, q, q') of upright straight running at forward ``speed`` (m/s).

    All angles zero (the nominal geometry has zero pitch); the rear wheel
    turns at ``-speed / rR`` relative to the frame (wheel axis to the right,
    z down), the dependent speeds follow from rolling.  ``system`` is the
    bicycle's declaration (default: the catalogue's).
    """
    ms = system if system is not None else _declaration("whipple_bicycle")
    vals = dict(zip(map(str, ms.parameters), ms.states.parameter_vector(parameters)))
    q = ms.states.solve_dependent_coordinates(0.0, np.zeros(7), np.zeros(1), parameters)
    u = ms.states.solve_dependent_speeds(
        0.0, q, np.array([0.0, 0.0, -float(speed) / vals["rR"]]), parameters
    )
    return 0.0, q, ms.states.rates_from_speeds(0.0, q, u, parameters)


def bicycle_linear_model(
    formulation, speed: float, *, parameters=None, use_cache: bool = False
) -> LinearModel:
    """The lean/steer block (roll q4, steer q6 and their rates u4, u6) of
    the bicycle's linearization about upright running at ``speed``, with
    the roll and steer torques as inputs.

    The forward speed, the cyclic coordinates (x, y, yaw, wheel angles) and
    the lean/steer motion decouple at this operating point by the bicycle's
    lateral symmetry; :meth:`LinearModel.coupling` of the full model
    measures it.
    """
    eom = benchmark_equations(formulation, "whipple_bicycle", use_cache)
    if parameters is None:
        return _default_bicycle_model(eom, float(speed))
    op = upright_bicycle_state(speed, parameters, system=eom.system)
    lin = linearize(eom, op, inputs=_BICYCLE_INPUTS, parameters=parameters)
    return lin.submodel(_BICYCLE_STATES)


@functools.lru_cache(maxsize=256)
def _default_bicycle_model(eom, speed):
    # Keyed on the equations object itself: the matrices, the eigenvalue
    # table and the report reuse the same linearizations.
    op = upright_bicycle_state(speed, system=eom.system)
    return linearize(eom, op, inputs=_BICYCLE_INPUTS).submodel(_BICYCLE_STATES)


def bicycle_eigenvalues(
    formulation, speed: float, *, parameters=None, use_cache: bool = False
) -> np.ndarray:
    """The four lean/steer eigenvalues of ``formulation``'s linearization of
    the Whipple bicycle at forward ``speed`` (m/s), sorted by real part.

    Parameters
    ----------
    formulation : str or EquationsOfMotion
        A registered formulation's name (derived once per process) or the
        bicycle's equations.
    speed : float
    parameters : mapping, optional
        Overrides of the benchmark parameters.

    Examples
    --------
    Deriving the bicycle takes about ten seconds, so the example runs in
    the tutorial :doc:`/tutorials/plot_3_bicycle_eigenvalues`, which
    checks every digit against Meijaard et al.'s Table 2.  At 4 m/s::

        bicycle_eigenvalues("kane", 4.0).round(6)
        # array([-12.158614+0.j, -1.429444+0.j,
        #        0.413253-3.079108j, 0.413253+3.079108j])
    """
    return bicycle_linear_model(
        formulation, speed, parameters=parameters, use_cache=use_cache
    ).eigenvalues()


def bicycle_matrices(
    formulation,
    *,
    speeds: Sequence[float] = (1.0, 2.0, 3.0),
    parameters=None,
    use_cache: bool = False,
) -> dict:
    """M, C1, K0, K2 of ``M q'' + v C1 q' + (g K0 + v^2 K2) q = T`` from the
    linearization.

    The inputs' columns give ``M^-1`` (the torques T = (T_phi, T_delta) are
    the benchmark's generalized forces); at rest ``-M A_qq = g K0``; at the
    given speeds ``-M A_qq = g K0 + v^2 K2`` and ``-M A_qu = v C1``, solved
    by least squares over the speeds.
    """
    lin0 = bicycle_linear_model(
        formulation, 0.0, parameters=parameters, use_cache=use_cache
    )
    ms = benchmark_equations(formulation, "whipple_bicycle", use_cache).system
    g = dict(zip(map(str, ms.parameters), ms.states.parameter_vector(parameters)))["g"]
    M = np.linalg.inv(lin0.B[2:, :])
    K0 = -M @ lin0.A[2:, :2] / g
    k2_rows, c1_rows = [], []
    for v in speeds:
        lin = bicycle_linear_model(
            formulation, v, parameters=parameters, use_cache=use_cache
        )
        k2_rows.append((-M @ lin.A[2:, :2] - g * K0) / v**2)
        c1_rows.append(-M @ lin.A[2:, 2:] / v)
    return {
        "M": M,
        "C1": np.mean(c1_rows, axis=0),
        "K0": K0,
        "K2": np.mean(k2_rows, axis=0),
        "spread": max(
            np.ptp(np.array(k2_rows), axis=0).max(),
            np.ptp(np.array(c1_rows), axis=0).max(),
        ),
    }


def _weave_real(v, formulation, parameters, use_cache):
    ev = bicycle_eigenvalues(formulation, v, parameters=parameters, use_cache=use_cache)
    pair = ev[np.abs(ev.imag) > 1e-9]
    if not len(pair):
        raise ValueError(f"no oscillatory (weave) mode at v = {v}")
    return float(pair.real.max())


def _capsize_real(v, formulation, parameters, use_cache):
    ev = bicycle_eigenvalues(formulation, v, parameters=parameters, use_cache=use_cache)
    real = ev[np.abs(ev.imag) <= 1e-9].real
    return float(real.max())


def bicycle_weave_speed(
    formulation,
    *,
    bracket=(3.0, 5.0),
    parameters=None,
    use_cache: bool = False,
    xtol: float = 1e-12,
) -> float:
    """Speed where the weave pair's real part crosses zero (Brent's method
    on the real part of the oscillatory eigenvalues)."""
    return brentq(
        _weave_real, *bracket, xtol=xtol, args=(formulation, parameters, use_cache)
    )


def bicycle_capsize_speed(
    formulation,
    *,
    bracket=(5.0, 8.0),
    parameters=None,
    use_cache: bool = False,
    xtol: float = 1e-12,
) -> float:
    """Speed where the capsize eigenvalue (the real one nearest zero, the
    largest real one above the weave speed) crosses zero."""
    return brentq(
        _capsize_real, *bracket, xtol=xtol, args=(formulation, parameters, use_cache)
    )


# ----------------------------------------------------------------------
# The rolling disc
# ----------------------------------------------------------------------
_DISC_LEAN_STATES = ("q2", "u1", "u3")
_UNIT_DISC = {"m": 1.0, "g": 1.0, "r": 1.0}


def rolling_disc_upright_state(speed: float, parameters=None, *, system=None):
    """(t, q, q') of the disc rolling upright along N.x at ``speed``:
    spin u2 = speed / r about the axis L.y (the centre moves at u2 r L.x).
    ``system`` is the disc's declaration (default: the catalogue's)."""
    ms = system if system is not None else _declaration("rolling_disc")
    vals = dict(zip(map(str, ms.parameters), ms.states.parameter_vector(parameters)))
    q = np.zeros(5)
    u = ms.states.solve_dependent_speeds(
        0.0, q, np.array([0.0, float(speed) / vals["r"], 0.0]), parameters
    )
    return 0.0, q, ms.states.rates_from_speeds(0.0, q, u, parameters)


def rolling_disc_lean_model(
    formulation, speed: float, *, parameters=_UNIT_DISC, use_cache: bool = False
) -> LinearModel:
    """The lean/yaw block (lean q2, lean rate u1, yaw-rate component u3)
    of the disc's linearization about upright rolling at ``speed``."""
    eom = benchmark_equations(formulation, "rolling_disc", use_cache)
    op = rolling_disc_upright_state(speed, parameters, system=eom.system)
    return linearize(eom, op, parameters=parameters).submodel(_DISC_LEAN_STATES)


def _disc_indicator(v, formulation, parameters, use_cache):
    # The lean/yaw block has eigenvalues 0 and +-s with s^2 = trace(A^2)/2:
    # a real pair (unstable) below the critical speed, an imaginary pair
    # (neutrally stable: the system conserves energy) above it.  The real
    # part alone stays zero above; s^2 changes sign, which Brent needs.
    A = rolling_disc_lean_model(
        formulation, v, parameters=parameters, use_cache=use_cache
    ).A
    return float(np.trace(A @ A)) / 2.0


def rolling_disc_critical_speed(
    formulation,
    *,
    parameters=_UNIT_DISC,
    bracket=(0.1, 3.0),
    use_cache: bool = False,
    xtol: float = 1e-13,
) -> float:
    """Forward speed above which upright rolling is (neutrally) stable.

    Brent's method on the square of the lean/yaw eigenvalue pair, which is
    positive (real pair: the disc falls) below and negative (imaginary
    pair: it wobbles) above the critical speed.

    Examples
    --------
    >>> v = rolling_disc_critical_speed("kane")
    >>> round(v * 3 ** 0.5, 9)
    1.0
    """
    return brentq(
        _disc_indicator, *bracket, xtol=xtol, args=(formulation, parameters, use_cache)
    )


# ----------------------------------------------------------------------
# Andrews' squeezing mechanism
# ----------------------------------------------------------------------
def andrews_angles(
    formulation="lagrange",
    *,
    t_final: float = 0.03,
    method: str = "Radau",
    rtol: float = 1e-10,
    atol: float = 1e-10,
    use_cache: bool = False,
):
    """The seven angles at ``t_final`` and the integration result.

    Integrated from the test set's consistent initial state with
    :func:`eomcompare.numeric.integrate.integrate` (stiff ``method``, constraint
    projection).  Returns ``(angles, result)``.
    """
    from eomcompare.numeric.integrate import integrate

    eom = benchmark_equations(formulation, "andrews_squeezer", use_cache)
    res = integrate(eom, t_final, method=method, rtol=rtol, atol=atol, t_eval=[t_final])
    return np.asarray(res.q[-1], dtype=float), res


# ----------------------------------------------------------------------
# The table for the report
# ----------------------------------------------------------------------
def _rows_bicycle(form, use_cache):
    rows = []
    mats = bicycle_matrices(form, use_cache=use_cache)
    for name, pub in BICYCLE_MATRICES.items():
        for (i, j), p in np.ndenumerate(pub):
            rows.append(("whipple_bicycle", f"{name}[{i},{j}]", p, mats[name][i, j]))
    ev0 = bicycle_eigenvalues(form, 0.0, use_cache=use_cache)
    rows.append(
        (
            "whipple_bicycle",
            "v=0 capsize +-",
            BICYCLE_EIGENVALUES_AT_REST[0],
            float(np.sort(np.abs(ev0.real))[0]),
        )
    )
    rows.append(
        (
            "whipple_bicycle",
            "v=0 castor +-",
            BICYCLE_EIGENVALUES_AT_REST[1],
            float(np.sort(np.abs(ev0.real))[-1]),
        )
    )
    for v, (cap, wre, wim, cas) in BICYCLE_EIGENVALUES.items():
        ev = bicycle_eigenvalues(form, v, use_cache=use_cache)
        real = np.sort(ev[np.abs(ev.imag) <= 1e-9].real)
        pair = ev[np.abs(ev.imag) > 1e-9]
        rows += [
            ("whipple_bicycle", f"v={v:g} capsize", cap, real[-1]),
            ("whipple_bicycle", f"v={v:g} weave re", wre, pair.real.max()),
            ("whipple_bicycle", f"v={v:g} weave im", wim, np.abs(pair.imag).max()),
            ("whipple_bicycle", f"v={v:g} castor", cas, real[0]),
        ]
    rows.append(
        (
            "whipple_bicycle",
            "weave speed [Meijaard 2007, Table 2a]",
            BICYCLE_SPEEDS["weave speed"],
            bicycle_weave_speed(form, use_cache=use_cache, xtol=1e-11),
        )
    )
    rows.append(
        (
            "whipple_bicycle",
            "capsize speed [Meijaard 2007, Table 2a]",
            BICYCLE_SPEEDS["capsize speed"],
            bicycle_capsize_speed(form, use_cache=use_cache, xtol=1e-11),
        )
    )
    return rows


def _rows_disc(form, use_cache):
    return [
        (
            "rolling_disc",
            "critical speed (m=g=r=1)",
            ROLLING_DISC_CRITICAL_SPEED,
            rolling_disc_critical_speed(form, use_cache=use_cache),
        )
    ]


def _rows_andrews(form, use_cache):
    angles, res = andrews_angles(form, use_cache=use_cache)
    rows = [
        ("andrews_squeezer", f"{n}(0.03) [IVP test set]", ref, val)
        for n, ref, val in zip(ANDREWS_ANGLES, ANDREWS_REFERENCE, angles)
    ]
    rows.append(
        (
            "andrews_squeezer",
            "max |holonomic residual|",
            0.0,
            float(res.max_holonomic_residual),
        )
    )
    return rows


_BENCHMARKS = {
    "whipple_bicycle": _rows_bicycle,
    "rolling_disc": _rows_disc,
    "andrews_squeezer": _rows_andrews,
}


_SYSTEMS = {
    "whipple_bicycle": "whipple_bicycle",
    "rolling_disc": "rolling_disc",
    "andrews_squeezer": "andrews_squeezer",
}


def published_vs_computed(
    formulations: Iterable[str] | None = None,
    *,
    benchmarks: Iterable[str] | None = None,
    use_cache: bool = True,
    derive_timeout: float | None = 900.0,
) -> pd.DataFrame:
    """The published numbers beside each formulation's, with differences.

    Parameters
    ----------
    formulations : iterable of str, optional
        Default: every registered formulation.
    benchmarks : iterable of str, optional
        Any of ``"whipple_bicycle"``, ``"rolling_disc"``,
        ``"andrews_squeezer"`` (default all).
    use_cache : bool
        Read and store derivations in the on-disk cache.
    derive_timeout : float or None
        With ``use_cache``, each derivation missing from the cache runs in a
        child process and is given up after this many seconds; the table
        then records the failure (some formulations take very long on the
        bicycle, and that is a result, not something to hide).

    Returns
    -------
    pandas.DataFrame
        Columns ``benchmark, quantity, formulation, published, computed,
        difference, relative, seconds``; a formulation that fails on a
        benchmark gets one row with the error in ``quantity`` and NaN
        numbers.  ``published`` is NaN where the published number is not in
        ``../shared/benchmarks.md`` (the weave and capsize speeds are
        computed only).

    Examples
    --------
    >>> df = published_vs_computed(["kane"], benchmarks=["rolling_disc"],
    ...                            use_cache=False)
    >>> bool(df["difference"].abs().max() < 1e-9)
    True
    """
    names = list(formulations) if formulations is not None else formulation_names()
    wanted = list(benchmarks) if benchmarks is not None else list(_BENCHMARKS)
    bad = [b for b in wanted if b not in _BENCHMARKS]
    if bad:
        raise ValueError(f"unknown benchmarks {bad}; valid: {list(_BENCHMARKS)}")
    out = []
    for bench in wanted:
        for form in names:
            start = time.perf_counter()
            try:
                if use_cache and derive_timeout is not None:
                    _derive_within(form, _SYSTEMS[bench], derive_timeout)
                rows = _BENCHMARKS[bench](form, use_cache)
            except Exception as exc:  # reported in the table, not hidden
                rows = [(bench, f"failed: {type(exc).__name__}: {exc}", np.nan, np.nan)]
            secs = time.perf_counter() - start
            for b, qty, pub, val in rows:
                out.append(
                    {
                        "benchmark": b,
                        "quantity": qty,
                        "formulation": form,
                        "published": float(pub),
                        "computed": float(val),
                        "seconds": secs,
                    }
                )
    df = pd.DataFrame(
        out,
        columns=[
            "benchmark",
            "quantity",
            "formulation",
            "published",
            "computed",
            "seconds",
        ],
    )
    df["difference"] = df["computed"] - df["published"]
    df["relative"] = df["difference"].abs() / df["published"].abs().where(
        df["published"] != 0
    )
    return df[
        [
            "benchmark",
            "quantity",
            "formulation",
            "published",
            "computed",
            "difference",
            "relative",
            "seconds",
        ]
    ]
