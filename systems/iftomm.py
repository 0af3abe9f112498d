"""Four problems of the IFToMM library of computational benchmark problems
for multibody dynamics: A01 simple pendulum, A02 N-four-bar mechanism, A04
Bricard's mechanism and A05 stiff flyball governor (A03, Andrews' squeezer,
is :mod:`eomcompare.systems.andrews_squeezer`).

Sources: González, Dopico, Lugrís, Cuadrado, "A benchmarking system for MBS
simulation software: problem standardization and performance measurement",
Multibody System Dynamics 16 (2006), whose specifications the A Coruña
laboratory publishes as XML files; their transcription in
``shared/benchmarks.md``; and the OpenSim port of the library,
``RehabEngGroup/MBSbenchmarksInOpenSim`` (``help/benchmarks/A0*.rst`` for
the values, ``src/A0*/createModel.cpp`` for the geometry and initial
positions, ``src/A04*/simulate.cpp`` for the point A04 reports).  Every
value the sources leave open is stated where it is chosen.

Each entry is registered with its :class:`~eomcompare.systems.catalogue.Benchmark`
facts (simulated time, reference quantities, error measure, accuracy
levels) and declares the reference quantities as ``observables`` of the
system, expressions in the coordinates.
"""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from .base import MechanicalSystem
from .catalogue import Benchmark, register_system

__all__ = [
    "iftomm_pendulum",
    "n_four_bar",
    "bricard",
    "flyball_governor",
    "A01_PARAMETERS",
    "A02_PARAMETERS",
    "A04_PARAMETERS",
    "A05_PARAMETERS",
]

t = me.dynamicsymbols._t

#: The library's two accuracy levels (low, high), as in every problem seen.
ACCURACY = (1e-1, 1e-3)

#: A01: lumped mass, link length, gravity (SI units).
A01_PARAMETERS = {"m": 1.0, "L": 1.0, "g": 9.81}
#: A02: every link's mass and length, gravity; initial x-velocity of B0.
A02_PARAMETERS = {"m": 1.0, "L": 1.0, "g": 9.81}
A02_B0_SPEED = 1.0
#: A04: every rod's mass, length and square section side; gravity.
A04_PARAMETERS = {"m": 1.0, "L": 1.0, "a": 0.1, "g": 9.81}
#: A05: density, rod/shaft section side and length, slider side, point
#: masses, spring stiffness, damping and rest length, gravity, shaft speed.
A05_PARAMETERS = {
    "rho": 3000.0,
    "b": 0.01,
    "l": 1.0,
    "c": 0.1,
    "mp": 5.0,
    "K": 8.0e5,
    "C": 4.0e4,
    "L0": 0.5,
    "g": 9.81,
    "omega": 2 * sm.pi.evalf(17),
}
#: A05's initial slider position s and rod angle alpha (below horizontal).
A05_S0 = 0.5
A05_ALPHA0 = float(sm.pi / 6)


def _box_inertia(frame, m, length, side, axis):
    """Central inertia of a uniform box ``length`` x ``side`` x ``side``
    fixed in ``frame``, its long edge along the unit vector ``axis``."""
    along = me.outer(axis, axis)
    return m * 2 * side**2 / 12 * along + m * (length**2 + side**2) / 12 * (
        me.inertia(frame, 1, 1, 1) - along
    )


