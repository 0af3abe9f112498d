"""Andrews' squeezing mechanism, the seven-body planar benchmark of the IVP
test set (Hairer & Wanner, Solving ODEs II, VII.7), declared from its
geometry."""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from .base import MechanicalSystem
from .catalogue import register_system

#: The test set's parameters (SI units).
ANDREWS_PARAMETERS = {
    "m1": 0.04325,
    "m2": 0.00365,
    "m3": 0.02373,
    "m4": 0.00706,
    "m5": 0.07050,
    "m6": 0.00706,
    "m7": 0.05498,
    "i1": 2.194e-6,
    "i2": 4.410e-7,
    "i3": 5.255e-6,
    "i4": 5.667e-7,
    "i5": 1.169e-5,
    "i6": 5.667e-7,
    "i7": 1.912e-5,
    "xa": -0.06934,
    "ya": -0.00227,
    "xb": -0.03635,
    "yb": 0.03273,
    "xc": 0.014,
    "yc": 0.072,
    "c0": 4530.0,
    "d": 0.028,
    "da": 0.0115,
    "e": 0.02,
    "ea": 0.01421,
    "rr": 0.007,
    "ra": 0.00092,
    "l0": 0.07785,
    "ss": 0.035,
    "sa": 0.01874,
    "sb": 0.01043,
    "sc": 0.018,
    "sd": 0.02,
    "ta": 0.02308,
    "tb": 0.00916,
    "u": 0.04,
    "ua": 0.01228,
    "ub": 0.00449,
    "zf": 0.02,
    "zt": 0.04,
    "fa": 0.01421,
    "mom": 0.033,
}

#: The test set's consistent initial angles (beta, Theta, gamma, Phi,
#: delta, Omega, epsilon); all angular velocities are zero.
ANDREWS_INITIAL_ANGLES = (
    -0.0617138900142764496358948458001,
    0.0,
    0.455279819163070380255912382449,
    0.222668390165885884674473185609,
    0.487364979543842550225598953530,
    -0.222668390165885884674473185609,
    1.23054744454982119249735015568,
)


