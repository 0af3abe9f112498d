"""The four-bar linkage with two point masses (Kane's method examples,
example 2): a one-degree-of-freedom mechanism whose natural description
uses redundant coordinates tied by a closed kinematic loop."""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.types import Expr

from .base import MechanicalSystem
from .catalogue import register_system

__all__ = ["four_bar", "four_bar_closed_form"]

_COORDINATES = ("redundant", "minimal")


def four_bar_closed_form(
    q1: Expr, L1: Expr, L2: Expr, L3: Expr, L4: Expr
) -> tuple[Expr, Expr]:
    """Coupler and rocker angles ``(q2, q3)`` of the four-bar as functions
    of the crank angle ``q1``, on the catalogue's assembly branch.

    The rocker pivot D is at ``L4`` along j from the crank pivot A.  With
    ``w = P1 - D`` (the crank tip seen from D), ``d = |w|`` and
    ``phi = atan2(w_j, w_i)``, the rocker angle is ``q3 = phi + beta``
    where ``cos(beta) = (L3^2 + d^2 - L2^2) / (2 L3 d)`` (law of cosines in
    the triangle D, P1, P2) and ``beta`` in ``[0, pi]``: the branch on which
    the rocker lies counter-clockwise from DP1 (towards +i, the side the
    masses hang on under gravity +i).  The coupler angle follows from the
    loop: ``q2 = atan2(L3 s3 + L4 - L1 s1, L3 c3 - L1 c1)``.

    Works on sympy expressions and on numbers (numpy arrays included).

    Examples
    --------
    >>> import numpy as np
    >>> q2, q3 = four_bar_closed_form(0.4, 0.2, 0.7, 0.5, 0.6)
    >>> res = 0.2*np.cos(0.4) + 0.7*np.cos(q2) - 0.5*np.cos(q3)
    >>> bool(abs(res) < 1e-12)
    True
    """
    symbolic = any(isinstance(x, sm.Basic) for x in (q1, L1, L2, L3, L4))
    if symbolic:
        sin, cos, atan2, acos, sqrt = sm.sin, sm.cos, sm.atan2, sm.acos, sm.sqrt
    else:
        import numpy as np

        sin, cos, atan2, acos, sqrt = (np.sin, np.cos, np.arctan2, np.arccos, np.sqrt)
    wx, wy = L1 * cos(q1), L1 * sin(q1) - L4
    d = sqrt(wx**2 + wy**2)
    q3 = atan2(wy, wx) + acos((L3**2 + d**2 - L2**2) / (2 * L3 * d))
    q2 = atan2(L3 * sin(q3) + L4 - L1 * sin(q1), L3 * cos(q3) - L1 * cos(q1))
    return q2, q3


def _rocker_tip_algebraic(q1, L1, L2, L3, L4):
    """(i, j) components of D->P2 on the catalogue branch, algebraic in
    (cos q1, sin q1): the unit vector D->P1 rotated by beta."""
    wx, wy = L1 * sm.cos(q1), L1 * sm.sin(q1) - L4
    d2 = wx**2 + wy**2
    d = sm.sqrt(d2)
    cb = (L3**2 + d2 - L2**2) / (2 * L3 * d)
    sb = sm.sqrt(1 - cb**2)
    return L3 * (wx * cb - wy * sb) / d, L3 * (wy * cb + wx * sb) / d


