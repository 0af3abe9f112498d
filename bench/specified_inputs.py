"""``numeric()`` with prescribed inputs against the same system without.

A free rigid body (body-fixed 3-2-1 angles, position in the inertial
frame, six speeds) driven by three torques and three forces, once as
prescribed functions of time (``specified``) and once as constants; the
same formulation derives both and ``eom.numeric()`` generates the code.
Substituting the prescribed laws used to dominate (``Matrix.subs().doit()``
over the whole acceleration expression); the ratio printed should stay
within about 2.

Run: ``python -m eomcompare.bench.specified_inputs [formulation]``.
"""

from __future__ import annotations

import sys
import time

import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.formulations import get_formulation
from eomcompare.systems import MechanicalSystem

__all__ = ["free_body", "numeric_seconds", "main"]

t = me.dynamicsymbols._t


def free_body(inputs: bool) -> MechanicalSystem:
    """The free rigid body; its loads are functions of time prescribed in
    ``specified`` when ``inputs``, constants otherwise."""
    q = me.dynamicsymbols("q1:7")
    u = me.dynamicsymbols("u1:7")
    m, g, I1, I2, I3, I12 = sm.symbols("m g I1 I2 I3 I12")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    B = me.ReferenceFrame("B")
    B.orient_body_fixed(N, q[:3], "321")
    w_q = B.ang_vel_in(N)
    B.set_ang_vel(N, u[0] * B.x + u[1] * B.y + u[2] * B.z)
    P = O.locatenew("P", q[3] * N.x + q[4] * N.y + q[5] * N.z)
    P.set_vel(N, u[3] * N.x + u[4] * N.y + u[5] * N.z)
    body = me.RigidBody("body", P, B, m, (me.inertia(B, I1, I2, I3, I12), P))
    if inputs:
        loads = me.dynamicsymbols("T1:4 F1:4")
        specified = {
            f: a * sm.sin((k + 1) * t) + b * sm.cos(t / (k + 1))
            for k, (f, a, b) in enumerate(
                zip(
                    loads,
                    (0.3, -0.2, 0.5, 1.0, -0.7, 0.4),
                    (0.1, 0.2, -0.3, 0.5, 0.2, 0.1),
                )
            )
        }
        values = {}
    else:
        loads = sm.symbols("T1:4 F1:4")
        specified = {}
        values = dict(zip(loads, (0.3, -0.2, 0.5, 1.0, -0.7, 0.4)))
    T1, T2, T3, F1, F2, F3 = loads
    system = me.System(N, O)
    system.add_coordinates(*q)
    system.add_speeds(*u)
    system.add_kdes(
        *[me.dot(w_q - B.ang_vel_in(N), b) for b in B],
        *[q[3 + i].diff(t) - u[3 + i] for i in range(3)],
    )
    system.add_bodies(body)
    system.add_loads(
        me.Torque(B, T1 * B.x + T2 * B.y + T3 * B.z),
        me.Force(P, F1 * B.x + F2 * B.y + F3 * B.z - m * g * N.z),
    )
    return MechanicalSystem(
        name="free_body_inputs" if inputs else "free_body",
        system=system,
        parameters={m: 2.0, g: 9.81, I1: 1.0, I2: 1.5, I3: 2.0, I12: 0.1} | values,
        initial_state={q[1]: 0.2, u[0]: 0.5, u[2]: -0.3},
        specified=specified,
    )


def numeric_seconds(inputs: bool, formulation: str = "kane") -> float:
    """Seconds of ``eom.numeric()`` (code generation included) for
    :func:`free_body`."""
    eom = get_formulation(formulation, count_ops=False).derive(free_body(inputs))
    start = time.perf_counter()
    eom.numeric()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    name = argv[0] if argv else "kane"
    without = numeric_seconds(False, name)
    with_inputs = numeric_seconds(True, name)
    print(
        f"{name}: numeric() {with_inputs:.3g} s with prescribed inputs, "
        f"{without:.3g} s without; ratio {with_inputs / without:.2f}"
    )


if __name__ == "__main__":
    main()
