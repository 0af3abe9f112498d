"""Linearization of any formulation's equations about an operating point.

Every formulation returns its equations in its own unknowns (speed rates,
coordinate accelerations with or without multipliers), but all of them meet
the numeric contract ``coordinate_accelerations(t, q, q')``.  The
linearization is therefore formed once, on the contract, in the *minimal*
state of the declaration:

    y = (q_ind, u_ind),      y' = f(t, y),

the independent coordinates and the independent generalized speeds.  A
neighbouring consistent state is built from y exactly as a user would build
it: the dependent coordinates by Newton's method on the holonomic
constraints (``MechanicalSystem.states.solve_dependent_coordinates``), the
dependent speeds from the velocity constraints
(``MechanicalSystem.states.solve_dependent_speeds``), the coordinate rates from the
kinematic differential equations.  The rates of the independent speeds
follow from the accelerations by the time derivative of the declaration's
``u(t, q, q')`` (formed symbolically from the kinematic differential
equations, so it is exact), and the Jacobian ``A = df/dy`` is taken by
central differences refined by two Richardson extrapolations (error of
order h^6), which reaches about 1e-10 relative on smooth equations.  Inputs
are constants of the declaration (torques, forces): ``B = df/dp`` for the
named parameters, at their given values.

Because the route uses nothing but the contract, every registered
formulation is linearized identically and two formulations agree exactly
when their accelerations agree.  The operating point may be a steady motion
(nonzero speeds): ``A`` is the Jacobian of the vector field there, and
``LinearModel.rates`` holds ``f`` itself (zero at an equilibrium).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me
from numpy.typing import ArrayLike, NDArray

from eomcompare.symbolic.plain import plain_replacements, to_plain
from eomcompare.symbolic.text import display_name
from eomcompare.symbolic.types import FloatArray, Symbol

from .model import is_equations_of_motion
from .states import ConstraintError

if TYPE_CHECKING:
    from eomcompare.formulations.base import EquationsOfMotion
    from eomcompare.systems.base import MechanicalSystem

    from .model import NumericModel

__all__ = ["linearize", "LinearModel"]

t = me.dynamicsymbols._t

#: u'(t, q, q', q'', p), a lambdified sympy expression.
_SpeedRate = Callable[..., Any]
_SPEED_RATE_CACHE: weakref.WeakKeyDictionary[MechanicalSystem, _SpeedRate] = (
    weakref.WeakKeyDictionary()
)


@dataclass(frozen=True, eq=False)
class LinearModel:
    """``dy = A dy + B dr`` about an operating point, y = (q_ind, u_ind).

    Attributes
    ----------
    A : ndarray, shape (n, n)
    B : ndarray, shape (n, m)
        Columns for the parameters named as inputs (empty when none).
    states : tuple of str
        Names of y: the independent coordinates, then the independent
        speeds of the declaration.
    inputs : tuple of str
    rates : ndarray, shape (n,)
        ``f`` at the operating point (zero at an equilibrium, nonzero along
        a steady motion for the cyclic coordinates).
    operating_point : tuple
        ``(t, q, q')`` of all coordinates.
    system, formulation : str
    """

    A: FloatArray
    B: FloatArray
    states: tuple[str, ...]
    inputs: tuple[str, ...]
    rates: FloatArray
    operating_point: tuple[float, FloatArray, FloatArray]
    system: str
    formulation: str
    info: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return (
            f"LinearModel(system={self.system!r}, "
            f"formulation={self.formulation!r}, states={list(self.states)}, "
            f"inputs={list(self.inputs)})"
        )

    def _indices(self, states: Sequence[str | Symbol]) -> list[int]:
        idx = []
        for s in states:
            s = display_name(s)
            if s not in self.states:
                raise ValueError(
                    f"unknown state {s!r}; valid states: {list(self.states)}"
                )
            idx.append(self.states.index(s))
        return idx

    def submodel(self, states: Sequence[str | Symbol]) -> LinearModel:
        """The rows and columns of the named states only.

        Meaningful when the remaining states do not feed back into these
        (cyclic coordinates, or couplings that vanish by symmetry at the
        operating point); :meth:`coupling` measures that.
        """
        idx = self._indices(states)
        return LinearModel(
            A=self.A[np.ix_(idx, idx)],
            B=self.B[idx, :],
            states=tuple(self.states[i] for i in idx),
            inputs=self.inputs,
            rates=self.rates[idx],
            operating_point=self.operating_point,
            system=self.system,
            formulation=self.formulation,
            info=self.info,
        )

    def coupling(self, states: Sequence[str | Symbol]) -> float:
        """Largest entry of A coupling the other states into ``states``."""
        idx = self._indices(states)
        rest = [i for i in range(len(self.states)) if i not in idx]
        if not rest:
            return 0.0
        return float(np.max(np.abs(self.A[np.ix_(idx, rest)])))

    def eigenvalues(
        self, states: Sequence[str | Symbol] | None = None
    ) -> NDArray[np.complex128]:
        """Eigenvalues of A (of the named states' block), sorted by real
        part, then imaginary part.

        Examples
        --------
        >>> from eomcompare.formulations import get_formulation
        >>> from eomcompare.numeric.linearize import linearize
        >>> eom = get_formulation("kane").derive("n_link_pendulum")
        >>> import numpy as np
        >>> q = np.array([-np.pi / 2, 0.0, 0.0])   # hanging straight down
        >>> lin = linearize(eom, (0.0, q, np.zeros(3)))
        >>> bool(np.allclose(lin.eigenvalues().real, 0.0, atol=1e-6))
        True
        """
        A = self.A if states is None else self.submodel(states).A
        ev = np.asarray(np.linalg.eigvals(A), dtype=complex)
        return ev[np.lexsort((ev.imag, ev.real))]


def _speed_rate_function(ms: MechanicalSystem) -> _SpeedRate:
    """u'(t, q, q', q'', p) from the declaration's u(t, q, q'), exact."""
    if ms in _SPEED_RATE_CACHE:
        return _SPEED_RATE_CACHE[ms]
    q = list(ms.coordinates)
    kin = ms.kinematics
    rep, s = plain_replacements(q, accelerations=True)
    T, Q, QD, QDD = s["T"], s["Q"], s["QD"], s["QDD"]
    P = list(ms.parameters)
    u_plain = to_plain([kin.u_of_qdot[ui] for ui in ms.speeds], rep, ms)
    ud = (
        u_plain.jacobian(Q) * sm.Matrix(QD)
        + u_plain.jacobian(QD) * sm.Matrix(QDD)
        + u_plain.diff(T)
    )
    fn: _SpeedRate = sm.lambdify([T, list(Q), list(QD), list(QDD), P], ud, cse=True)
    _SPEED_RATE_CACHE[ms] = fn
    return fn


def _richardson_jacobian(
    f: Callable[[FloatArray], FloatArray],
    y0: FloatArray,
    steps: Sequence[float] | FloatArray,
    levels: int = 3,
) -> tuple[FloatArray, FloatArray]:
    """Central differences in each column, refined by Richardson."""
    f0 = f(y0)
    J = np.empty((len(f0), len(y0)))
    for j, h in enumerate(steps):
        table = []
        for k in range(levels):
            hk = h / 2**k
            e = np.zeros_like(y0)
            e[j] = hk
            table.append((f(y0 + e) - f(y0 - e)) / (2 * hk))
        # Central differences have even error terms: h^2, h^4, ...
        for order in range(1, levels):
            fac = 4.0**order
            table = [
                (fac * table[k + 1] - table[k]) / (fac - 1)
                for k in range(len(table) - 1)
            ]
        J[:, j] = table[0]
    return f0, J


def linearize(
    eom: EquationsOfMotion,
    operating_point: tuple[float, ArrayLike, ArrayLike],
    *,
    inputs: Sequence[str | Symbol] | None = None,
    parameters: Mapping[Any, float] | None = None,
    step: float = 1e-3,
    tol: float = 1e-8,
    backend: str = "lambdify",
) -> LinearModel:
    """Linearize ``eom`` about ``operating_point`` in the minimal state.

    Parameters
    ----------
    eom : EquationsOfMotion
        Any formulation's equations (only the numeric contract is used).
    operating_point : tuple
        ``(t, q, q')``: time, all coordinates and their rates, consistent
        with every constraint (a steady motion may have nonzero rates).
    inputs : sequence of str, Symbol or function of time, optional
        Constants of the declaration treated as inputs (e.g. applied
        torques), or functions of time given in ``specified``
        (``F = dynamicsymbols('F')``, as sympy's linearizer takes its r
        vector; :mod:`eomcompare.formulations.inputs`); ``B`` gets one column per
        input, at the value given in ``parameters`` (or the default, or the
        specified function's value at the operating point's time).
    parameters : mapping, optional
        Parameter values overriding the declaration's defaults.
    step : float
        Largest finite-difference step (scaled by ``max(1, |y_j|)``).
    tol : float
        Largest constraint residual accepted at the operating point.
    backend : str
        Numeric backend of the contract (``EquationsOfMotion.numeric``).

    Returns
    -------
    LinearModel

    Raises
    ------
    TypeError
        When ``eom`` is not an :class:`EquationsOfMotion`.
    ValueError
        For an operating point of the wrong size or an unknown input.
    ConstraintError
        When the operating point violates a constraint.

    Examples
    --------
    >>> import numpy as np
    >>> from eomcompare.formulations import get_formulation
    >>> from eomcompare.numeric.linearize import linearize
    >>> eom = get_formulation("kane").derive("double_pendulum")
    >>> lin = linearize(eom, (0.0, np.zeros(2), np.zeros(2)))
    >>> lin.states
    ('theta1', 'theta2', 'omega1', 'omega2')
    >>> bool(np.all(np.abs(lin.eigenvalues().real) < 1e-6))
    True
    """
    if not is_equations_of_motion(eom):
        raise TypeError(
            f"eom must be an EquationsOfMotion (from Formulation.derive), not "
            f"{type(eom).__name__}"
        )
    ms = eom.system
    try:
        t0, q0, qd0 = operating_point
    except (TypeError, ValueError):
        raise ValueError(
            "operating_point must be a tuple (t, q, qd) of the time, all "
            "coordinates and their rates"
        ) from None
    t0 = float(t0)
    q0 = np.asarray(q0, dtype=float).ravel()
    qd0 = np.asarray(qd0, dtype=float).ravel()
    n = len(ms.coordinates)
    if q0.shape != (n,) or qd0.shape != (n,):
        raise ValueError(
            f"operating point of {ms.name!r} needs {n} coordinates "
            f"{[display_name(c) for c in ms.coordinates]} and {n} rates, got "
            f"{q0.size} and {qd0.size}"
        )
    # Inputs given as functions of time (specified) become constants.
    eom, inputs = eom.with_constant_inputs(inputs, t0, parameters)
    ms = eom.system
    params = dict(parameters or {})
    by_name = {str(k): k for k in ms.parameters}
    input_syms = []
    for r in inputs or ():
        key = r if r in ms.parameters else by_name.get(str(r))
        if key is None:
            raise ValueError(
                f"unknown input {r!r} for system {ms.name!r}; inputs are "
                f"parameters or specified functions of time, valid: "
                f"{sorted(by_name) + sorted(display_name(k) for k in ms.specified)}"
            )
        input_syms.append(key)
    p_base = ms.states.parameter_vector(params)
    values = dict(zip(ms.parameters, p_base))
    hol = (
        ms.states.holonomic_residual(t0, q0, values)
        if ms.q_dep or ms.holonomic_constraints
        else np.zeros(0)
    )
    vel = ms.states.velocity_residual(t0, q0, qd0, values)
    worst = max([0.0] + list(np.abs(hol)) + list(np.abs(vel)))
    if worst > tol:
        raise ConstraintError(
            f"system {ms.name!r}: the operating point violates the "
            f"constraints (largest residual {worst:.3g} > tol {tol:g}); "
            f"solve the dependent coordinates and speeds first"
        )

    nq, nu = len(ms.q_ind), len(ms.u_ind)
    ind_speeds = slice(0, nu)
    u0 = ms.states.speeds_from_rates(t0, q0, qd0, values)
    y0 = np.concatenate([q0[:nq], u0[ind_speeds]])
    speed_rate = _speed_rate_function(ms)
    models: dict[tuple[float, ...], NumericModel] = {}

    def field_at(y: FloatArray, pvals: dict[Any, float]) -> FloatArray:
        key = tuple(pvals.values())
        if key not in models:
            models[key] = eom.numeric(pvals, backend=backend)
        model = models[key]
        p = model.p
        q = ms.states.solve_dependent_coordinates(t0, y[:nq], q0[nq:], pvals)
        u = ms.states.solve_dependent_speeds(t0, q, y[nq:], pvals)
        qd = ms.states.rates_from_speeds(t0, q, u, pvals)
        qdd = model.coordinate_accelerations(t0, q, qd)
        ud = np.asarray(speed_rate(t0, q, qd, qdd, p), dtype=float).ravel()
        return np.concatenate([qd[:nq], ud[ind_speeds]])

    steps = step * np.maximum(1.0, np.abs(y0))
    f0, A = _richardson_jacobian(lambda y: field_at(y, values), y0, steps)
    B = np.zeros((len(y0), len(input_syms)))
    for k, key in enumerate(input_syms):
        h = step * max(1.0, abs(values[key]))

        def along(s: FloatArray, key: Hashable = key) -> FloatArray:
            pv = dict(values)
            pv[key] = values[key] + s[0]
            return field_at(y0, pv)

        _, col = _richardson_jacobian(along, np.zeros(1), [h])
        B[:, k] = col[:, 0]
    states = tuple(display_name(x) for x in (*ms.q_ind, *ms.u_ind))
    return LinearModel(
        A=A,
        B=B,
        states=states,
        inputs=tuple(str(s) for s in input_syms),
        rates=f0,
        operating_point=(t0, q0.copy(), qd0.copy()),
        system=ms.name,
        formulation=eom.formulation,
        info={"constraint_residual": worst, "step": step},
    )