@register_system(
    "four_bar", variants=({"coordinates": "redundant"}, {"coordinates": "minimal"})
)
def four_bar(coordinates: str = "redundant") -> MechanicalSystem:
    """Four-bar linkage carrying two point masses, driven by a torque.

    Massless links: crank L1 (pivot A, driven by the constant torque tau
    about k), coupler L2, rocker L3 (pivot D), ground L4 = AD along j.
    Point masses m1 at the crank-coupler joint P1 and m2 at the
    coupler-rocker joint P2.  Gravity g acts along +i (the seed's "i"
    axis points down, j along the ground link, k = i x j out of the
    page).  q1, q2, q3 are the absolute angles of crank, coupler and
    rocker from i, positive about k; on the catalogue branch the rocker
    hangs on the +i side of the ground link::

          A o-------------------o D     --> j
             \\        L4       /
           L1 \\ (q1, tau)     / L3 (rocker, q3)
               o P1 (m1)     /
                `----L2-----o P2 (m2)
          |       (coupler, q2)
          v i  (gravity)

    Loop closure: ``L1 c1 + L2 c2 - L3 c3 = 0``,
    ``L1 s1 + L2 s2 - L3 s3 - L4 = 0``.

    The default lengths (L1, L2, L3, L4) = (0.2, 0.7, 0.5, 0.6) make a
    Grashof crank-rocker (0.2 + 0.7 < 0.5 + 0.6, crank shortest): the
    crank turns fully and the distance DP1 stays in [0.4, 0.8], inside
    (|L2 - L3|, L2 + L3) = (0.2, 1.2), so coupler and rocker are never
    collinear and the loop Jacobian for (q2, q3) is never singular;
    random states therefore cover the whole crank turn (q1 = 0.5 +- 3).

    Parameters
    ----------
    coordinates : {"redundant", "minimal"}
        ``"redundant"`` (default): q1 independent, q2, q3 dependent through
        the two holonomic loop constraints, u1 = q1', u2 = q2', u3 = q3'
        (u2, u3 dependent); ``dependent_solutions`` holds the closed forms
        of :func:`four_bar_closed_form` (branch ``q3 = phi + beta``).
        ``"minimal"``: q1 only, P2 placed through the same closed form.

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> ms = get_system("four_bar")
    >>> ms.degrees_of_freedom, len(ms.holonomic_constraints)
    (1, 2)
    """
    if coordinates not in _COORDINATES:
        raise ValueError(
            f"coordinates must be one of {list(_COORDINATES)}, not {coordinates!r}"
        )
    m1, m2, g = sm.symbols("m1 m2 g", positive=True)
    L1, L2, L3, L4 = sm.symbols("L1 L2 L3 L4", positive=True)
    tau = sm.Symbol("tau")
    N = me.ReferenceFrame("N")
    A = me.Point("A")
    A.set_vel(N, 0)
    D = A.locatenew("D", L4 * N.y)
    D.set_vel(N, 0)
    q1, u1 = me.dynamicsymbols("q1 u1")
    crank = N.orientnew("crank", "Axis", (q1, N.z))
    crank.set_ang_vel(N, u1 * N.z)
    P1 = A.locatenew("P1", L1 * crank.x)
    P1.v2pt_theory(A, N, crank)
    system = me.System(N, A)
    params = {m1: 1.0, m2: 1.0, g: 9.81, L1: 0.2, L2: 0.7, L3: 0.5, L4: 0.6, tau: 1.0}
    q1_0 = 0.5
    num = {L1: 0.2, L2: 0.7, L3: 0.5, L4: 0.6}
    q2_f, q3_f = four_bar_closed_form(q1, L1, L2, L3, L4)
    if coordinates == "redundant":
        q2, q3, u2, u3 = me.dynamicsymbols("q2 q3 u2 u3")
        rocker = N.orientnew("rocker", "Axis", (q3, N.z))
        rocker.set_ang_vel(N, u3 * N.z)
        P2 = D.locatenew("P2", L3 * rocker.x)
        P2.v2pt_theory(D, N, rocker)
        system.add_coordinates(q1)
        system.add_coordinates(q2, q3, independent=False)
        system.add_speeds(u1)
        system.add_speeds(u2, u3, independent=False)
        system.add_kdes(u1 - q1.diff(), u2 - q2.diff(), u3 - q3.diff())
        system.add_holonomic_constraints(
            L1 * sm.cos(q1) + L2 * sm.cos(q2) - L3 * sm.cos(q3),
            L1 * sm.sin(q1) + L2 * sm.sin(q2) - L3 * sm.sin(q3) - L4,
        )
        q2_0, q3_0 = (
            float(v)
            for v in four_bar_closed_form(q1_0, *(num[s] for s in (L1, L2, L3, L4)))
        )
        init = {q1: q1_0, q2: q2_0, q3: q3_0, u1: 0.0}
        dep = {q2: q2_f, q3: q3_f}
    else:
        xi, yj = _rocker_tip_algebraic(q1, L1, L2, L3, L4)
        P2 = D.locatenew("P2", xi * N.x + yj * N.y)
        P2.set_vel(N, P2.pos_from(A).dt(N).xreplace({q1.diff(): u1}))
        system.add_coordinates(q1)
        system.add_speeds(u1)
        system.add_kdes(u1 - q1.diff())
        init = {q1: q1_0, u1: 0.0}
        dep = {}
    system.add_bodies(me.Particle("mass1", P1, m1), me.Particle("mass2", P2, m2))
    system.add_loads(
        me.Torque(crank, tau * N.z),
        me.Force(P1, m1 * g * N.x),
        me.Force(P2, m2 * g * N.x),
    )
    # Gravity along +i and the constant torque are both conservative.
    V = -m1 * g * P1.pos_from(A).dot(N.x) - m2 * g * P2.pos_from(A).dot(N.x) - tau * q1
    return MechanicalSystem(
        name="four_bar",
        system=system,
        parameters=params,
        initial_state=init,
        dependent_solutions=dep,
        potential_energy=V,
        energy_conserved=True,
        description=four_bar.__doc__,
        random_spread=3.0,
        speed_scale=2.0,
        options={"coordinates": coordinates},
    )
