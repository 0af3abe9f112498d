"""Kane's method, written from partial velocities.

For generalized speeds u (independent u_ind, dependent u_dep with
``u_dep = C u_ind + c`` from the velocity constraints), Kane's equations are

    F~_r + F*~_r = 0,     F~_r = F_r + sum_s F_s C_sr   (r independent),

with the generalized active forces ``F_r = sum_P v^P_r . R_P + sum_B w^B_r . T_B``
and the generalized inertia forces
``F*_r = sum_B [-m_B a_B . v^B_r - (I_B . alpha_B + w_B x I_B . w_B) . w^B_r]``.
The dependent speed rates stay unknowns and the velocity constraints,
differentiated once, close the system, so the unknowns are all u'.

Constraint forces (:class:`systems.ConstraintForce`) are recovered with
auxiliary, non-contributing speeds: the equation of the auxiliary speed,
evaluated at zero auxiliary speed, is solved for the force.  They appear in
``eom.extras["constraint_forces"]`` as expressions in (t, q, u, u') and
numerically through ``eom.numeric().constraint_forces(t, q, qd)``.

Extras published:
``partial_velocities``, ``partial_angular_velocities`` (name -> tuple of
vectors, one per speed, holonomic), ``nonholonomic_partial_velocities``,
``nonholonomic_partial_angular_velocities`` (one per independent speed),
``generalized_active_forces``, ``generalized_inertia_forces`` (the F~, F*~
columns), ``dependent_speed_coefficients`` (C), ``constraint_forces``.
"""
from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from .base import Derivation, Formulation, register, speed_form

__all__ = ["Kane", "body_kinematics", "generalized_forces"]

t = me.dynamicsymbols._t


def _sub_vec(vec, rep):
    return vec.applyfunc(lambda e: e.xreplace(rep)) if vec != 0 else vec


def _body_frame(body):
    return getattr(body, "frame", None) if isinstance(body, me.RigidBody) else None


def body_kinematics(system, qdot):
    """Velocity, acceleration, angular velocity and angular acceleration of
    each body in the inertial frame, in (t, q, u, u').

    Angular quantities are expressed in the body's own frame, where its
    inertia is constant.  Returns a list of dicts (one per body).
    """
    N = system.frame
    out = []
    for body in system.bodies:
        v = _sub_vec(body.masscenter.vel(N), qdot)
        a = _sub_vec(v.dt(N), qdot)
        entry = {"body": body, "v": v, "a": a, "w": None, "alpha": None}
        B = _body_frame(body)
        if B is not None:
            w = _sub_vec(B.ang_vel_in(N), qdot).express(B)
            # d/dt in N equals d/dt in B for the angular velocity.
            alpha = _sub_vec(w.dt(B), qdot)
            entry["w"], entry["alpha"] = w, alpha
        out.append(entry)
    return out


def _inertia_force_terms(entry):
    """(-m a, -(I.alpha + w x I.w)) of one body."""
    body = entry["body"]
    R = -body.mass * entry["a"]
    if entry["w"] is None:
        return R, None
    I = body.central_inertia
    w, alpha = entry["w"], entry["alpha"]
    T = -(I.dot(alpha) + w.cross(I.dot(w)))
    return R, T


def generalized_forces(system, kin_entries, speeds, qdot):
    """(F, F*, partial velocities, partial angular velocities) for ``speeds``."""
    N = system.frame
    n = len(speeds)
    F = [sm.S.Zero] * n
    Fs = [sm.S.Zero] * n
    pv, pw = {}, {}
    for e in kin_entries:
        body = e["body"]
        R, T = _inertia_force_terms(e)
        vr = [e["v"].diff(u, N, var_in_dcm=False) for u in speeds]
        pv[body.masscenter.name] = tuple(vr)
        if e["w"] is not None:
            B = _body_frame(body)
            wr = [e["w"].diff(u, B, var_in_dcm=False) for u in speeds]
            pw[B.name] = tuple(wr)
        for r in range(n):
            Fs[r] += R.dot(vr[r])
            if T is not None:
                Fs[r] += T.dot(pw[_body_frame(body).name][r])
    for load in system.loads:
        if isinstance(load, me.Force):
            v = _sub_vec(load.point.vel(N), qdot)
            vr = [v.diff(u, N, var_in_dcm=False) for u in speeds]
            pv.setdefault(load.point.name, tuple(vr))
            for r in range(n):
                F[r] += load.vector.dot(vr[r])
        else:
            w = _sub_vec(load.frame.ang_vel_in(N), qdot)
            wr = [w.diff(u, N, var_in_dcm=False) for u in speeds]
            pw.setdefault(load.frame.name, tuple(wr))
            for r in range(n):
                F[r] += load.vector.dot(wr[r])
    return sm.Matrix(F), sm.Matrix(Fs), pv, pw