@register_system("andrews_squeezer", heavy=True)
def andrews_squeezer() -> MechanicalSystem:
    """Andrews' squeezing mechanism: seven rigid bodies in a plane, a drive
    torque ``mom`` on the crank and a spring (stiffness ``c0``, free length
    ``l0``); no gravity.

    Geometry (plane x, y; e(a) = (cos a, sin a), n(a) = (sin a, -cos a);
    O the origin, A = (xa, ya), B = (xb, yb), C = (xc, yc) fixed)::

        body 1 (crank)  turns about O by beta; the joint P = O + rr e(beta);
                        mass centre O + ra e(beta)
        body 2 (rod)    at P, absolute angle beta + Theta; its far end
                        Q = P - d e(beta + Theta); mass centre P - da e(..)
        body 3          turns about B by gamma; Q = B + ss n(gamma); the
                        spring point D = B + sd e(gamma) + sc n(gamma);
                        mass centre B + sb e(gamma) + sa n(gamma)
        body 5          turns about A by delta; the joint J5 = A + zt e(delta);
                        mass centre A + ta e(delta) + tb e(delta + pi/2)
        body 4          at J5, absolute angle Phi + delta;
                        Q = J5 + e n(Phi + delta); mass centre at ea from Q
        body 7          turns about A by epsilon; J7 = A + u n(epsilon);
                        mass centre A + ua e(eps) + ub e(eps + pi/2)
        body 6          at J7, absolute angle Omega + epsilon;
                        Q = J7 + zf e(Omega + epsilon); mass centre at fa
                        from Q

    The four chains meet at Q: six holonomic loop constraints (the x, y
    components of Q from the crank side equal to Q from bodies 3, 4 and 6),
    exactly the test set's g(q) = 0.  The spring pulls D towards C with
    force ``-c0 (L - l0) (D - C) / L``, L = |D - C|.  This reproduces the
    test set's mass matrix and forces (the directions of the mass centres
    of bodies 1, 3, 5 and 7, which turn about fixed points, do not enter
    the dynamics: only the distances do).

    Coordinates: beta (independent: the driven crank), Theta, gamma, Phi,
    delta, Omega, epsilon (dependent); one speed per coordinate, equal to
    its rate.  T + V - mom beta is conserved (V the spring's energy).

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> ms = get_system("andrews_squeezer")
    >>> len(ms.coordinates), len(ms.holonomic_constraints)
    (7, 6)
    """
    names = ("beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon")
    q = me.dynamicsymbols(" ".join(names))
    u = me.dynamicsymbols(" ".join(f"{n}_u" for n in names))
    beta, Theta, gamma, Phi, delta, Omega, epsilon = q
    P = {k: sm.Symbol(k, real=True) for k in ANDREWS_PARAMETERS}
    rd = {qi.diff(): ui for qi, ui in zip(q, u)}

    N = me.ReferenceFrame("N")
    K1 = N.orientnew("K1", "Axis", (beta, N.z))
    K2 = K1.orientnew("K2", "Axis", (Theta, K1.z))
    K3 = N.orientnew("K3", "Axis", (gamma, N.z))
    K5 = N.orientnew("K5", "Axis", (delta, N.z))
    K4 = K5.orientnew("K4", "Axis", (Phi, K5.z))
    K7 = N.orientnew("K7", "Axis", (epsilon, N.z))
    K6 = K7.orientnew("K6", "Axis", (Omega, K7.z))
    for K in (K1, K2, K3, K4, K5, K6, K7):
        K.set_ang_vel(N, K.ang_vel_in(N).xreplace(rd))

    def n_dir(K):
        """n(a) = (sin a, -cos a) for the frame turned by a."""
        return -K.y

    O = me.Point("O")
    O.set_vel(N, 0)
    A = O.locatenew("A", P["xa"] * N.x + P["ya"] * N.y)
    B = O.locatenew("B", P["xb"] * N.x + P["yb"] * N.y)
    C = O.locatenew("C", P["xc"] * N.x + P["yc"] * N.y)
    for fixed in (A, B, C):
        fixed.set_vel(N, 0)
    # Chain of the crank.
    Pj = O.locatenew("P", P["rr"] * K1.x)
    Q = Pj.locatenew("Q", -P["d"] * K2.x)
    G1 = O.locatenew("G1", P["ra"] * K1.x)
    G2 = Pj.locatenew("G2", -P["da"] * K2.x)
    # Body 3 about B.
    Q3 = B.locatenew("Q3", P["ss"] * n_dir(K3))
    D = B.locatenew("D", P["sd"] * K3.x + P["sc"] * n_dir(K3))
    G3 = B.locatenew("G3", P["sb"] * K3.x + P["sa"] * n_dir(K3))
    # Bodies 5 and 4 from A.
    J5 = A.locatenew("J5", P["zt"] * K5.x)
    Q4 = J5.locatenew("Q4", P["e"] * n_dir(K4))
    G5 = A.locatenew("G5", P["ta"] * K5.x + P["tb"] * K5.y)
    G4 = J5.locatenew("G4", (P["e"] - P["ea"]) * n_dir(K4))
    # Bodies 7 and 6 from A.
    J7 = A.locatenew("J7", P["u"] * n_dir(K7))
    Q6 = J7.locatenew("Q6", P["zf"] * K6.x)
    G7 = A.locatenew("G7", P["ua"] * K7.x + P["ub"] * K7.y)
    G6 = J7.locatenew("G6", (P["zf"] - P["fa"]) * K6.x)

    Pj.v2pt_theory(O, N, K1)
    G1.v2pt_theory(O, N, K1)
    G2.v2pt_theory(Pj, N, K2)
    D.v2pt_theory(B, N, K3)
    G3.v2pt_theory(B, N, K3)
    J5.v2pt_theory(A, N, K5)
    G5.v2pt_theory(A, N, K5)
    G4.v2pt_theory(J5, N, K4)
    J7.v2pt_theory(A, N, K7)
    G7.v2pt_theory(A, N, K7)
    G6.v2pt_theory(J7, N, K6)

    holonomic = []
    for other in (Q3, Q4, Q6):
        gap = Q.pos_from(O) - other.pos_from(O)
        holonomic += [gap.dot(N.x), gap.dot(N.y)]

    bodies = []
    for i, (G, K) in enumerate(
        ((G1, K1), (G2, K2), (G3, K3), (G4, K4), (G5, K5), (G6, K6), (G7, K7)), start=1
    ):
        bodies.append(
            me.RigidBody(
                f"body{i}", G, K, P[f"m{i}"], (me.inertia(K, 0, 0, P[f"i{i}"]), G)
            )
        )

    spring = D.pos_from(C)
    L = sm.sqrt(spring.dot(N.x) ** 2 + spring.dot(N.y) ** 2)
    loads = [
        me.Torque(K1, P["mom"] * N.z),
        me.Force(D, -P["c0"] * (L - P["l0"]) / L * spring),
    ]

    system = me.System(N, O)
    system.add_coordinates(beta)
    system.add_coordinates(*q[1:], independent=False)
    system.add_speeds(u[0])
    system.add_speeds(*u[1:], independent=False)
    system.add_kdes(*[ui - qi.diff() for qi, ui in zip(q, u)])
    system.add_holonomic_constraints(*holonomic)
    system.add_bodies(*bodies)
    system.add_loads(*loads)
    init = dict(zip(q, ANDREWS_INITIAL_ANGLES)) | {ui: 0.0 for ui in u}
    return MechanicalSystem(
        name="andrews_squeezer",
        system=system,
        parameters={P[k]: v for k, v in ANDREWS_PARAMETERS.items()},
        initial_state=init,
        potential_energy=P["c0"] / 2 * (L - P["l0"]) ** 2,
        energy_conserved=False,
        description=andrews_squeezer.__doc__,
        random_spread=0.05,
        speed_scale=1.0,
    )
