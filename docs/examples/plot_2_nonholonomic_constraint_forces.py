"""
A nonholonomic system and its constraint forces
===============================================

A *knife-edge sleigh* slides on a horizontal plane: its blade at the
contact point ``P`` cannot move sideways, a nonholonomic constraint.  The
sleigh's mass centre ``G`` lies a distance ``a`` ahead of the blade; a
torque ``T0`` turns it and a drag ``-c u1`` along the blade slows it.

We declare the blade's lateral force as a :class:`~eomcompare.systems.ConstraintForce`
and recover it two ways — Kane's method with an auxiliary speed, and the
multiplier of Lagrange's equations — and hold both against Newton's and
Euler's laws written by hand.
"""

# %%
# The declaration
# ---------------
# Coordinates ``x, y`` of the contact point and the heading ``theta``;
# speeds along the blade (``u1``), across it (``u2``, dependent: the
# constraint sets it to zero) and the turning rate ``u3``.
import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.systems import ConstraintForce, MechanicalSystem

x, y, th = me.dynamicsymbols("x y theta")
u1, u2, u3 = me.dynamicsymbols("u1 u2 u3")
m, Izz, a, c, T0 = sm.symbols("m I_zz a c T0", real=True)

N = me.ReferenceFrame("N")
B = N.orientnew("B", "Axis", (th, N.z))
B.set_ang_vel(N, u3 * N.z)
O = me.Point("O")
O.set_vel(N, 0)
P = O.locatenew("P", x * N.x + y * N.y)
P.set_vel(N, u1 * B.x + u2 * B.y)
G = P.locatenew("G", a * B.x)
G.v2pt_theory(P, N, B)
sleigh = me.RigidBody("sleigh", G, B, m, (me.inertia(B, 0, 0, Izz), G))

system = me.System(N, O)
system.add_coordinates(x, y, th)
system.add_speeds(u1, u3)
system.add_speeds(u2, independent=False)
system.add_kdes(
    u1 - (sm.cos(th) * x.diff() + sm.sin(th) * y.diff()),
    u2 - (-sm.sin(th) * x.diff() + sm.cos(th) * y.diff()),
    u3 - th.diff(),
)
system.add_nonholonomic_constraints(u2)  # no sideways slip at P
system.add_bodies(sleigh)
system.add_loads(me.Force(G, -c * u1 * B.x), me.Torque(B, T0 * B.z))

ms = MechanicalSystem(
    name="knife_edge_sleigh",
    system=system,
    parameters={m: 2.0, Izz: 0.3, a: 0.4, c: 0.5, T0: 0.7},
    initial_state={x: 0.0, y: 0.0, th: 0.0, u1: 1.0, u3: 0.0},
    # The lateral force of the blade on the sleigh, at P, along B.y.
    constraint_forces=[ConstraintForce("R", "force", B.y, P, (sleigh,))],
    random_spread={x: 1.0, y: 1.0, th: 3.0},
)
print(ms, "degrees of freedom:", ms.degrees_of_freedom)
assert ms.degrees_of_freedom == 2

# %%
# Kane's method: the force from an auxiliary speed
# ------------------------------------------------
# Kane's method adds a virtual sideways motion of the sleigh at ``P`` (an
# auxiliary speed the constraint forbids) and solves that speed's equation
# for the force.  ``eom.extras["constraint_forces"]`` holds it symbolically;
# the numeric model evaluates it at any consistent state.
from eomcompare.formulations import get_formulation

kane = get_formulation("kane").derive(ms)
print("R =", kane.extras["constraint_forces"]["R"])
kane_model = kane.numeric()

# %%
# Lagrange's equations: the force is the multiplier
# -------------------------------------------------
# In coordinate rates the constraint reads
# :math:`-\sin\theta\,\dot x + \cos\theta\,\dot y = 0`; its row of
# :math:`\mathbf C` is the unit vector ``B.y`` in ``N``'s components, so the
# generalized constraint force :math:`\mathbf C^{\mathsf T}\lambda` is a
# force :math:`\lambda` along ``B.y`` at ``P``: the multiplier *is* the
# blade force.  The unknowns are :math:`(\ddot x, \ddot y, \ddot\theta,
# \lambda)`.
lagrange = get_formulation("lagrange").derive(ms)
print(lagrange)
lagrange_model = lagrange.numeric()