# ----------------------------------------------------------------------
# A01
# ----------------------------------------------------------------------
@register_system(
    "iftomm_pendulum",
    benchmark=Benchmark(
        problem="A01",
        title="simple pendulum",
        t_final=2000.0,
        reference=("x_P1", "y_P1"),
        error_measure=(
            "maximum absolute error of the coordinates of P1 over the "
            "output steps, against the reference solution"
        ),
        output_steps=4000,
        energy_conserved=True,
    ),
)
def iftomm_pendulum() -> MechanicalSystem:
    """IFToMM A01, the simple pendulum: a lumped mass ``m`` = 1 kg at P1 on
    a massless link of length ``L`` = 1 m pivoted at the origin O, gravity
    ``g`` = 9.81 m/s^2 along -y; released at rest with the link
    horizontal, P1 at (+1, 0); 2,000 s (a test of long-time accuracy).

    Coordinate: the link's angle ``theta`` from +x, positive towards +y
    (one coordinate: the library's natural coordinates x, y of P1 with the
    constraint x^2 + y^2 = L^2 could not take either as independent, both
    having a vertical tangent on the circle)::

            O o-------o P1 (m)   theta = 0 at the start
              |
              v g

    The exact period from the horizontal is ``4 sqrt(L/g) K(1/2)`` (K the
    complete elliptic integral of the first kind, parameter m = 1/2).
    """
    m, L, g = (sm.Symbol(k, positive=True) for k in A01_PARAMETERS)
    theta, omega = me.dynamicsymbols("theta omega")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    B = N.orientnew("B", "Axis", (theta, N.z))
    B.set_ang_vel(N, omega * N.z)
    P1 = O.locatenew("P1", L * B.x)
    P1.v2pt_theory(O, N, B)
    system = me.System(N, O)
    system.add_coordinates(theta)
    system.add_speeds(omega)
    system.add_kdes(omega - theta.diff())
    system.add_bodies(me.Particle("mass", P1, m))
    system.add_loads(me.Force(P1, -m * g * N.y))
    r = P1.pos_from(O)
    return MechanicalSystem(
        name="iftomm_pendulum",
        system=system,
        parameters=dict(zip((m, L, g), A01_PARAMETERS.values())),
        initial_state={theta: 0.0, omega: 0.0},
        potential_energy=m * g * r.dot(N.y),
        energy_conserved=True,
        description=iftomm_pendulum.__doc__,
        random_spread=3.0,
        speed_scale=4.0,
        observables={"x_P1": r.dot(N.x), "y_P1": r.dot(N.y)},
    )


