"""Declarations as sympy's tests and Kane & Levinson's exercises write
them: accepted, each formulation answering or refusing with the reason."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from pydy_ports import kane_levinson_ex_11_7, kane_levinson_ex_11_7_asserted

from formulations import FORMULATIONS, get_formulation

t = me.dynamicsymbols._t


def _at(expr, ms, q, u):
    """``expr`` in (q, u) and constants at numbers (no q' in it)."""
    rep = dict(zip(ms.coordinates, q)) | dict(zip(ms.speeds, u))
    return np.array(
        sm.Matrix(expr).xreplace(dict(ms.parameters)).xreplace(rep).evalf(),
        dtype=float,
    )


# ----------------------------------------------------------------------
# Kane & Levinson ex. 11.7: the coincident point B^ (PyDy's script)
# ----------------------------------------------------------------------
def test_coincident_point_is_no_obstacle_to_any_formulation():
    """B^'s velocity is not its position's rate, but only a load acts
    there: nothing is recorded against the declaration, and every
    formulation gives the book's u' = X^-1 Y."""
    ms = kane_levinson_ex_11_7()
    assert ms.declaration_analysis.velocities_are_derivatives
    X, Y = kane_levinson_ex_11_7_asserted()
    for name in FORMULATIONS:
        model = get_formulation(name).derive(ms).numeric()
        for seed in range(2):
            t0, q, qd = ms.random_state(seed)
            u = ms.speeds_from_rates(t0, q, qd)
            want = np.linalg.solve(_at(X, ms, q, u), _at(Y, ms, q, u)).ravel()
            np.testing.assert_allclose(
                model.speed_derivatives(t0, q, u),
                want,
                rtol=1e-10,
                atol=1e-10,
                err_msg=f"{name}, seed {seed}",
            )
