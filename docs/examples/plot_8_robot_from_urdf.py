"""
A robot from URDF
=================

Robots are described in URDF files: links with their inertial data, joints
with their axes and origins.  :func:`eomcompare.systems.from_urdf` reads such a file
(a path, or the text itself) and declares the robot as a
:class:`~eomcompare.systems.MechanicalSystem`, so every formulation derives it like
any other system.  Pinocchio, the rigid-body library of the robotics
field, reads the same file; its articulated-body algorithm (``aba``) is an
independent check of the derived accelerations.

The robot here is written inline so that the page builds in seconds: a
three-joint arm with a yaw and a pitch joint, a prismatic forearm set at an
angle, and a tool fixed to it (a ``fixed`` joint, merged into the forearm's
body).  A file from ``example-robot-data`` (``ur5``, ``panda``) is read the
same way, only its derivation takes longer.
"""

# %%
# Reading the file
# ----------------
# The coordinates are numbered in the order Pinocchio numbers the joints
# (depth first from the root); ``options["joints"]`` names them.  Gravity
# is ``g = 9.81`` m/s² along ``-z``, as in Pinocchio.
import numpy as np

from eomcompare.systems import from_urdf

URDF = """
<robot name="three_axis_arm">
  <link name="base"/>
  <link name="turret">
    <inertial><origin xyz="0 0 0.1"/><mass value="2.0"/>
      <inertia ixx="0.02" iyy="0.02" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
  <link name="upper_arm">
    <inertial><origin xyz="0.2 0 0" rpy="0 0 0.3"/><mass value="1.5"/>
      <inertia ixx="0.004" iyy="0.03" izz="0.03" ixy="0.001" ixz="0" iyz="0"/>
    </inertial>
  </link>
  <link name="forearm">
    <inertial><origin xyz="0.15 0 0"/><mass value="0.8"/>
      <inertia ixx="0.002" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
  <link name="tool">
    <inertial><origin xyz="0.02 0 0"/><mass value="0.3"/>
      <inertia ixx="0.0005" iyy="0.0005" izz="0.0005" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
  <joint name="j1_yaw" type="revolute">
    <parent link="base"/><child link="turret"/><axis xyz="0 0 1"/>
    <origin xyz="0 0 0.2"/>
    <limit lower="-3" upper="3" effort="10" velocity="2"/>
  </joint>
  <joint name="j2_pitch" type="revolute">
    <parent link="turret"/><child link="upper_arm"/><axis xyz="0 1 0"/>
    <origin xyz="0 0 0.25"/>
    <limit lower="-2" upper="2" effort="10" velocity="2"/>
  </joint>
  <joint name="j3_slide" type="prismatic">
    <parent link="upper_arm"/><child link="forearm"/><axis xyz="1 0 0"/>
    <origin xyz="0.4 0 0" rpy="0.2 0 0"/>
    <limit lower="0" upper="0.3" effort="10" velocity="1"/>
  </joint>
  <joint name="tool_mount" type="fixed">
    <parent link="forearm"/><child link="tool"/><origin xyz="0.3 0 0"/>
  </joint>
</robot>
"""

ms = from_urdf(URDF)
print(ms)
print("joints:", ms.options["joints"], ms.options["joint_types"])
assert ms.options["joints"] == ("j1_yaw", "j2_pitch", "j3_slide")
# Three bodies move: the tool is merged into the forearm.
assert ms.degrees_of_freedom == 3 and len(ms.bodies) == 3

# %%
# Deriving with several formulations
# ----------------------------------
# Kane's method, Lagrange's equations and Gibbs–Appell's, each from the
# same declaration.
from eomcompare.formulations import get_formulation

names = ["kane", "lagrange", "gibbs_appell"]
eoms = {name: get_formulation(name).derive(ms) for name in names}
for eom in eoms.values():
    print(eom)

# %%
# Agreement with Pinocchio
# ------------------------
# Pinocchio builds its model from the same URDF text.  At random states
# (angles, a slide position and rates drawn by ``ms.states.random_state``) every
# formulation's q'' must equal ``pinocchio.aba`` with zero joint torques.
# (:func:`eomcompare.references.robot_oracle.urdf_pinocchio_accelerations` does the
# same for any robot read from URDF, continuous joints included.)
import pinocchio as pin

model = pin.buildModelFromXML(URDF)
data = model.createData()
assert tuple(model.names[1:]) == ms.options["joints"]

models = {name: eom.numeric() for name, eom in eoms.items()}
worst = dict.fromkeys(names, 0.0)
for seed in range(10):
    t0, q, qd = ms.states.random_state(seed)
    reference = pin.aba(model, data, q, qd, np.zeros(model.nv))
    scale = max(1.0, float(np.max(np.abs(reference))))
    for name, num in models.items():
        qdd = num.coordinate_accelerations(t0, q, qd)
        worst[name] = max(worst[name], float(np.max(np.abs(qdd - reference))) / scale)
print("largest relative deviation from pinocchio.aba:")
for name, dev in worst.items():
    print(f"  {name:14s} {dev:.2e}")
    assert dev < 1e-9, (name, dev)

# %%
# Operation counts, the literature's way
# --------------------------------------
# ``eom.op_counts`` holds sympy's ``count_ops`` (every node, ``SUB`` and
# ``NEG`` included).  Robotics papers count otherwise: multiplications
# (divisions included) and additions (subtractions included) per
# evaluation, after common subexpressions are taken out, with the parts
# that depend on parameters only computed once per parameter set
# (:mod:`eomcompare.bench.literature_counts`).  Forward dynamics is the mass matrix
# and forcing together, plus the solve that gives q'': each formulation
# writes this arm's mass matrix symmetric, so the compiled backend
# evaluates its lower triangle and solves by LDL^T.
import pandas as pd

