"""The Gibbs-Appell equations, from the acceleration energy.

For each body B (mass m, central inertia I, mass-centre acceleration a,
angular velocity w and angular acceleration alpha in the inertial frame)
the acceleration energy ("energy of accelerations", Gibbs' function) is

    S_B = 1/2 m a.a + 1/2 alpha.I.alpha + alpha.(w x I.w)  (+ terms free of u')

and S = sum_B S_B.  With the dependent speeds eliminated, S is a function of
the independent speed rates u_r' (r = 1..p), and the equations of motion are

    dS/du_r' = F~_r,     F~_r = F_r + sum_s F_s C_sr,

with ``F_r`` the generalized active forces of all speeds and ``C`` from the
velocity constraints ``A u + b = 0`` solved for the dependent speeds,
``u_dep = C u_ind + c`` (``C = -A_dep^-1 A_ind``).  Differentiating the
constraints once gives the dependent speed RATES,

    u_dep' = C u_ind' + d,     d = -A_dep^-1 (A' u + b'),

which is how they leave S.  Holonomic constraints enter the same way,
through their differentiated (velocity) form; explicit time is kept
wherever the declaration has it.

Choices, and why
----------------
* **Terms dropped from S.**  Only the derivatives of S with respect to u'
  enter the equations, so terms free of u' are irrelevant.  The rotational
  part uses the form above: the term 1/2 (w x I.w).I^-1.(w x I.w) of the
  exact expression is free of u' and never formed; the translational
  term 1/2 m a.a is kept whole.  The returned
  ``extras["acceleration_energy"]`` is the S so formed.
* **Unknowns and state.**  S is formed in all speed rates and the
  dependent ones leave the derivative through the chain rule,
  ``dS/du_r' + sum_s C_sr dS/du_s' = F~_r`` (r independent); the dependent
  rates stay unknowns beside them, fixed by the velocity constraints
  differentiated once (``A u' + e = 0`` appended), so the unknowns are all
  u' and the state is (q, u), as for Kane's method here.  Eliminating the
  dependent rates instead (a p x p mass matrix) carries the differentiated
  constraints into every body's acceleration: the wheelbarrow costs 252
  raw ops appended against 449 substituted.
* **How S is formed.**  The method as printed: S = sum_B S_B built from
  the kinematic expressions (each body's in components of a frame moving
  with it, :func:`~eomcompare.symbolic.frames.body_kinematics`), summed over the
  bodies and differentiated with respect to the speed rates, each shared
  subtree differentiated once (:func:`eomcompare.symbolic.calculus.derivative`).

Other ways of forming S (in placeholder components, per body, expanded,
through sympy's direction cosines) and of eliminating the dependent rates
(substituted before forming S, or after differentiating) compute the same
equations at other costs.  They are experiments, not the method, and live
in the benchmark: :class:`eomcompare.bench.methods.GibbsAppellVariant`, measured by
``python -m eomcompare.bench.methods gibbs_appell``.  This class has no
branch of theirs: its derivation is one sequence of steps, each a method
(``_constraints``, ``_kinematics``, ``_energy``, ``_gradient``,
``_split``, ``_extras``), of which the variants replace the ones they
change (and, for the eliminations, the derivation).

Extras published: ``acceleration_energy`` (S, in (t, q, u) and all the
speed rates), ``generalized_active_forces`` (the F~ column),
``dependent_speed_coefficients`` (C), ``dependent_speed_rates`` (empty:
the dependent rates are unknowns; a bench variant that eliminates them
publishes {u_dep': C u_ind' + d}), ``constraint_forces`` (of the auxiliary
speeds and of the ``ConstraintForce`` requests, one route for both:
:func:`eomcompare.formulations.auxiliary.gibbs_appell_forces`).
"""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.calculus import (
    derivative,
    jacobian,
    linear_split,
    substitute,
    symmetric_from_lower,
)
from eomcompare.symbolic.frames import (
    FrameAlgebra,
    add,
    body_kinematics,
    cross,
    dot,
    generalized_forces,
    matmul,
    sub,
)

from .base import (
    Derivation,
    Formulation,
    constraint_samples,
    register,
    solve_dependent_speeds,
    speed_form,
)

__all__ = [
    "GibbsAppell",
    "acceleration_energy",
    "generalized_active_forces",
]

t = me.dynamicsymbols._t


def _energy_entries(ms, qdot, speeds, frames):
    """Per body ``{"body", "a", "w", "alpha", "inertia"}``: whole
    accelerations (speed-rate terms included) in components of a frame
    moving with the body (:func:`~eomcompare.symbolic.frames.body_kinematics`)."""
    kins = body_kinematics(
        ms.bodies, ms.frame, qdot, speeds, frames, speed_rates=True, partials=False
    )
    return [
        {"body": k.body, "a": k.a, "w": k.w, "alpha": k.alpha, "inertia": k.inertia}
        for k in kins
    ]