# %%
# Hold both against Newton and Euler
# ----------------------------------
# With :math:`u_2 = 0`, the mass centre's acceleration in ``B``'s
# components is :math:`(\dot u_1 - a u_3^2,\ a\dot u_3 + u_1u_3)`.  The only
# forces are the drag along ``B.x`` at ``G`` and the blade force ``R``
# along ``B.y`` at ``P`` (a distance ``a`` behind ``G``), so
#
# .. math::
#
#    m(\dot u_1 - a u_3^2) = -c\,u_1, \qquad
#    m(a\dot u_3 + u_1u_3) = R, \qquad
#    I_{zz}\dot u_3 = T_0 - aR.
p = {"m": 2.0, "I_zz": 0.3, "a": 0.4, "c": 0.5, "T0": 0.7}
rows = []
for seed in range(8):
    t0, q, qd = ms.states.random_state(seed)
    qdd = kane_model.coordinate_accelerations(t0, q, qd)
    theta, (xd, yd, thd), (xdd, ydd, thdd) = q[2], qd, qdd
    U1 = np.cos(theta) * xd + np.sin(theta) * yd
    U1d = np.cos(theta) * xdd + np.sin(theta) * ydd  # u2 = 0 here
    R_kane = kane_model.constraint_forces(t0, q, qd)["R"]
    z = lagrange_model.solve_unknowns(t0, lagrange_model.state_from(q, qd, t0))
    R_lagrange = z[-1]
    R_newton = p["m"] * (p["a"] * thdd + U1 * thd)
    assert np.isclose(p["m"] * (U1d - p["a"] * thd**2), -p["c"] * U1)
    assert np.isclose(p["I_zz"] * thdd, p["T0"] - p["a"] * R_newton)
    assert np.isclose(R_kane, R_newton, rtol=1e-10, atol=1e-12)
    assert np.isclose(R_lagrange, R_newton, rtol=1e-10, atol=1e-12)
    rows.append((seed, R_newton, R_kane, R_lagrange))
print(" seed   R (Newton)     R (Kane)   R (Lagrange)")
for row in rows:
    print("{:5d} {:12.6f} {:12.6f} {:12.6f}".format(*row))

# %%
# The force along a trajectory
# ----------------------------
# :func:`eomcompare.numeric.integrate.integrate` integrates any formulation's
# equations with the constraints projected; the force is then evaluated
# along the way.
import matplotlib.pyplot as plt

from eomcompare.numeric.integrate import integrate

res = integrate(kane, 6.0, t_eval=np.linspace(0.0, 6.0, 301))
assert res.success and res.max_velocity_residual < 1e-8
R = [
    kane_model.constraint_forces(ti, qi, qdi)["R"]
    for ti, qi, qdi in zip(res.t, res.q, res.qd)
]
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.8))
ax1.plot(res.q[:, 0], res.q[:, 1])
ax1.set_aspect("equal", adjustable="datalim")
ax1.set_xlabel("x (m)")
ax1.set_ylabel("y (m)")
ax1.set_title("path of the blade")
ax2.plot(res.t, R)
ax2.set_xlabel("t (s)")
ax2.set_ylabel("R (N)")
ax2.set_title("lateral blade force")
fig.tight_layout()

# %%
# A declaration a formulation refuses
# -----------------------------------
# Formulations refuse what they cannot do, with the reason, instead of
# returning wrong equations.  Kolev's modified Lagrange equations in their
# *explicit* form need explicit solutions of the holonomic constraints;
# Andrews' squeezing mechanism declares its six dependent angles through
# loop-closure constraints only, so that form is refused before any work
# is done (the default, implicit form derives it).
from eomcompare.formulations import UnsupportedSystemError
from eomcompare.systems import get_system

squeezer = get_system("andrews_squeezer")
try:
    get_formulation("modified_lagrange", dependent="explicit").derive(squeezer)
except UnsupportedSystemError as exc:
    print("refused:", exc)
    refused = True
else:
    refused = False
assert refused
