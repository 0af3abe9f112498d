"""Lagrange multipliers, public, in one sign convention for every formulation.

Convention
----------
The multipliers are returned one per velocity constraint row, in the order
of the declaration's constraints: the holonomic constraints (their time
derivatives ``Phi_q q' + Phi_t = 0``), then the nonholonomic ones, each row
``C_i(t, q) q' + c_i = 0`` exactly as declared (no rescaling, no sign
change).  When redundant velocity constraints were dropped
(:mod:`eomcompare.systems.redundancy`), there is one multiplier per row kept, in the
order of ``ms.velocity_constraints``.  With ``C`` the Jacobian of those rows with respect to the
coordinate rates, the equations of motion read

    M q'' = f + C^T lambda,

so ``C^T lambda`` is the generalized constraint force acting on the
coordinates (for a holonomic constraint ``Phi``, ``lambda_i grad Phi_i``).

sympy's ``LagrangesMethod`` takes ``lam_coeffs = -C`` and writes its
equations ``LM.eom`` as ``M q'' - f - lam_coeffs^T lambda_sympy = 0``, i.e.
``M q'' = f - C^T lambda_sympy``: the multipliers of ``LM.eom`` and of
``LM.solve_multipliers()`` are the negatives of these, ``lambda_sympy =
-lambda``.  Its ``mass_matrix_full`` and ``forcing_full``, however, put
``lam_coeffs^T = -C^T`` in the multipliers' columns with the forcing of
``M q'' = f``, so the multipliers that solve them are this project's
``lambda``; the ``sympy_lagrange`` peer solves those, and its multipliers
equal ``lagrange``'s.

Formulations without multipliers (Kane's, Gibbs–Appell's, the modified
Lagrange equations) raise :class:`~eomcompare.formulations.base.UnsupportedSystemError`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["multipliers"]


def multipliers(model, t0, q, qd) -> np.ndarray:
    """The multipliers of ``model`` at the state ``(t, q, q')``.

    Parameters
    ----------
    model : NumericModel
        ``eom.numeric()`` of a formulation with multipliers.
    t0 : float
    q, qd : array_like
        All coordinates and their rates, consistent with the constraints.

    Returns
    -------
    ndarray
        One value per constraint row (holonomic, then nonholonomic), in the
        convention ``M q'' = f + C^T lambda`` (see the module's docstring);
        empty for a system without constraints.

    Raises
    ------
    UnsupportedSystemError
        For a formulation that has no multipliers.
    """
    return model.multipliers(t0, q, qd)