from eomcompare.bench.literature_counts import featherstone, forward_dynamics_counts

counts = {name: forward_dynamics_counts(eom) for name, eom in eoms.items()}
table = pd.DataFrame(
    {
        name: {
            "M, f: mul": c["mf"].mul,
            "M, f: add": c["mf"].add,
            "solve: mul": c["solve"].mul,
            "solve: add": c["solve"].add,
            "total: mul": c["total"].mul,
            "total: add": c["total"].add,
            "sympy count_ops after cse": eoms[name].op_counts["cse"],
        }
        for name, c in counts.items()
    }
).T
print(table.to_string())

# The LDL^T solve of a dense 3 x 3 system, counted by hand, one reciprocal
# per pivot (a division, so a multiplication).  Column 0: the reciprocal
# of d0 and L10, L20 (3 multiplications).  Column 1: v0 = L10 d0,
# d1 = A11 - L10 v0, its reciprocal, L21 = (A21 - L20 v0) / d1 (5
# multiplications, 2 additions).  Column 2: v0, v1, d2 = A22 - L20 v0 -
# L21 v1 and its reciprocal (5 and 2).  The unit lower triangular solve
# takes 3 and 3, the upper one with the scalings by 1/d 6 and 3: 22
# multiplications and 10 additions (an LU solve takes 20 and 11 at this
# size; LDL^T's saving grows as n^3/6, 282 / 192 against 330 / 276 at
# n = 9).
assert all((c["solve"].mul, c["solve"].add) == (22, 10) for c in counts.values())

# Featherstone's articulated-body algorithm (Featherstone 2008, Table
# 10.1: 224 n - 259 multiplications, 205 n - 248 additions for n joints),
# the recursion Pinocchio runs.  The two are not like for like: ABA's count
# is for any robot, its inertias and joint placements inputs of every call,
# while this arm's masses, inertias and offsets are numbers folded into the
# derived equations (products with zero and one gone, constants computed
# once).  What the comparison shows is what deriving the equations of one
# robot saves over the general recursion; for the methods compared with
# general symbolic inertias, see the benchmark's robots section
# (:mod:`eomcompare.bench.robots`).  For so short a chain the closed-form equations are
# cheaper, as Kane and Levinson found for small arms.
aba_mul, aba_add = featherstone(3)["ABA"]
print(f"ABA for 3 joints: {aba_mul} multiplications, {aba_add} additions")
assert (aba_mul, aba_add) == (224 * 3 - 259, 205 * 3 - 248)
assert all(c["total"].mul < aba_mul for c in counts.values())

# %%
# A short motion
# --------------
# Released from rest with the arm raised and the slide half out, the arm
# falls under gravity.  The trajectory of each formulation is integrated
# with :func:`eomcompare.numeric.integrate.integrate`; all coincide, and the q'' along
# the way still matches ``aba``.  Joint limits are not modelled: the
# URDF's ``<limit>`` elements are read (Pinocchio keeps them as bounds) but
# no formulation adds a stop, so the slide moves freely past its 0.3 m
# travel, as it would in ``aba``; the run prints how far it went.
import matplotlib.pyplot as plt

from eomcompare.numeric.integrate import integrate

start = (0.0, np.array([0.0, -0.6, 0.15]), np.array([0.8, 0.0, 0.0]))
grid = np.linspace(0.0, 1.0, 101)
runs = {
    name: integrate(num, 1.0, t_eval=grid, initial_state=start, rtol=1e-10, atol=1e-10)
    for name, num in models.items()
}
for name, res in runs.items():
    assert res.success, (name, res.message)
    assert np.allclose(res.q, runs["kane"].q, atol=1e-7), name
for ti, qi, qdi in zip(grid[::20], runs["kane"].q[::20], runs["kane"].qd[::20]):
    qdd = models["kane"].coordinate_accelerations(ti, qi, qdi)
    assert np.allclose(qdd, pin.aba(model, data, qi, qdi, np.zeros(3)), atol=1e-9)

travel = runs["kane"].q[:, 2]
print(
    f"slide from {travel.min():.2f} m to {travel.max():.2f} m (URDF limit 0 to 0.3 m)"
)

fig, (ax_q, ax_ops) = plt.subplots(1, 2, figsize=(10, 4))
labels = [r"$q_1$ yaw (rad)", r"$q_2$ pitch (rad)", r"$q_3$ slide (m)"]
for k, label in enumerate(labels):
    ax_q.plot(grid, runs["kane"].q[:, k], label=label)
    ax_q.plot(grid, runs["lagrange"].q[:, k], "k:", lw=1)
ax_q.set_xlabel("t (s)")
ax_q.set_title("released from rest, limits not modelled (dotted: lagrange)")
ax_q.legend(loc="best", fontsize="small")
x = np.arange(len(names) + 1)
muls = [counts[n]["total"].mul for n in names] + [aba_mul]
adds = [counts[n]["total"].add for n in names] + [aba_add]
ax_ops.bar(x - 0.2, muls, 0.4, label="multiplications")
ax_ops.bar(x + 0.2, adds, 0.4, label="additions")
ax_ops.set_xticks(x, names + ["ABA (Table 10.1)"], fontsize="small")
ax_ops.set_title("forward dynamics, per evaluation")
ax_ops.legend(fontsize="small")
fig.tight_layout()