@register
class Kane(Formulation):
    """Kane's method from partial velocities (this project's implementation)."""

    name = "kane"
    version = "1"
    summary = "Kane's method: partial velocities, F_r + F*_r = 0"
    handles_holonomic = True
    handles_nonholonomic = True
    handles_rheonomic = True
    uses_multipliers = False

    def _derive(self, ms, stage) -> Derivation:
        N = ms.frame
        kin = ms.kinematics
        qdot = dict(kin.qdot)
        u = list(ms.speeds)
        u_ind, u_dep = list(ms.u_ind), list(ms.u_dep)
        p = len(u_ind)
        ud = [ui.diff(t) for ui in u]
        ud_zero = {x: 0 for x in ud}
        with stage("constraints"):
            A = sm.Matrix(kin.velocity_constraint_A)
            b = sm.Matrix(kin.velocity_constraint_b)
            if u_dep:
                C = A[:, p:].LUsolve(-A[:, :p])
            else:
                C = sm.zeros(0, p)
        with stage("kinematics"):
            entries = body_kinematics(ms.system, qdot)
        with stage("generalized_forces"):
            F, Fs, pv, pw = generalized_forces(ms.system, entries, u, qdot)
            Ft = F[:p, :] + C.T * F[p:, :]
            Fst = Fs[:p, :] + C.T * Fs[p:, :]
        with stage("assembly"):
            M_dyn = -Fst.jacobian(ud)
            f_dyn = Ft + Fst.xreplace(ud_zero)
            if u_dep:
                vc = A * sm.Matrix(u) + b
                dvc = vc.diff(t).xreplace(qdot)
                M_con = dvc.jacobian(ud)
                f_con = -dvc.xreplace(ud_zero)
                M = M_dyn.col_join(M_con)
                f = f_dyn.col_join(f_con)
            else:
                M, f = M_dyn, f_dyn
        with stage("constraint_forces"):
            forces = {cf.name: _constraint_force(ms, cf, entries, qdot)
                      for cf in ms.constraint_forces}
        nh_pv = {k: tuple(v[r] + sum((v[p + s] * C[s, r]
                                      for s in range(len(u_dep))), sm.S.Zero * N.x)
                          for r in range(p)) for k, v in pv.items()}
        nh_pw = {k: tuple(v[r] + sum((v[p + s] * C[s, r]
                                      for s in range(len(u_dep))), sm.S.Zero * N.x)
                          for r in range(p)) for k, v in pw.items()}
        extras = {
            "partial_velocities": pv,
            "partial_angular_velocities": pw,
            "nonholonomic_partial_velocities": nh_pv,
            "nonholonomic_partial_angular_velocities": nh_pw,
            "generalized_active_forces": sm.ImmutableMatrix(Ft),
            "generalized_inertia_forces": sm.ImmutableMatrix(Fst),
            "dependent_speed_coefficients": sm.ImmutableMatrix(C),
        }
        if forces:
            extras["constraint_forces"] = forces
        return speed_form(ms, M, f, extras)


def _constraint_force(ms, cf, entries, qdot):
    """Component of a constraint force from its auxiliary speed's equation.

    With the auxiliary motion a translation along d (force) or a rotation
    about d through P (torque), the partial velocity of a point X of the
    moving bodies is d, or d x r_PX; the force's own generalized active
    force is its component along d.  At zero auxiliary speed Kane's equation
    of the auxiliary speed reads R + F_aux + F*_aux = 0.
    """
    N = ms.frame
    d = cf.direction
    moving = set(cf.bodies)
    points = {b.masscenter for b in cf.bodies} | set(cf.points)
    frames = {_body_frame(b) for b in cf.bodies} - {None}

    def v_aux(X):
        if cf.kind == "force":
            return d
        return d.cross(X.pos_from(cf.point))

    total = sm.S.Zero
    for e in entries:
        body = e["body"]
        if body not in moving:
            continue
        R, T = _inertia_force_terms(e)
        total += R.dot(v_aux(body.masscenter))
        if cf.kind == "torque" and T is not None:
            total += T.dot(d)
    for load in ms.loads:
        if isinstance(load, me.Force):
            if load.point in points:
                total += load.vector.dot(v_aux(load.point))
        elif cf.kind == "torque" and load.frame in frames:
            total += load.vector.dot(d)
    return sm.sympify(-total).xreplace(qdot)
