"""Planar pendulums: Huston's double rod pendulum and the scalable n-link
pendulum (fixed or on a cart), the field's standard scaling benchmark."""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from .base import MechanicalSystem
from .catalogue import register_system


def _rod_inertia(frame, m, l):
    """Thin uniform rod along the body x axis, central inertia."""
    return me.inertia(frame, 0, m * l**2 / 12, m * l**2 / 12)


@register_system("double_pendulum")
def double_pendulum() -> MechanicalSystem:
    """Huston's double rod pendulum (Fig. 11.4.3): two identical uniform rods.

    Unit vectors as in the book: n1 points DOWN (along gravity), n2 is
    horizontal, n3 = n1 x n2 is normal to the plane.  theta1, theta2 are
    absolute angles of the rods from n1::

            O
             \\  theta1 (from n1, the downward vertical)
              \\ B1 (length l, mass m)
               o
                \\  theta2
                 \\ B2
    """
    th1, th2 = me.dynamicsymbols("theta1 theta2")
    w1, w2 = me.dynamicsymbols("omega1 omega2")
    m, l, g = sm.symbols("m l g", positive=True)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    B1 = N.orientnew("B1", "Axis", (th1, N.z))
    B2 = N.orientnew("B2", "Axis", (th2, N.z))
    B1.set_ang_vel(N, w1 * N.z)
    B2.set_ang_vel(N, w2 * N.z)
    # Rod axes along the bodies' x (n1 rotated by theta about n3).
    G1 = O.locatenew("G1", l / 2 * B1.x)
    A = O.locatenew("A", l * B1.x)
    G2 = A.locatenew("G2", l / 2 * B2.x)
    G1.v2pt_theory(O, N, B1)
    A.v2pt_theory(O, N, B1)
    G2.v2pt_theory(A, N, B2)
    rod1 = me.RigidBody("rod1", G1, B1, m, (_rod_inertia(B1, m, l), G1))
    rod2 = me.RigidBody("rod2", G2, B2, m, (_rod_inertia(B2, m, l), G2))
    system = me.System(N, O)
    system.add_coordinates(th1, th2)
    system.add_speeds(w1, w2)
    system.add_kdes(w1 - th1.diff(), w2 - th2.diff())
    system.add_bodies(rod1, rod2)
    system.add_loads(me.Force(G1, m * g * N.x), me.Force(G2, m * g * N.x))
    V = -m * g * (G1.pos_from(O).dot(N.x) + G2.pos_from(O).dot(N.x))
    return MechanicalSystem(
        name="double_pendulum",
        system=system,
        parameters={m: 1.0, l: 1.0, g: 9.81},
        initial_state={th1: 0.5, th2: 1.0, w1: 0.0, w2: 0.0},
        potential_energy=V,
        energy_conserved=True,
        description=double_pendulum.__doc__,
        random_spread=1.5,
    )


def _chain(N, base, base_frame, n, angles, prefix=""):
    """n uniform rods pinned in series at ``base`` (whose frame
    ``base_frame`` has N's orientation); returns the parts and the height of
    each link's mass centre above ``base`` along N.y."""
    q = me.dynamicsymbols(f"q1:{n + 1}")
    u = me.dynamicsymbols(f"u1:{n + 1}")
    m = sm.symbols(f"m1:{n + 1}", positive=True)
    l = sm.symbols(f"l1:{n + 1}", positive=True)
    bodies, heights = [], []
    parent_frame, joint = base_frame, base
    base_height, angle = sm.S.Zero, sm.S.Zero
    for i in range(n):
        if angles == "relative":
            Bi = parent_frame.orientnew(f"B{i + 1}", "Axis", (q[i], parent_frame.z))
            Bi.set_ang_vel(parent_frame, u[i] * parent_frame.z)
        else:
            Bi = N.orientnew(f"B{i + 1}", "Axis", (q[i], N.z))
            Bi.set_ang_vel(N, u[i] * N.z)
        # v = v_joint + w x r with w = w_abs z and r along the link's x:
        # written out, because sympy's cross product (v2pt_theory) composes
        # the direction cosine matrices of the whole chain, which grows
        # exponentially with n.  The vectors are the ones v2pt_theory gives.
        w_abs = sum(u[: i + 1]) if angles == "relative" else u[i]
        # Heights above the base along N.y, for the potential energy, by the
        # same reasoning: link i's axis makes the angle ``angle`` with N.x.
        angle = angle + q[i] if angles == "relative" else q[i]
        heights.append(base_height + l[i] / 2 * sm.sin(angle))
        base_height = base_height + l[i] * sm.sin(angle)
        Gi = joint.locatenew(f"G{i + 1}", l[i] / 2 * Bi.x)
        Gi.set_vel(N, joint.vel(N) + w_abs * l[i] / 2 * Bi.y)
        nxt = joint.locatenew(f"P{i + 1}", l[i] * Bi.x)
        nxt.set_vel(N, joint.vel(N) + w_abs * l[i] * Bi.y)
        bodies.append(
            me.RigidBody(
                f"link{i + 1}", Gi, Bi, m[i], (_rod_inertia(Bi, m[i], l[i]), Gi)
            )
        )
        parent_frame, joint = Bi, nxt
    return q, u, m, l, bodies, heights


