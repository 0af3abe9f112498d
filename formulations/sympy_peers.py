"""sympy.physics.mechanics' KanesMethod and LagrangesMethod behind the
project's contract, so every comparison can set the field's standard tool
beside this project's formulations in one run.

Where sympy's method fails on a system, the failure is reported as the
peer's limitation: :class:`UnsupportedSystemError` carrying sympy's reason.
"""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from .base import (
    Derivation,
    Formulation,
    UnsupportedSystemError,
    rate_form,
    register,
    speed_form,
)
from .redundant_coordinates import norm_constraints, speeds_in_rates

__all__ = ["SympyKane", "SympyLagrange"]

t = me.dynamicsymbols._t


@register
class SympyKane(Formulation):
    """sympy's ``KanesMethod`` on the declaration, unchanged."""

    name = "sympy_kane"
    summary = "peer: sympy.physics.mechanics.KanesMethod"
    handles_holonomic = True
    handles_nonholonomic = True
    is_peer = True

    def _derive(self, ms, stage) -> Derivation:
        sysm = ms.system
        loads = list(ms.loads) or None
        with stage("kanes_equations"):
            try:
                km = me.KanesMethod(
                    sysm.frame,
                    q_ind=list(ms.q_ind),
                    u_ind=list(ms.u_ind),
                    kd_eqs=list(ms.kdes),
                    q_dependent=list(ms.q_dep),
                    u_dependent=list(ms.u_dep),
                    configuration_constraints=list(ms.holonomic_constraints),
                    velocity_constraints=list(ms.velocity_constraints),
                    u_auxiliary=list(ms.u_aux),
                    explicit_kinematics=False,
                )
                km.kanes_equations(list(sysm.bodies), loads)
                M, f = km.mass_matrix, km.forcing
                aux = sm.Matrix(km.auxiliary_eqs) if ms.u_aux else None
            except Exception as exc:  # sympy's own reason, passed on
                raise UnsupportedSystemError(
                    f"sympy_kane: sympy's KanesMethod failed on "
                    f"{ms.name!r}: {type(exc).__name__}: {exc}"
                ) from exc
        extras = {}
        if aux is not None:
            # sympy's own auxiliary equations, Fr + Fr* = 0, solved by this
            # project's solve: outside the peer's guard, so that an error
            # of the solve fails as the project's own, not as the peer's.
            from .auxiliary import _solve

            extras["constraint_forces"] = _solve(ms, aux)
        # KanesMethod orders u as u_ind + u_dep, as the contract does.
        return speed_form(ms, M, f, extras)


@register
class SympyLagrange(Formulation):
    """sympy's ``LagrangesMethod`` on the declaration.

    LagrangesMethod works in coordinate rates.  Declarations are written in
    generalized speeds, so the speeds are replaced by their expressions in
    (q, q') from the kinematic differential equations: the kinetic energy
    is formed by this wrapper and passed as the Lagrangian (every load,
    gravity included, goes into ``forcelist``), and each load acts at a
    stand-in point (or frame) whose velocity is the original one in (q, q').
    """

    name = "sympy_lagrange"
    summary = "peer: sympy.physics.mechanics.LagrangesMethod"
    handles_holonomic = True
    handles_nonholonomic = True
    uses_multipliers = True
    is_peer = True
    needs_velocities_from_positions = True
    handles_quaternions = True

    def _derive(self, ms, stage) -> Derivation:
        N = ms.frame
        # Unit quaternions: w = 4 F^T q' and the unit-norm constraint
        # given to LagrangesMethod (formulations.redundant_coordinates).
        u_map = speeds_in_rates(ms)
        hol = list(ms.holonomic_constraints) + list(norm_constraints(ms))

        def sub(vec):
            return vec.applyfunc(lambda e: e.xreplace(u_map)) if vec != 0 else vec

        with stage("lagrangian"):
            T = sm.S.Zero
            for body in ms.bodies:
                v = sub(body.masscenter.vel(N))
                T += body.mass * v.dot(v) / 2
                if isinstance(body, me.RigidBody):
                    w = sub(body.frame.ang_vel_in(N)).express(body.frame)
                    T += w.dot(body.central_inertia.dot(w)) / 2
            forcelist = []
            for i, load in enumerate(ms.loads):
                if isinstance(load, me.Force):
                    P = me.Point(f"_lp{i}")
                    P.set_vel(N, sub(load.point.vel(N)))
                    forcelist.append((P, sub(load.vector)))
                else:
                    F = me.ReferenceFrame(f"_lf{i}")
                    F.set_ang_vel(N, sub(load.frame.ang_vel_in(N)))
                    forcelist.append((F, sub(load.vector)))
            nonhol = [
                sm.sympify(c).xreplace(u_map) for c in ms.nonholonomic_constraints
            ]
        with stage("lagranges_equations"):
            try:
                lm = me.LagrangesMethod(
                    T,
                    list(ms.coordinates),
                    forcelist=forcelist or None,
                    frame=N,
                    hol_coneqs=hol or None,
                    nonhol_coneqs=nonhol or None,
                )
                lm.form_lagranges_equations()
                n = len(ms.coordinates)
                M = lm.mass_matrix_full[n:, n:]
                f = lm.forcing_full[n:, :]
                lam = list(lm.lam_vec)
            except Exception as exc:
                raise UnsupportedSystemError(
                    f"sympy_lagrange: sympy's LagrangesMethod failed on "
                    f"{ms.name!r}: {type(exc).__name__}: {exc}"
                ) from exc
        return rate_form(
            ms,
            M,
            f,
            multipliers=lam,
            extras={
                "constraint_forces_unsupported": "sympy's LagrangesMethod has no auxiliary speeds"
            },
        )