def _dot(x, y):
    # sympy's dot product, without forming the products by zero (each asks
    # the assumptions system whether the other factor is finite).
    return dot(x, y)


def acceleration_energy(entry, *, drop_free_terms=True, zero=None):
    """Acceleration energy of one body from its kinematics.

    Parameters
    ----------
    entry : dict
        ``{"body", "a", "w", "alpha", "inertia"}``, 3x1 component matrices
        in one frame, the whole accelerations of
        :func:`~eomcompare.symbolic.frames.body_kinematics` (``w``, ``alpha``,
        ``inertia`` are None for a particle).
    drop_free_terms : bool
        Leave out the u'-free part of ``1/2 m a.a`` and of
        ``1/2 alpha.I.alpha`` (then ``zero``, the substitution setting the
        speed rates to zero, is required).  The term
        ``1/2 (w x I.w).I^-1.(w x I.w)`` is never formed.

    Returns
    -------
    sympy.Expr
        ``1/2 m a.a + 1/2 alpha.I.alpha + alpha.(w x I.w)`` (up to terms
        free of the speed rates).

    Examples
    --------
    >>> import sympy as sm, sympy.physics.mechanics as me
    >>> m, xdd = sm.symbols("m xdd")
    >>> P = me.Particle("P", me.Point("P"), m)
    >>> acceleration_energy({"body": P, "a": sm.Matrix([xdd, 0, 0]),
    ...                      "w": None, "alpha": None, "inertia": None},
    ...                     drop_free_terms=False)
    m*xdd**2/2
    """
    m = entry["body"].mass
    a, w, alpha, I = entry["a"], entry["w"], entry["alpha"], entry["inertia"]
    if drop_free_terms:
        if zero is None:
            raise ValueError("drop_free_terms=True needs the zero substitution")
        a0 = a.xreplace(zero)
        a1 = sub(a, a0)
        S = m * (_dot(a1, a1) / 2 + _dot(a1, a0))
    else:
        S = m * _dot(a, a) / 2
    if w is None:
        return S
    gyro = cross(w, matmul(I, w))
    if drop_free_terms:
        al0 = alpha.xreplace(zero)
        al1 = sub(alpha, al0)
        S += _dot(al1, matmul(I, al1)) / 2 + _dot(al1, add(matmul(I, al0), gyro))
    else:
        S += _dot(alpha, matmul(I, alpha)) / 2 + _dot(alpha, gyro)
    return S


def generalized_active_forces(system, speeds, qdot, frames=None):
    """F_r = sum_P v^P_r . R_P + sum_B w^B_r . T_B for every speed.

    Each load is dotted in the frame its vector is written in.
    """
    return generalized_forces(
        system.loads, system.frame, frames or FrameAlgebra(), speeds, qdot
    )