def _check_n(n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, not {n!r}")


def _check_angles(angles):
    if angles not in ("relative", "absolute"):
        raise ValueError(
            f"angles must be one of ['relative', 'absolute'], not {angles!r}"
        )


@register_system("n_link_pendulum", sizes=(3,))
def n_link_pendulum(n: int = 3, angles: str = "relative") -> MechanicalSystem:
    """Planar chain of n uniform rods pinned in series, in gravity -y.

    Link i has length l_i and mass m_i; its axis is its body x axis.  With
    ``angles="relative"`` q_i is the angle of link i from link i-1 (the
    first from the horizontal x axis), as pin joints naturally give; with
    ``"absolute"`` every q_i is measured from x.  Conventions match a
    Pinocchio chain of ``JointModelRZ`` joints placed at ``[l, 0, 0]``::

        O---link1---o---link2---o ... (gravity -y)
    """
    _check_n(n)
    _check_angles(angles)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    g = sm.Symbol("g", positive=True)
    q, u, m, l, bodies, heights = _chain(N, O, N, n, angles)
    system = me.System(N, O)
    system.add_coordinates(*q)
    system.add_speeds(*u)
    system.add_kdes(*[ui - qi.diff() for qi, ui in zip(q, u)])
    system.add_bodies(*bodies)
    system.add_loads(*[me.Force(b.masscenter, -b.mass * g * N.y) for b in bodies])
    V = sum(b.mass * g * h for b, h in zip(bodies, heights))
    params = {g: 9.81} | {mi: 1.0 for mi in m} | {li: 1.0 for li in l}
    init = {qi: 0.3 for qi in q} | {ui: 0.0 for ui in u}
    return MechanicalSystem(
        name="n_link_pendulum",
        system=system,
        parameters=params,
        initial_state=init,
        potential_energy=V,
        energy_conserved=True,
        description=n_link_pendulum.__doc__,
        random_spread=1.5,
        options={"n": n, "angles": angles},
    )


@register_system("n_link_pendulum_on_cart", sizes=(3,))
def n_link_pendulum_on_cart(n: int = 3, angles: str = "relative") -> MechanicalSystem:
    """A cart (particle of mass m0 sliding on the x axis, coordinate x)
    carrying a chain of n uniform rods pinned in series, gravity -y::

        [ cart ]--o---link1---o---link2 ...
        ==========x==========> x
    """
    _check_n(n)
    _check_angles(angles)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    g, m0 = sm.symbols("g m0", positive=True)
    x, v = me.dynamicsymbols("x v")
    C = O.locatenew("C", x * N.x)
    C.set_vel(N, v * N.x)
    cart = me.Particle("cart", C, m0)
    q, u, m, l, bodies, heights = _chain(N, C, N, n, angles)
    system = me.System(N, O)
    system.add_coordinates(x, *q)
    system.add_speeds(v, *u)
    system.add_kdes(v - x.diff(), *[ui - qi.diff() for qi, ui in zip(q, u)])
    system.add_bodies(cart, *bodies)
    system.add_loads(*[me.Force(b.masscenter, -b.mass * g * N.y) for b in bodies])
    V = sum(b.mass * g * h for b, h in zip(bodies, heights))
    params = {g: 9.81, m0: 2.0} | {mi: 1.0 for mi in m} | {li: 1.0 for li in l}
    init = {x: 0.0, v: 0.0} | {qi: -1.2 for qi in q} | {ui: 0.0 for ui in u}
    return MechanicalSystem(
        name="n_link_pendulum_on_cart",
        system=system,
        parameters=params,
        initial_state=init,
        potential_energy=V,
        energy_conserved=True,
        description=n_link_pendulum_on_cart.__doc__,
        random_spread=1.5,
        options={"n": n, "angles": angles},
    )
