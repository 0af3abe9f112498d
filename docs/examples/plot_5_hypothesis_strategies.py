"""
Check your own dynamics code with the hypothesis strategies
===========================================================

:mod:`eomcompare.testing.strategies` holds `hypothesis <https://hypothesis.works>`_
strategies that draw random :class:`~eomcompare.systems.MechanicalSystem` objects —
open chains and trees of rigid bodies, closed linkages, nonholonomic
sleighs and discs, driven (rheonomic) chains — and consistent states of
them.  They let you test *your own* dynamics code against this project's
formulations on systems nobody wrote by hand.

Here "your code" is a 25-line implementation of Lagrange's equations for
unconstrained systems, which we check against ``kane``; then a version with
a classic bug, which the same property catches.
"""

# %%
# Your dynamics code
# ------------------
# Lagrange's equations in the coordinates: :math:`\mathbf M =
# \partial^2T/\partial\dot{\mathbf q}^2`, :math:`\mathbf f = \mathbf Q +
# \partial T/\partial\mathbf q - (\partial^2T/\partial\dot{\mathbf q}\,
# \partial\mathbf q)\,\dot{\mathbf q}` (no explicit time), with the
# generalized forces :math:`Q_j` of the declared loads.
import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

t = me.dynamicsymbols._t


def my_accelerations(ms, forget_dT_dq=False):
    """A function (t, q, qd) -> q'' for an unconstrained system."""
    q = list(ms.coordinates)
    qd = [qi.diff(t) for qi in q]
    u_map = dict(ms.kinematics.u_of_qdot)
    T = ms.kinetic_energy()  # in (t, q, q')
    Q = [sm.S.Zero] * len(q)
    for load in ms.loads:  # generalized forces
        v = (
            load.point.vel(ms.frame)
            if isinstance(load, me.Force)
            else load.frame.ang_vel_in(ms.frame)
        )
        v = v.subs(u_map)  # speeds -> q'
        for j, qdj in enumerate(qd):
            Q[j] += load.vector.dot(v.diff(qdj, ms.frame))
    Q = sm.Matrix(Q).subs(u_map)
    p = sm.Matrix([T.diff(qdj) for qdj in qd])
    M = p.jacobian(qd)
    f = Q - p.jacobian(q) * sm.Matrix(qd)
    if not forget_dT_dq:
        f += sm.Matrix([T.diff(qi) for qi in q])
    Qs, QDs = sm.symbols(f"x0:{len(q)}"), sm.symbols(f"v0:{len(q)}")
    rep = dict(zip(qd, QDs)) | dict(zip(q, Qs))
    fun = sm.lambdify(
        [Qs, QDs, list(ms.parameters)], [M.xreplace(rep), f.xreplace(rep)]
    )
    values = list(ms.parameters.values())

    def qdd(t0, q_, qd_):
        M_, f_ = fun(q_, qd_, values)
        return np.linalg.solve(np.asarray(M_, float), np.asarray(f_, float).ravel())

    return qdd


# %%
# The property
# ------------
# For any random open chain (planar, up to three bodies on revolute and
# prismatic joints, with springs, dampers and gravity of random values) and
# any consistent state, your accelerations equal ``kane``'s.
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from eomcompare.formulations import get_formulation
from eomcompare.testing.strategies import consistent_states, open_chains


def agrees_with_kane(ms, state, **options):
    t0, q, qd = state
    ours = my_accelerations(ms, **options)(t0, q, qd)
    theirs = (
        get_formulation("kane").derive(ms).numeric().coordinate_accelerations(t0, q, qd)
    )
    scale = max(1.0, np.max(np.abs(theirs)))
    return np.max(np.abs(ours - theirs)) / scale


checked = []


@settings(
    max_examples=6,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_my_lagrange(data):
    ms = data.draw(open_chains(dimension=2, max_bodies=3))
    state = data.draw(consistent_states(ms))
    deviation = agrees_with_kane(ms, state)
    checked.append((ms.name, len(ms.coordinates), deviation))
    assert deviation < 1e-9


test_my_lagrange()
for name, n, dev in checked:
    print(f"{name:22s} {n} coordinates   relative deviation {dev:.1e}")
assert len(checked) >= 6

# %%
# A bug the property catches
# --------------------------
# Forgetting :math:`\partial T/\partial\mathbf q` is invisible on a single
# body sliding on a prismatic joint; on two bodies on revolute joints it is
# not.  The property fails, and hypothesis reports the falsifying system
# and state.  (Shrinking is turned off to keep the build short.)


@settings(
    max_examples=5,
    deadline=None,
    database=None,
    phases=[Phase.generate],
    report_multiple_bugs=False,
)
@given(data=st.data())
def test_buggy(data):
    ms = data.draw(
        open_chains(dimension=2, min_bodies=2, max_bodies=2, joint_types=("revolute",))
    )
    state = data.draw(consistent_states(ms))
    assert agrees_with_kane(ms, state, forget_dT_dq=True) < 1e-9


try:
    test_buggy()
except AssertionError as exc:
    print("caught:", type(exc).__name__)
    caught = True
else:
    caught = False
assert caught, "the property should have caught the missing dT/dq"