@register
class GibbsAppell(Formulation):
    """The Gibbs-Appell equations dS/du_r' = F~_r in the independent speeds,
    S the acceleration energy summed over the bodies as printed (see the
    module docstring); one algorithm, without options.

    Parameters
    ----------
    count_ops : bool
        As for every :class:`~eomcompare.formulations.base.Formulation`.

    Examples
    --------
    >>> from eomcompare.formulations import get_formulation
    >>> eom = get_formulation("gibbs_appell").derive("double_pendulum")
    >>> eom.mass_matrix.shape
    (2, 2)
    """

    name = "gibbs_appell"
    peer = "sympy_kane"
    version = "3"
    summary = "Gibbs-Appell: dS/du_r' = F~_r, S the acceleration energy"
    handles_holonomic = True
    handles_nonholonomic = True
    handles_rheonomic = True
    uses_multipliers = False

    def _frames(self):
        """The vector algebra of one derivation (it caches direction cosine
        matrices): successive rotations about one axis merged, as in Kane's
        method here."""
        return FrameAlgebra()

    def _energy(self, entries, zero):
        """``(S, parts)``: the acceleration energy from the bodies'
        ``entries`` (accelerations written in stand-ins of the speed rates;
        ``zero`` sets those to zero) and what :meth:`_gradient`
        differentiates.  S summed over the bodies: the method as
        printed."""
        S = sm.Add(*[acceleration_energy(en, drop_free_terms=False) for en in entries])
        return S, [S]

    def _gradient(self, entries, parts, zs):
        """dS/dz for the stand-ins ``zs`` of the speed rates, a column:
        the sum of ``parts`` differentiated, each shared subtree once
        (:func:`eomcompare.symbolic.calculus.derivative`, sympy's very expression)."""
        return sm.Matrix(
            [
                sm.Add(*[derivative(S, zr, memo) for S in parts])
                for zr, memo in ((zr, {}) for zr in zs)
            ]
        )

    @staticmethod
    def _constraints(ms):
        """``(A, samples, dvc, e)``: the velocity constraints ``A u + b = 0``,
        A_dep at sample states (for the pivots), and the constraints
        differentiated once, ``dvc = A u' + e``, with e their u'-free part
        (all None without dependent speeds)."""
        kin = ms.kinematics
        if not ms.u_dep:
            return None, None, None, None
        p = len(ms.u_ind)
        u = list(ms.speeds)
        A = sm.Matrix(kin.velocity_constraint_A)
        b = sm.Matrix(kin.velocity_constraint_b)
        samples = constraint_samples(ms, A[:, p:])
        dvc = (A * sm.Matrix(u) + b).diff(t).xreplace(dict(kin.qdot))
        e = dvc.xreplace({x.diff(t): 0 for x in u})
        return A, samples, dvc, e

    def _kinematics(self, ms):
        """``(frames, entries)``: the vector algebra of the derivation and
        each body's kinematics (:func:`_energy_entries`)."""
        frames = self._frames()
        entries = _energy_entries(ms, dict(ms.kinematics.qdot), list(ms.speeds), frames)
        return frames, entries

    @staticmethod
    def _stand_ins(entries, to_z):
        """The speed rates in the accelerations replaced by their
        stand-ins (in place)."""
        for entry in entries:
            entry["a"] = entry["a"].xreplace(to_z)
            if entry["alpha"] is not None:
                entry["alpha"] = entry["alpha"].xreplace(to_z)

    @staticmethod
    def _split(G, zs, from_z, shared, symmetric):
        """``(M, G0)``: G, linear in the stand-ins ``zs``, as its
        coefficients and its z-free part.

        The entries share most of their subtrees: substitute rebuilds each
        once, where xreplace walks it once per occurrence (the same
        expressions; most of the time on an 8-link chain).  The
        coefficients, read off G's terms in one walk, hold no z, and
        neither does the z-free part (F~ never held one), so only a mass
        matrix differentiated otherwise is walked to put the speed rates
        back (``from_z``; ``shared`` is the memo of that walk).  With
        ``symmetric`` (no dependent speeds) M is the Hessian of S in the
        speed rates, written by its lower triangle so that code
        generators see it.
        """
        split = linear_split(G, zs)
        if split is None:
            M = jacobian(G, zs)
            M = sm.Matrix(M.rows, M.cols, substitute(M, from_z, shared))
            G0 = substitute(G, {zi: 0 for zi in zs})
        else:
            M, G0 = split
        return (symmetric_from_lower(M) if symmetric else M), G0

    def _extras(self, ms, S, Ft, C, dep_rates, stage) -> dict:
        """The published by-products, with the constraint forces of the
        auxiliary speeds and the ``ConstraintForce`` requests."""
        extras = {
            "acceleration_energy": S,
            "generalized_active_forces": sm.ImmutableMatrix(Ft),
            "dependent_speed_coefficients": sm.ImmutableMatrix(C),
            "dependent_speed_rates": dep_rates,
        }
        if ms.u_aux or ms.constraint_forces:
            with stage("constraint_forces"):
                from .auxiliary import gibbs_appell_forces

                extras["constraint_forces"] = {
                    k: sm.sympify(v).xreplace(dep_rates)
                    for k, v in gibbs_appell_forces(ms).items()
                }
        return extras

    def _derive(self, ms, stage) -> Derivation:
        u = list(ms.speeds)
        p = len(ms.u_ind)
        ud = [ui.diff(t) for ui in u]
        with stage("constraints"):
            A, samples, dvc, e = self._constraints(ms)
            C = (
                sm.zeros(0, p)
                if A is None
                else solve_dependent_speeds(A[:, p:], -A[:, :p], samples)
            )
        # Differentiate with respect to plain symbols standing for u'.
        zs = sm.symbols(f"_gz0:{len(ud)}")
        to_z = dict(zip(ud, zs))
        with stage("kinematics"):
            frames, entries = self._kinematics(ms)
        with stage("acceleration_energy"):
            self._stand_ins(entries, to_z)
            S, parts = self._energy(entries, {zi: 0 for zi in zs})
        with stage("differentiation"):
            G = self._gradient(entries, parts, zs)
            if A is not None:
                # The dependent rates leave through the chain rule.
                G = G[:p, :] + C.T * G[p:, :]
        with stage("generalized_active_forces"):
            F = generalized_active_forces(ms, u, dict(ms.kinematics.qdot), frames)
            Ft = F[:p, :] + C.T * F[p:, :]
        from_z = {zi: ud[i] for i, zi in enumerate(zs)}
        shared: dict = {}
        with stage("assembly"):
            M, G0 = self._split(G, zs, from_z, shared, symmetric=A is None)
            f = sub(Ft, sm.Matrix(G.rows, 1, G0))
            if A is not None:
                # The dependent rates stay unknowns, fixed by the velocity
                # constraints differentiated once.
                M = M.col_join(jacobian(dvc, ud))
                f = f.col_join(-e)
        S = substitute([S], from_z, shared)[0]
        return speed_form(ms, M, f, self._extras(ms, S, Ft, C, {}, stage))
