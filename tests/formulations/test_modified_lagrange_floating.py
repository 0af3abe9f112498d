"""Kolev's modified Lagrange equations on floating-base robots (a unit
quaternion root): the projection ``F^T M F``, ``F^T (f - M F' u)`` on the
kinematic directions q' = F u.

Expected values: on the unit sphere the speeds are ``w = W q'`` with
``W F = I`` (``F^T F = |q|^2 / 4``), so the projected mass matrix is the
Hessian of T in the speeds, which Kane's method (``kane``: generalized
inertia forces, no kinetic energy) gives for the same speeds; and u' from Pinocchio's ``aba`` with a
free-flyer root (the floating bench's reference)."""

from __future__ import annotations

import numpy as np
import pytest

from eomcompare.bench.floating import load_model, pinocchio_reference
from eomcompare.formulations import get_formulation


def _relative(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def test_projected_mass_matrix_is_kanes_on_the_sphere():
    ms = load_model("two_body")
    own = get_formulation("modified_lagrange", count_ops=False).derive(ms)
    peer = get_formulation("kane", count_ops=False).derive(ms)
    assert own.extras["projection"] == "q' = F(q) u"
    assert [str(s) for s in own.unknowns] == [str(s) for s in peer.unknowns]
    # The projected mass matrix is written symmetric (one triangle).
    M = own.mass_matrix
    assert all(M[i, j] == M[j, i] for i in range(M.rows) for j in range(i))
    a, b = own.numeric(backend="lambdify"), peer.numeric(backend="lambdify")
    for seed in range(3):
        t0, q, qd = ms.states.random_state(seed=seed)
        Ma, fa = a.mass_matrix_and_forcing(t0, a.state_from(q, qd, t0))
        Mb, fb = b.mass_matrix_and_forcing(t0, b.state_from(q, qd, t0))
        assert _relative(Ma, Mb) < 1e-12
        # The same M and the same u': the same f = M u'.
        assert _relative(fa, fb) < 1e-11


@pytest.mark.slow
def test_floating_quadruped_agrees_with_pinocchio_aba():
    """Solo-12: 14 s of CPU, derivation and numeric model (before the
    sparse projection: over 10 minutes).  ANYmal, the
    other quadruped of the floating bench (a free root and four legs of
    three revolute joints, as Solo-12), took 20 s more; its file's import
    is held to Pinocchio by kane in tests/systems/test_urdf_robots_exact.py,
    and modified_lagrange's projection on the floating two-body system in
    tests/systems/test_urdf_floating.py."""
    ms = load_model("solo12")
    ref = pinocchio_reference(ms)
    model = (
        get_formulation("modified_lagrange", count_ops=False)
        .derive(ms)
        .numeric(backend="lambdify")
    )
    for seed in range(5):
        t0, q, qd = ms.states.random_state(seed=seed)
        u = ms.states.speeds_from_rates(t0, q, qd)
        assert _relative(model.speed_derivatives(t0, q, u), ref(q, u)) < 1e-10
