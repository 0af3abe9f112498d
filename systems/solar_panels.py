"""Deployment of a two-panel solar array (Yudintsev's Kane's-method
example, ``kane_method_solar_panels_ru.txt``, equations (26), (27))."""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from .base import MechanicalSystem
from .catalogue import register_system


@register_system("solar_panels")
def solar_panels(damped: bool = False) -> MechanicalSystem:
    """Two-panel solar array unfolding in a plane, without gravity.

    Panel 1 (uniform rod, mass m1, central moment of inertia J1) is hinged to
    the spacecraft at the fixed point O; its centre C1 is at OC1 = L1 and its
    far end A at OA = 2 L1.  Panel 2 (m2, J2) is hinged to panel 1 at A, its
    centre C2 at AC2 = L2.  ``phi1`` is the absolute angle of panel 1;
    ``phi2`` is the angle of panel 2 relative to panel 1, measured so that
    the panel-2 frame is at the absolute angle ``phi1 + pi + phi2`` (the
    document's dot products e_i^(1).e_j^(2) and velocities (13)-(17); its
    printed matrix A^12 has the opposite sign convention)::

        stowed (phi1 = pi/2, phi2 = 0)      deployed (phi1 = 0, phi2 = pi)

              A                             O=====C1=====A=====C2=====
              ||  panel 2 folded            |   panel 1       panel 2
              |C2                           spacecraft
              C1
              |  panel 1
              O  (spacecraft)

    Loads: the spacecraft's torsion spring acts on panel 1 at O with torque
    T1; the hinge spring at A acts on panel 2 with T12 and on panel 1 with
    -T12 (all about the plane normal z), so that T1 and T12 are the
    generalized active forces of phi1 and phi2, as in (26), (27).  The spring
    laws chosen here are linear torsion springs that are unstressed in the
    deployed state, hence preloaded (wound by pi/2 and pi) when stowed::

        T1  = -k1  * phi1         [- b1  * phi1']
        T12 = -k12 * (phi2 - pi)  [- b12 * phi2']

    The viscous terms in brackets are present only with ``damped=True``;
    without them ``T + V`` with ``V = k1 phi1**2 / 2 + k12 (phi2 - pi)**2 / 2``
    is conserved.  Speeds are the coordinate rates: u1 = phi1', u2 = phi2'.

    Parameters
    ----------
    damped : bool, optional
        Add viscous damping b1, b12 to the hinge springs (default False).

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> ms = get_system("solar_panels")
    >>> ms.degrees_of_freedom, ms.energy_conserved
    (2, True)
    """
    if not isinstance(damped, bool):
        raise TypeError(f"damped must be a bool, not {type(damped).__name__}")
    phi1, phi2 = me.dynamicsymbols("phi1 phi2")
    u1, u2 = me.dynamicsymbols("u1 u2")
    m1, m2, J1, J2, L1, L2, k1, k12 = sm.symbols(
        "m1 m2 J1 J2 L1 L2 k1 k12", positive=True
    )
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P1 = N.orientnew("P1", "Axis", (phi1, N.z))
    P1.set_ang_vel(N, u1 * N.z)
    P2 = P1.orientnew("P2", "Axis", (sm.pi + phi2, P1.z))
    P2.set_ang_vel(P1, u2 * P1.z)
    C1 = O.locatenew("C1", L1 * P1.x)
    A = O.locatenew("A", 2 * L1 * P1.x)
    C2 = A.locatenew("C2", L2 * P2.x)
    C1.v2pt_theory(O, N, P1)
    A.v2pt_theory(O, N, P1)
    C2.v2pt_theory(A, N, P2)
    panel1 = me.RigidBody("panel1", C1, P1, m1, (me.inertia(P1, 0, J1, J1), C1))
    panel2 = me.RigidBody("panel2", C2, P2, m2, (me.inertia(P2, 0, J2, J2), C2))

    T1 = -k1 * phi1
    T12 = -k12 * (phi2 - sm.pi)
    params = {
        m1: 10.0,
        m2: 10.0,
        L1: 0.5,
        L2: 0.5,
        # Uniform panels of lengths 2 L1, 2 L2: J = m (2 L)**2 / 12.
        J1: 10.0 * 1.0**2 / 12,
        J2: 10.0 * 1.0**2 / 12,
        k1: 2.0,
        k12: 2.0,
    }
    if damped:
        b1, b12 = sm.symbols("b1 b12", positive=True)
        T1 = T1 - b1 * u1
        T12 = T12 - b12 * u2
        params |= {b1: 0.5, b12: 0.5}

    system = me.System(N, O)
    system.add_coordinates(phi1, phi2)
    system.add_speeds(u1, u2)
    system.add_kdes(u1 - phi1.diff(), u2 - phi2.diff())
    system.add_bodies(panel1, panel2)
    system.add_loads(me.Torque(P1, (T1 - T12) * N.z), me.Torque(P2, T12 * N.z))
    V = k1 * phi1**2 / 2 + k12 * (phi2 - sm.pi) ** 2 / 2
    return MechanicalSystem(
        name="solar_panels",
        system=system,
        parameters=params,
        initial_state={phi1: sm.pi / 2, phi2: 0.0, u1: 0.0, u2: 0.0},
        potential_energy=V,
        energy_conserved=not damped,
        description=solar_panels.__doc__,
        # The mass matrix is regular everywhere: sample widely.
        random_spread={phi1: 1.5, phi2: 3.0},
        options={"damped": damped},
    )
