"""Kane's method, written from partial velocities.

For generalized speeds u (independent u_ind, dependent u_dep with
``u_dep = C u_ind + c`` from the velocity constraints), Kane's equations are

    F~_r + F*~_r = 0,     F~_r = F_r + sum_s F_s C_sr   (r independent),

with the generalized active forces ``F_r = sum_P v^P_r . R_P + sum_B w^B_r . T_B``
and the generalized inertia forces
``F*_r = sum_B [-m_B a_B . v^B_r - (I_B . alpha_B + w_B x I_B . w_B) . w^B_r]``.
The dependent speed rates stay unknowns and the velocity constraints,
differentiated once, close the system, so the unknowns are all u'.

Constraint forces (:class:`eomcompare.systems.ConstraintForce`) are recovered with
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

from eomcompare.symbolic.calculus import jacobian, symmetric_from_lower
from eomcompare.symbolic.frames import (
    FrameAlgebra,
    body_kinematics,
    generalized_forces,
    natural_frame,
)

from .base import (
    Derivation,
    Formulation,
    LazyExtras,
    UnsupportedSystemError,
    constraint_samples,
    register,
    solve_dependent_speeds,
    speed_form,
)
from .composite import composite_body_equations

__all__ = ["Kane", "KaneComposite", "generalized_active_forces"]

t = me.dynamicsymbols._t


def generalized_active_forces(system, qdot, speeds, fa: FrameAlgebra):
    """F_r for every speed, and the partial velocities of the load points
    and angular velocities of the loaded frames (by name)."""
    pv, pw = {}, {}
    F = generalized_forces(
        system.loads, system.frame, fa, speeds, qdot, partials=(pv, pw)
    )
    return F, pv, pw


def mass_matrix_and_inertia_forcing(kins, n):
    """Holonomic mass matrix sum m v_r.v_s + w_r.I.w_s and the inertia forcing
    F*_r with the speed rates set to zero."""
    M = sm.zeros(n, n)
    symmetric = True
    for k in kins:
        M += k.body.mass * (k.vr.T * k.vr)
        if k.w is not None:
            M += k.wr.T * k.inertia * k.wr
            symmetric = symmetric and k.inertia == k.inertia.T
    if symmetric:
        # w_r . I w_s and w_s . I w_r come out as different expressions of
        # one value when I is symmetric: written by the lower triangle, the
        # symmetry is visible to the code generators.
        M = symmetric_from_lower(M)
    return M, inertia_forcing(kins, n)


def inertia_forcing(kins, n):
    """F*_r with the speed rates set to zero, body by body."""
    f = sm.zeros(n, 1)
    for k in kins:
        f += k.vr.T * k.inertia_force()
        if k.w is not None:
            f += k.wr.T * k.inertia_torque()
    return f


@register
class Kane(Formulation):
    """Kane's method from partial velocities (this project's implementation).

    Velocities, accelerations and partial velocities are formed as
    components in each body's own frame (:mod:`eomcompare.symbolic.frames`),
    and the mass matrix directly as sum m v_r.v_s + w_r.I.w_s, body by
    body, so no Jacobian of the inertia forces is taken.  This is the
    method as the textbook forms it, on every system: the same sums
    whatever the size or structure.  The composite-body sums and the
    articulated-body recursion, which rearrange Kane's equations for
    trees, are formulations of their own (``kane_composite``,
    :class:`KaneComposite`; ``kane_articulated``,
    :class:`eomcompare.formulations.articulated_body.KaneArticulated`).

    Parameters
    ----------
    count_ops : bool
        See :class:`~eomcompare.formulations.base.Formulation`.
    """

    name = "kane"
    peer = "sympy_kane"
    version = "4"
    summary = "Kane's method: partial velocities, F_r + F*_r = 0"
    handles_holonomic = True
    handles_nonholonomic = True
    handles_rheonomic = True
    uses_multipliers = False

    def _composite_sums(self, ms, qdot, speeds, fa, stage):
        """Mass matrix and forcing of all speeds summed otherwise than body
        by body, or None for the body-by-body sums (Kane's own).  The hook
        :class:`KaneComposite` fills."""
        return None

    def _derive(self, ms, stage) -> Derivation:
        kin = ms.kinematics
        qdot = dict(kin.qdot)
        u = list(ms.speeds)
        p = len(ms.u_ind)
        m = len(ms.u_dep)
        ud = [ui.diff(t) for ui in u]
        ud_zero = {x: 0 for x in ud}
        fa = FrameAlgebra()
        with stage("constraints"):
            A = sm.Matrix(kin.velocity_constraint_A)
            b = sm.Matrix(kin.velocity_constraint_b)
            C = (
                solve_dependent_speeds(
                    A[:, p:], -A[:, :p], constraint_samples(ms, A[:, p:])
                )
                if m
                else sm.zeros(0, p)
            )
        # Mass matrix and forcing of all speeds (F_r + F*_r with the speed
        # rates set to zero): body by body, or by the sums of a subclass.
        composite = self._composite_sums(ms, qdot, u, fa, stage)
        # The body-by-body kinematics and F_r give the direct sums; with
        # other sums they only serve the extras (partial velocities, F_r and
        # F*_r), which are then computed when first read.
        kins = None
        if composite is None:
            with stage("kinematics"):
                kins = body_kinematics(ms.bodies, ms.frame, qdot, u, fa)
            with stage("F_r"):  # generalized active forces
                F, load_pv, load_pw = generalized_active_forces(ms, qdot, u, fa)
            with stage("F*_r"):  # generalized inertia forces, F*_r = -Mh u' + fstar
                Mh, fstar = mass_matrix_and_inertia_forcing(kins, len(u))
            rhs = F + fstar
        else:
            Mh, rhs = composite
        with stage("assembly"):
            if m:
                M = Mh[:p, :] + C.T * Mh[p:, :]
                f = rhs[:p, :] + C.T * rhs[p:, :]
                vc = A * sm.Matrix(u) + b
                dvc = vc.diff(t).xreplace(qdot)
                M = M.col_join(jacobian(dvc, ud))
                f = f.col_join(-dvc.xreplace(ud_zero))
            else:
                M, f = Mh, rhs
        with stage("constraint_forces"):
            if ms.constraint_forces and kins is None:
                kins = body_kinematics(ms.bodies, ms.frame, qdot, u, fa)
            forces = {
                cf.name: _constraint_force(ms, cf, kins, qdot, fa)
                for cf in ms.constraint_forces
            }
            if ms.u_aux:
                from .auxiliary import kane_forces

                forces |= kane_forces(ms)
        eager = {"constraint_forces": forces} if forces else {}
        if composite is None:
            extras = (
                _extras(ms, kins, load_pv, load_pw, C, F, fstar, Mh, ud, fa) | eager
            )
        else:

            def by_products():
                k = kins or body_kinematics(ms.bodies, ms.frame, qdot, u, fa)
                F, load_pv, load_pw = generalized_active_forces(ms, qdot, u, fa)
                # F* from the bodies, not rhs - F: the composite forcing
                # holds the loads in another form, which would not cancel.
                return _extras(
                    ms,
                    k,
                    load_pv,
                    load_pw,
                    C,
                    F,
                    inertia_forcing(k, len(u)),
                    Mh,
                    ud,
                    fa,
                )

            extras = LazyExtras(eager, _EXTRAS_KEYS, by_products)
        return speed_form(ms, M, f, extras)


_EXTRAS_KEYS = (
    "partial_velocities",
    "partial_angular_velocities",
    "nonholonomic_partial_velocities",
    "nonholonomic_partial_angular_velocities",
    "generalized_active_forces",
    "generalized_inertia_forces",
    "dependent_speed_coefficients",
)


def _extras(ms, kins, load_pv, load_pw, C, F, fstar, Mh, ud, fa):
    p = len(ms.u_ind)
    pv, pw = {}, {}
    for k in kins:
        pv[k.body.masscenter.name] = (k.vr, k.frame)
        if k.w is not None:
            pw[k.frame.name] = (k.wr, k.frame)
    for name, val in load_pv.items():
        pv.setdefault(name, val)
    for name, val in load_pw.items():
        pw.setdefault(name, val)
    holonomic = not C.shape[0]
    T = sm.eye(p).col_join(C) if not holonomic else None

    def vectors(d, cols=None):
        # cols None: the identity (holonomic partial velocities as they are);
        # symbolic products with an identity matrix are not free.
        out = {}
        for name, (mat, E) in d.items():
            mat = mat if cols is None else mat * cols
            out[name] = tuple(fa.vector(mat[:, r], E) for r in range(mat.shape[1]))
        return out

    # F* = -M u' + f*, entry by entry: a matrix product would distribute
    # the sign over every term of the large entries of M.
    Fstar = sm.Matrix(
        [
            fstar[i] - sm.Add(*[Mh[i, j] * ud[j] for j in range(len(ud))])
            for i in range(len(ud))
        ]
    )
    holo_pv, holo_pw = vectors(pv), vectors(pw)
    return {
        "partial_velocities": holo_pv,
        "partial_angular_velocities": holo_pw,
        "nonholonomic_partial_velocities": holo_pv if holonomic else vectors(pv, T),
        "nonholonomic_partial_angular_velocities": holo_pw
        if holonomic
        else vectors(pw, T),
        "generalized_active_forces": sm.ImmutableMatrix(F if holonomic else T.T * F),
        "generalized_inertia_forces": sm.ImmutableMatrix(
            Fstar if holonomic else T.T * Fstar
        ),
        "dependent_speed_coefficients": sm.ImmutableMatrix(C),
    }


def _constraint_force(ms, cf, kins, qdot, fa):
    """Component of a constraint force from its auxiliary speed's equation.

    With the auxiliary motion a translation along d (force) or a rotation
    about d through P (torque), the partial velocity of a point X of the
    moving bodies is d, or d x r_PX; the force's own generalized active
    force is its component along d.  At zero auxiliary speed Kane's equation
    of the auxiliary speed reads R + F_aux + F*_aux = 0, where the inertia
    forces include the speed-rate terms (the result is in t, q, u, u').
    """
    N = ms.frame
    d = cf.direction
    moving = set(cf.bodies)
    points = {b.masscenter for b in cf.bodies} | set(cf.points)
    frames = {b.frame for b in cf.bodies if isinstance(b, me.RigidBody)} | set(
        cf.frames
    )
    ud = sm.Matrix([u.diff(t) for u in ms.speeds])

    def v_aux(X, E):
        vec = d if cf.kind == "force" else d.cross(X.pos_from(cf.point))
        return fa.components(vec, E)

    total = sm.S.Zero
    for k in kins:
        if k.body not in moving:
            continue
        a_full = -k.body.mass * (k.vr * ud) + k.inertia_force()
        total += a_full.dot(v_aux(k.body.masscenter, k.frame))
        if cf.kind == "torque" and k.w is not None:
            T_full = -k.inertia * (k.wr * ud) + k.inertia_torque()
            total += T_full.dot(fa.components(d, k.frame))
    for load in ms.loads:
        E = natural_frame(load.vector, N)
        comps = fa.components(load.vector, E)
        if isinstance(load, me.Force):
            if load.point in points:
                total += comps.dot(v_aux(load.point, E))
        elif cf.kind == "torque" and load.frame in frames:
            total += comps.dot(fa.components(d, E))
    return sm.sympify(-total).xreplace(qdot)


@register
class KaneComposite(Kane):
    """Kane's equations summed by nested composite bodies: O(n^2) terms
    for a chain where the body-by-body sums of ``kane`` have O(n^3).

    The same equations as ``kane``'s (the generalized inertia and active
    forces of each speed, F_r + F*_r = 0), rearranged: with every speed
    moving its outboard bodies as one twist, the bodies moved by two speeds
    form one composite whose mass, first moment and inertia about a point
    of the axis give M_rs in O(1) terms (see :mod:`eomcompare.formulations.composite`).
    Only for trees of twists (joint chains and trees with relative
    coordinates, with or without velocity constraints on top); any other
    system (absolute angles, rolling contact, bodies moved by a speed other
    than as one rigid motion) is refused with the reason.  Partial velocities and the
    other extras of ``kane`` are computed when first read.

    Parameters
    ----------
    count_ops : bool
        See :class:`~eomcompare.formulations.base.Formulation`.
    """

    name = "kane_composite"
    peer = "sympy_kane"
    version = "1"
    summary = "Kane's equations by composite-body sums (trees of twists)"
    needs_tree = True
    in_default_comparison = False

    def _composite_sums(self, ms, qdot, speeds, fa, stage):
        with stage("composite_bodies"):
            got = composite_body_equations(ms, qdot, speeds, fa)
        if got is None:
            raise UnsupportedSystemError(
                f"{self.name}: system {ms.name!r} is not a tree of twists "
                "(every speed moving the bodies it moves as one rigid "
                "motion, the sets of bodies moved by the speeds nested or "
                "disjoint): its composite bodies are not defined; use kane"
            )
        return got