# ----------------------------------------------------------------------
# A02
# ----------------------------------------------------------------------
@register_system(
    "n_four_bar",
    sizes=(2,),
    # Out of the default comparison: the formulations that integrate the
    # dependent coordinates stop at its singular position by design
    # (integrate's singularity_tol), which the run reports as failures.
    heavy=True,
    benchmark=Benchmark(
        problem="A02",
        title="N-four-bar mechanism",
        t_final=10.0,
        reference=("x_B0", "y_B0"),
        error_measure=(
            "maximum absolute error of the coordinates of B0 over the "
            "output steps, against the reference solution; energy drift"
        ),
        output_steps=None,
        energy_conserved=True,
        notes=(
            "the XML specification gives N = 40 over 20 s, the OpenSim port "
            "(Bayo's two-window mechanism) N = 2 over 10 s: the catalogue's "
            "default is n = 2 over 10 s; pass n=40 (and 20 s) for the "
            "specification's size"
        ),
    ),
)
def n_four_bar(n: int = 2) -> MechanicalSystem:
    """IFToMM A02, the N-four-bar mechanism: ``n`` four-bar windows in a
    row, 2n+1 uniform links of mass ``m`` = 1 kg and length ``L`` = 1 m,
    gravity ``g`` = 9.81 m/s^2 along -y.

    The cranks (links 0..n) are pivoted on the ground at A_i = (i L, 0);
    crank i ends at B_i; coupler i (i = 1..n) joins B_(i-1) and B_i.  All
    lengths being equal, every window is a parallelogram: started with the
    cranks vertical (B_i = (i L, L), the OpenSim port's initial position)
    and ``x'(B0)`` = 1 m/s, the cranks turn together and the couplers
    translate::

          B0 o-------o B1 -------o B2        (n = 2)
             |       |           |
             |       |           |           y ^
          A0 o       o A1        o A2          |-> x

    At the horizontal position (cranks along the ground, once per half
    turn) the loop Jacobian loses rank n: the mechanism is singular, the
    degrees of freedom jump from 1 to n + 1, and a second branch (windows
    folding) crosses the parallelogram one.

    Coordinates: ``phi0`` (crank 0's angle from +x, independent), the
    couplers' angles ``psi1..psin`` and the cranks' ``phi1..phin``
    (dependent), two loop equations per window.  On the parallelogram
    branch ``phi_i = phi0`` and ``psi_i = 0``: the declared explicit
    solutions.  The motion there is a physical pendulum,
    ``((n+1)/3 + n) m L^2 phi0'' = -((n+1)/2 + n) m g L cos(phi0)``.

    The size: the XML specification gives N = 40 over 20 s; the OpenSim port
    (and Bayo's original, two windows) N = 2 over 10 s.  The default is
    n = 2 because every formulation derives it in seconds; with n = 40 the
    dependent-speed formulations eliminate 80 dependent speeds
    symbolically.  Inferred: B0's initial velocity +1 m/s along x means
    ``phi0'(0) = -1/L`` rad/s with the cranks vertical.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive integer, not {n!r}")
    m, L, g = (sm.Symbol(k, positive=True) for k in A02_PARAMETERS)
    phi = me.dynamicsymbols(f"phi0:{n + 1}")
    psi = me.dynamicsymbols(f"psi1:{n + 1}")
    wphi = me.dynamicsymbols(f"wphi0:{n + 1}")
    wpsi = me.dynamicsymbols(f"wpsi1:{n + 1}")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    system = me.System(N, O)
    bodies, loads = [], []
    V = sm.S.Zero
    tips = []
    for i in range(n + 1):
        K = N.orientnew(f"crank{i}", "Axis", (phi[i], N.z))
        K.set_ang_vel(N, wphi[i] * N.z)
        A = O.locatenew(f"A{i}", i * L * N.x)
        A.set_vel(N, 0)
        G = A.locatenew(f"Gc{i}", L / 2 * K.x)
        G.v2pt_theory(A, N, K)
        B = A.locatenew(f"B{i}", L * K.x)
        B.v2pt_theory(A, N, K)
        tips.append(B)
        bodies.append(
            me.RigidBody(f"crank{i}", G, K, m, (me.inertia(K, 0, 0, m * L**2 / 12), G))
        )
        loads.append(me.Force(G, -m * g * N.y))
        V += m * g * G.pos_from(O).dot(N.y)
    hol = []
    for i in range(1, n + 1):
        K = N.orientnew(f"coupler{i}", "Axis", (psi[i - 1], N.z))
        K.set_ang_vel(N, wpsi[i - 1] * N.z)
        G = tips[i - 1].locatenew(f"Gk{i}", L / 2 * K.x)
        G.v2pt_theory(tips[i - 1], N, K)
        bodies.append(
            me.RigidBody(
                f"coupler{i}", G, K, m, (me.inertia(K, 0, 0, m * L**2 / 12), G)
            )
        )
        loads.append(me.Force(G, -m * g * N.y))
        V += m * g * G.pos_from(O).dot(N.y)
        gap = tips[i - 1].pos_from(O) + L * K.x - tips[i].pos_from(O)
        # y before x: the x row's coefficient of psi_i' is -sin(psi_i), zero
        # on the whole parallelogram branch, no pivot for a symbolic solve.
        hol += [gap.dot(N.y), gap.dot(N.x)]
    dep_q, dep_u = [], []
    for i in range(1, n + 1):
        dep_q += [psi[i - 1], phi[i]]
        dep_u += [wpsi[i - 1], wphi[i]]
    system.add_coordinates(phi[0])
    system.add_coordinates(*dep_q, independent=False)
    system.add_speeds(wphi[0])
    system.add_speeds(*dep_u, independent=False)
    system.add_kdes(
        *[w - q.diff() for q, w in zip([phi[0], *dep_q], [wphi[0], *dep_u])]
    )
    system.add_holonomic_constraints(*hol)
    system.add_bodies(*bodies)
    system.add_loads(*loads)
    half_pi = float(sm.pi / 2)
    init = {phi[0]: half_pi, wphi[0]: -A02_B0_SPEED / A02_PARAMETERS["L"]}
    init |= {q: half_pi for q in phi[1:]} | {q: 0.0 for q in psi}
    b0 = tips[0].pos_from(O)
    return MechanicalSystem(
        name="n_four_bar",
        system=system,
        parameters=dict(zip((m, L, g), A02_PARAMETERS.values())),
        initial_state=init,
        dependent_solutions={q: phi[0] for q in phi[1:]} | {q: sm.S.Zero for q in psi},
        potential_energy=V,
        energy_conserved=True,
        description=n_four_bar.__doc__,
        # Crank 0 in [pi/2 - 1, pi/2 + 1]: clear of the singular positions
        # phi0 = 0, pi, where random states would be ill-defined.
        random_spread=1.0,
        speed_scale=2.0,
        observables={"x_B0": b0.dot(N.x), "y_B0": b0.dot(N.y)},
        options={"n": n},
    )


# ----------------------------------------------------------------------
# A04
# ----------------------------------------------------------------------
@register_system(
    "bricard",
    # Its declaration alone reduces five constraint rows on the manifold
    # (about 7 s) and each derivation takes 5-10 s.
    heavy=True,
    benchmark=Benchmark(
        problem="A04",
        title="Bricard's mechanism",
        t_final=10.0,
        reference=("x_P3", "y_P3", "z_P3"),
        error_measure=(
            "maximum absolute error of the coordinates of P3 over the "
            "output steps, against the reference solution; energy drift"
        ),
        output_steps=None,
        energy_conserved=True,
    ),
)
def bricard() -> MechanicalSystem:
    """IFToMM A04, Bricard's mechanism: five uniform rods of mass ``m`` =
    1 kg, length ``L`` = 1 m and square section ``a`` = 0.1 m, closed by
    six revolute joints into a loop with the ground; gravity ``g`` = 9.81
    m/s^2 along -y; 10 s.  Grübler's count gives 0 degrees of freedom, the
    mechanism has 1: one of the closure equations is redundant at every
    configuration of the motion.

    Initial position (the OpenSim port's, and the XML specification's as
    read by other ports): the joints at O = (0, 0, 0), P1 = (L, 0, 0),
    P2 = (L, -L, 0), P3' = (L, -L, L), P4 = (0, -L, L), P5 = (0, 0, L);
    rods O-P1, P1-P2, P2-P3', P3'-P4, P4-P5 and the ground closing P5-O.
    Every joint's axis is normal to the two links it joins: y at O, z at
    P1, x at P2, y at P3', z at P4, x at P5::

               z
               |  P5 o------------o P4
               |     |           /
               |     | (ground) / rod 4
               |   O o---------/---o P1      x ->
                    rod 1     /    |  rod 2 (down, -y)
                          P3' o----o P2
                             rod 3

    Coordinates: the joint angles ``q1..q5`` along the open chain from O
    (each rod's frame turned from its parent's about the joint axis),
    ``q1`` independent, ``q2..q5`` dependent.  Closure: the chain's end at
    P5 = (0, 0, L) (three equations, written as the loop closing at P2 in
    rod 3's frame) and the last joint's axis along x (two equations): five
    holonomic constraints for four dependent coordinates.  Their Jacobian has rank four on the motion, so the
    velocity rows are reduced by rank at random consistent states
    (:mod:`eomcompare.systems.redundancy`); the formulations with multipliers keep
    all five and solve in the least-squares sense (minimum-norm
    multipliers).

    Inferred values: the mechanism starts at rest (the specification as
    transcribed names no initial velocity and the OpenSim port sets
    none); the reference point P3 is the one the OpenSim port reports
    (the far end of rod 2, the joint P2 above, initially at (L, -L, 0)).
    """
    m, L, a, g = (sm.Symbol(k, positive=True) for k in A04_PARAMETERS)
    q = me.dynamicsymbols("q1:6")
    u = me.dynamicsymbols("u1:6")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    R1 = N.orientnew("R1", "Axis", (q[0], N.y))
    R2 = R1.orientnew("R2", "Axis", (q[1], R1.z))
    R3 = R2.orientnew("R3", "Axis", (q[2], R2.x))
    R4 = R3.orientnew("R4", "Axis", (q[3], R3.y))
    R5 = R4.orientnew("R5", "Axis", (q[4], R4.z))
    frames = (R1, R2, R3, R4, R5)
    axes = (N.y, R1.z, R2.x, R3.y, R4.z)
    parent = N
    for R, ax, ui in zip(frames, axes, u):
        R.set_ang_vel(parent, ui * ax)
        parent = R
    # Each rod's direction from its first joint, in its own frame.
    dirs = (R1.x, -R2.y, R3.z, -R4.x, R5.y)
    P = O
    bodies, loads = [], []
    V = sm.S.Zero
    for i, (R, d) in enumerate(zip(frames, dirs), start=1):
        G = P.locatenew(f"G{i}", L / 2 * d)
        G.v2pt_theory(P, N, R)
        nxt = P.locatenew(f"P{i}", L * d)
        nxt.v2pt_theory(P, N, R)
        inertia = _box_inertia(R, m, L, a, d)
        bodies.append(me.RigidBody(f"rod{i}", G, R, m, (inertia, G)))
        loads.append(me.Force(G, -m * g * N.y))
        V += m * g * G.pos_from(O).dot(N.y)
        if i == 2:
            P2 = nxt
        P = nxt
    # The loop closed at P2 (rods 1, 2 against the ground and rods 5, 4, 3
    # walked back from P5), measured in rod 3's frame, and joint 6's axis
    # N.x normal to rod 5's y and z: the same zeros as P5 = (0, 0, L) and
    # R5.x = N.x, in expressions a third the size (each frame is fewer
    # rotations away).
    gap = P2.pos_from(O) - (L * N.z - L * R5.y + L * R4.x - L * R3.z)
    hol = [gap.dot(R3.x), gap.dot(R3.y), gap.dot(R3.z), N.x.dot(R5.y), N.x.dot(R5.z)]
    system = me.System(N, O)
    system.add_coordinates(q[0])
    system.add_coordinates(*q[1:], independent=False)
    system.add_speeds(u[0])
    system.add_speeds(*u[1:], independent=False)
    system.add_kdes(*[ui - qi.diff() for qi, ui in zip(q, u)])
    system.add_holonomic_constraints(*hol)
    system.add_bodies(*bodies)
    system.add_loads(*loads)
    r3 = P2.pos_from(O)  # the specification's P3
    return MechanicalSystem(
        name="bricard",
        system=system,
        parameters=dict(zip((m, L, a, g), A04_PARAMETERS.values())),
        initial_state={qi: 0.0 for qi in q} | {u[0]: 0.0},
        potential_energy=V,
        energy_conserved=True,
        description=bricard.__doc__,
        random_spread=0.6,
        speed_scale=2.0,
        observables={"x_P3": r3.dot(N.x), "y_P3": r3.dot(N.y), "z_P3": r3.dot(N.z)},
    )


# ----------------------------------------------------------------------
# A05
# ----------------------------------------------------------------------
@register_system(
    "flyball_governor",
    # Cheap to derive, but stiff: the default comparison's explicit
    # integrator would need steps of about 1e-5 s.
    heavy=True,
    variants=({"shaft": "driven"},),
    benchmark=Benchmark(
        problem="A05",
        title="stiff flyball governor",
        t_final=10.0,
        reference=("s",),
        error_measure=(
            "maximum absolute error of the slider coordinate s over the "
            "output steps, against the reference solution"
        ),
        output_steps=None,
        energy_conserved=False,
    ),
)
def flyball_governor(shaft: str = "driven") -> MechanicalSystem:
    """IFToMM A05, the stiff flyball governor: a vertical shaft turning at
    ``omega`` = 2 pi rad/s, two rods hinged at its top carrying point masses
    ``mp`` = 5 kg at their ends, a slider on the shaft, and in place of the
    coupler rods two spring-dampers (``K`` = 8e5 N/m, ``C`` = 4e4 N s/m,
    rest length ``L0`` = 0.5 m) from the slider to the rods' middles;
    gravity ``g`` along -z (the shaft); 10 s.  Stiff: the springs'
    frequencies (about 1e3 rad/s) are far above the motion's.

    Shaft and rods are boxes ``l`` x ``b`` x ``b`` = 1.0 x 0.01 x 0.01 m,
    the slider a cube of side ``c`` = 0.1 m, all of density ``rho`` = 3000
    kg/m^3 (0.3 kg each rod and the shaft, 3 kg the slider).

    Geometry (the OpenSim port's, ``src/A05-FlyballGovernor/createModel.cpp``;
    the frame S turns with the shaft by ``theta`` about z)::

                 hinges at (+-c/2, 0, l) in S
               rod 2  \\  |  /  rod 1 (length l, alpha below horizontal)
                       \\ | /
             spring 2   \\|/  spring 1 (slider side +-c/2 to rod middle)
                        [s]  slider at height s on the shaft
                         |
                         o  shaft from z = 0 to z = l

    Coordinates: ``s`` (the slider's height, the reference quantity),
    ``alpha1``, ``alpha2`` (the rods' angles below the horizontal, each
    turning outwards from its hinge) and, with ``shaft="free"``, the shaft
    angle ``theta``.  Initial state: s = 0.5 m, alpha = 30 degrees, at rest
    relative to the shaft; with those the hinge, the spring's slider end
    and the rod's middle form an equilateral triangle of side 0.5 m, so the
    springs start at their rest length.

    Parameters
    ----------
    shaft : {"driven", "free"}
        ``"driven"`` (default): the shaft's angle is prescribed,
        ``theta = omega t`` (the specification as transcribed: "the shaft
        turning at 2 pi rad/s"); ``"free"``: the shaft is a coordinate that
        starts at ``omega`` and turns freely (the OpenSim port sets only
        its initial speed).

    Inferred values: the rod hinges' offset c/2 = 0.05 m from the shaft
    axis, the springs' ends (the slider's sides, the rods' middles) and
    the point masses at the rods' far ends, from the OpenSim port; the
    slider and rods turn with the shaft.
    """
    if shaft not in ("driven", "free"):
        raise ValueError(f"shaft must be one of ['driven', 'free'], not {shaft!r}")
    P = {k: sm.Symbol(k, positive=True) for k in A05_PARAMETERS}
    rho, b, l, c, mp = P["rho"], P["b"], P["l"], P["c"], P["mp"]
    theta = me.dynamicsymbols("theta")
    s, a1, a2 = me.dynamicsymbols("s alpha1 alpha2")
    vs, w1, w2 = me.dynamicsymbols("v_s omega1 omega2")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    S = N.orientnew("S", "Axis", (theta, N.z))
    if shaft == "free":
        w_shaft = me.dynamicsymbols("omega_shaft")
        S.set_ang_vel(N, w_shaft * N.z)
    R1 = S.orientnew("R1", "Axis", (a1, S.y))
    R2 = S.orientnew("R2", "Axis", (-a2, S.y))
    R1.set_ang_vel(S, w1 * S.y)
    R2.set_ang_vel(S, -w2 * S.y)
    m_bar = rho * l * b**2
    m_slider = rho * c**3
    bodies = []
    G0 = O.locatenew("G0", l / 2 * N.z)
    G0.set_vel(N, 0)
    bodies.append(
        me.RigidBody("shaft", G0, S, m_bar, (_box_inertia(S, m_bar, l, b, S.z), G0))
    )
    Gs = O.locatenew("Gs", s * S.z)
    Gs.set_vel(N, vs * S.z)
    cube = me.inertia(S, *([m_slider * c**2 / 6] * 3))
    bodies.append(me.RigidBody("slider", Gs, S, m_slider, (cube, Gs)))
    loads = [me.Force(Gs, -m_slider * P["g"] * N.z)]
    for i, (R, d, sign) in enumerate(((R1, R1.x, 1), (R2, -R2.x, -1)), start=1):
        H = O.locatenew(f"H{i}", sign * c / 2 * S.x + l * S.z)
        H.v2pt_theory(O, N, S)
        G = H.locatenew(f"G{i}", l / 2 * d)
        G.v2pt_theory(H, N, R)
        E = H.locatenew(f"E{i}", l * d)
        E.v2pt_theory(H, N, R)
        bodies.append(
            me.RigidBody(f"rod{i}", G, R, m_bar, (_box_inertia(R, m_bar, l, b, d), G))
        )
        bodies.append(me.Particle(f"ball{i}", E, mp))
        loads += [me.Force(G, -m_bar * P["g"] * N.z), me.Force(E, -mp * P["g"] * N.z)]
        # Spring-damper from the slider's side to the rod's middle.
        A = Gs.locatenew(f"S{i}", sign * c / 2 * S.x)
        A.v2pt_theory(Gs, N, S)
        r = G.pos_from(A)
        length = sm.sqrt(r.dot(r))
        rate = (G.vel(N) - A.vel(N)).dot(r) / length
        tension = P["K"] * (length - P["L0"]) + P["C"] * rate
        loads += [me.Force(A, tension * r / length), me.Force(G, -tension * r / length)]
    system = me.System(N, O)
    if shaft == "free":
        system.add_coordinates(theta, s, a1, a2)
        system.add_speeds(w_shaft, vs, w1, w2)
        system.add_kdes(
            w_shaft - theta.diff(), vs - s.diff(), w1 - a1.diff(), w2 - a2.diff()
        )
        init = {theta: 0.0, w_shaft: float(A05_PARAMETERS["omega"])}
        specified = {}
    else:
        system.add_coordinates(s, a1, a2)
        system.add_speeds(vs, w1, w2)
        system.add_kdes(vs - s.diff(), w1 - a1.diff(), w2 - a2.diff())
        init = {}
        specified = {theta: P["omega"] * t}
    system.add_bodies(*bodies)
    system.add_loads(*loads)
    init |= {s: A05_S0, a1: A05_ALPHA0, a2: A05_ALPHA0, vs: 0.0, w1: 0.0, w2: 0.0}
    return MechanicalSystem(
        name="flyball_governor",
        system=system,
        parameters={P[k]: float(v) for k, v in A05_PARAMETERS.items()},
        initial_state=init,
        specified=specified,
        energy_conserved=False,
        description=flyball_governor.__doc__,
        random_spread={s: 0.05, a1: 0.1, a2: 0.1, theta: 1.0},
        speed_scale=0.5,
        observables={"s": s},
        options={"shaft": shaft},
    )
