"""Crank and slider with a spring: the exercise closing
``kane_method_solar_panels_ru.txt``, in one or in redundant coordinates."""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from .base import MechanicalSystem
from .catalogue import register_system

_COORDINATES = ("redundant", "minimal")


def _rod_inertia(frame, m, l):
    """Thin uniform rod along the body x axis, central inertia."""
    return me.inertia(frame, 0, m * l**2 / 12, m * l**2 / 12)


@register_system(
    "crank_slider", variants=({"coordinates": "redundant"}, {"coordinates": "minimal"})
)
def crank_slider(coordinates: str = "redundant") -> MechanicalSystem:
    """Crank OA, connecting rod AB and slider B on a straight guide through
    O, in a vertical plane with gravity -y; 1 degree of freedom.

    OA and AB are uniform rods of equal mass m and length l; the slider B is
    a point mass mB moving along the horizontal guide (the x axis through
    O).  A constant force F pushes the slider along +x, and a spring of
    stiffness c and free length l0, anchored at O, acts on it along the
    guide: ``F_B = (F - c (x - l0)) x_hat``.  The text gives no figure;
    this is the catalogue's reading of it::

              y
              ^       A
              |      / \\
              |   l /   \\ l
              |    /phi  \\
              O---+-------B=[slider]-->  F      (guide: x axis)
              |~~~~~~~ spring c ~~~~~|

    ``phi`` is the crank angle from +x, ``psi`` the rod angle from +x and
    ``x`` the slider position.  With OA = AB the loop closes at
    ``psi = -phi`` and ``x = 2 l cos(phi)`` (the branch through the
    stretched-out configuration phi = 0).

    Parameters
    ----------
    coordinates : {"redundant", "minimal"}
        ``"redundant"`` (default): coordinates (phi, psi, x) with the two
        holonomic loop constraints ``l cos(phi) + l cos(psi) - x = 0`` and
        ``l sin(phi) + l sin(psi) = 0``, speeds (omega, omega_r, v) with
        omega_r, v dependent, and the explicit solutions
        ``psi = -phi``, ``x = 2 l cos(phi)`` as ``dependent_solutions``.
        The dependent speeds cannot be solved where ``cos(psi) = 0``
        (phi = +-pi/2, B at O, where the two branches of the loop meet).
        ``"minimal"``: the one coordinate phi, everything expressed in it.

    Notes
    -----
    ``F`` is constant, so it has the potential ``-F x``; with it the
    potential energy ``V = m g l sin(phi) + c (x - l0)**2 / 2 - F x`` makes
    ``T + V`` a constant of the motion.

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> ms = get_system("crank_slider", coordinates="minimal")
    >>> ms.degrees_of_freedom, len(ms.coordinates)
    (1, 1)
    """
    if not isinstance(coordinates, str):
        raise TypeError(f"coordinates must be a str, not {type(coordinates).__name__}")
    if coordinates not in _COORDINATES:
        raise ValueError(
            f"coordinates must be one of {list(_COORDINATES)}, not {coordinates!r}"
        )
    phi, omega = me.dynamicsymbols("phi omega")
    m, mB, l, g, F, c, l0 = sm.symbols("m m_B l g F c l0", positive=True)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    C = N.orientnew("C", "Axis", (phi, N.z))  # crank
    C.set_ang_vel(N, omega * N.z)
    A = O.locatenew("A", l * C.x)
    G1 = O.locatenew("G1", l / 2 * C.x)
    A.v2pt_theory(O, N, C)
    G1.v2pt_theory(O, N, C)

    system = me.System(N, O)
    if coordinates == "redundant":
        psi, x = me.dynamicsymbols("psi x")
        omega_r, v = me.dynamicsymbols("omega_r v")
        R = N.orientnew("R", "Axis", (psi, N.z))
        R.set_ang_vel(N, omega_r * N.z)
        B = O.locatenew("B", x * N.x)
        B.set_vel(N, v * N.x)
        system.add_coordinates(phi)
        system.add_coordinates(psi, x, independent=False)
        system.add_speeds(omega)
        system.add_speeds(omega_r, v, independent=False)
        system.add_kdes(omega - phi.diff(), omega_r - psi.diff(), v - x.diff())
        system.add_holonomic_constraints(
            l * sm.cos(phi) + l * sm.cos(psi) - x, l * sm.sin(phi) + l * sm.sin(psi)
        )
        dependent = {psi: -phi, x: 2 * l * sm.cos(phi)}
        initial = {phi: 0.5, omega: 0.0}
        x_of_q = x
    else:
        R = N.orientnew("R", "Axis", (-phi, N.z))
        R.set_ang_vel(N, -omega * N.z)
        # B = A + l R.x; written directly so its velocity has no y part.
        B = O.locatenew("B", 2 * l * sm.cos(phi) * N.x)
        B.set_vel(N, -2 * l * sm.sin(phi) * omega * N.x)
        system.add_coordinates(phi)
        system.add_speeds(omega)
        system.add_kdes(omega - phi.diff())
        dependent = {}
        initial = {phi: 0.5, omega: 0.0}
        x_of_q = 2 * l * sm.cos(phi)
    G2 = A.locatenew("G2", l / 2 * R.x)
    G2.v2pt_theory(A, N, R)
    crank = me.RigidBody("crank", G1, C, m, (_rod_inertia(C, m, l), G1))
    rod = me.RigidBody("rod", G2, R, m, (_rod_inertia(R, m, l), G2))
    slider = me.Particle("slider", B, mB)
    system.add_bodies(crank, rod, slider)
    system.add_loads(
        me.Force(G1, -m * g * N.y),
        me.Force(G2, -m * g * N.y),
        me.Force(B, (F - c * (x_of_q - l0)) * N.x),
    )
    V = (
        m * g * (G1.pos_from(O).dot(N.y) + G2.pos_from(O).dot(N.y))
        + c * (x_of_q - l0) ** 2 / 2
        - F * x_of_q
    )
    params = {m: 1.0, mB: 0.5, l: 0.5, g: 9.81, F: 5.0, c: 50.0, l0: 0.6}
    return MechanicalSystem(
        name="crank_slider",
        system=system,
        parameters=params,
        initial_state=initial,
        dependent_solutions=dependent,
        potential_energy=V,
        energy_conserved=True,
        description=crank_slider.__doc__,
        # Crank angles in (-0.4, 1.4) rad: clear of the branch point pi/2.
        random_spread=0.9,
        speed_scale=2.0,
        options={"coordinates": coordinates},
    )
