"""
Compare the formulations on your own system
===========================================

Declare a mechanical system once, in the vocabulary of
:mod:`sympy.physics.mechanics`, register it, and let the harness derive it
with every formulation, integrate it and compare the results.

The system here is an *elastic pendulum*: a particle of mass ``m`` on a
massless spring (stiffness ``k``, natural length ``L``) swinging in a
vertical plane.  Coordinates: the spring length ``r`` and the angle
``theta`` from the downward vertical.
"""

# %%
# The declaration
# ---------------
# A builder function returns a :class:`~eomcompare.systems.MechanicalSystem`: the
# sympy ``System`` (frames, points, bodies, loads, coordinates, speeds,
# kinematic differential equations) plus default parameter values and an
# initial state.  ``@register_system`` puts it in the catalogue, so every
# tool (``compare.run``, the CLI, the cache) finds it by name.
import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.systems import MechanicalSystem, get_system, register_system


@register_system("elastic_pendulum")
def elastic_pendulum() -> MechanicalSystem:
    """Particle on a spring in a vertical plane (r, theta from the
    downward vertical N.x)."""
    r, th = me.dynamicsymbols("r theta")
    ur, uth = me.dynamicsymbols("u_r u_theta")
    m, k, L, g = sm.symbols("m k L g", positive=True)
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", (th, N.z))
    A.set_ang_vel(N, uth * N.z)
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", r * A.x)
    P.set_vel(N, ur * A.x + r * uth * A.y)
    bob = me.Particle("bob", P, m)
    system = me.System(N, O)
    system.add_coordinates(r, th)
    system.add_speeds(ur, uth)
    system.add_kdes(ur - r.diff(), uth - th.diff())
    system.add_bodies(bob)
    # N.x points down: gravity along +N.x; the spring pulls towards O.
    system.add_loads(me.Force(P, m * g * N.x - k * (r - L) * A.x))
    V = -m * g * r * sm.cos(th) + k * (r - L) ** 2 / 2
    return MechanicalSystem(
        name="elastic_pendulum",
        system=system,
        parameters={m: 1.0, k: 40.0, L: 1.0, g: 9.81},
        initial_state={r: 1.2, th: 0.8, ur: 0.0, uth: 0.0},
        potential_energy=V,
        energy_conserved=True,
        random_spread={r: 0.2, th: 1.0},
    )


ms = get_system("elastic_pendulum")
print(ms)

# %%
# Check the declaration against the textbook equations
# ----------------------------------------------------
# Before comparing formulations with each other, hold one of them against
# equations derived by hand (Newton's law in polar coordinates):
#
# .. math::
#
#    \ddot r = r\dot\theta^2 + g\cos\theta - \frac{k}{m}(r - L), \qquad
#    \ddot\theta = -\frac{2\dot r\dot\theta + g\sin\theta}{r}.
from eomcompare.formulations import get_formulation

model = get_formulation("kane").derive(ms).numeric()
m_, k_, L_, g_ = 1.0, 40.0, 1.0, 9.81
for seed in range(5):
    t0, q, qd = ms.states.random_state(seed)
    (r, th), (rd, thd) = q, qd
    expected = [
        r * thd**2 + g_ * np.cos(th) - k_ / m_ * (r - L_),
        -(2 * rd * thd + g_ * np.sin(th)) / r,
    ]
    got = model.coordinate_accelerations(t0, q, qd)
    assert np.allclose(got, expected, rtol=1e-12, atol=1e-12), (got, expected)
print("kane agrees with Newton's equations at 5 random states")

# %%
# Compare every formulation
# -------------------------
# :func:`eomcompare.compare.run` derives the system with each formulation, generates
# numeric code the same way for all of them, compares q'' at random
# consistent states with the reference (``kane``), integrates each from
# the initial state and records one row per formulation.
from eomcompare import compare

formulations = [
    "kane",
    "lagrange",
    "modified_lagrange",
    "gibbs_appell",
    "sympy_kane",
    "sympy_lagrange",
]
result = compare.run(
    ["elastic_pendulum"],
    formulations,
    t_final=3.0,
    n_samples=151,
    jobs=1,
    progress=False,
    use_cache=False,
)
frame = result.frame.set_index("formulation")
print(
    frame[
        [
            "status",
            "ops_raw",
            "ops_cse",
            "qdd_max_rel_dev",
            "agreement_horizon",
            "energy_drift",
        ]
    ].to_string()
)

# Every formulation derives the system and agrees with the reference to
# round-off, over the whole horizon, conserving energy.
assert (frame["status"] == "ok").all()
assert (frame["qdd_max_rel_dev"] < 1e-10).all()
assert np.allclose(frame["agreement_horizon"], 3.0)
assert (frame["energy_drift"] < 1e-7).all()

# %%
# The trajectories and their deviation from the reference
# -------------------------------------------------------
# ``result.trajectories`` holds, per case, the common time grid, the
# coordinates and rates, and the relative deviation from the reference that
# defines the horizon of agreement (see :ref:`reading-the-report`).
import matplotlib.pyplot as plt

fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
for name in formulations:
    tr = result.trajectories[f"elastic_pendulum/{name}"]
    ax1.plot(tr["t"], tr["q"][:, 1], label=name)
    if name != "kane":
        ax2.semilogy(tr["t"], np.maximum(tr["deviation"], 1e-17), label=name)
ax1.set_ylabel("theta (rad)")
ax1.legend(fontsize=8, ncol=2)
ax2.axhline(1e-6, color="k", lw=0.8, ls="--")
ax2.set_ylabel("relative deviation from kane")
ax2.set_xlabel("t (s)")
fig.tight_layout()
