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
  exact expression is free of u' and never formed.  The translational term
  is kept whole by the default strategy ``"summed"`` and by
  ``"components"`` (where its u'-free part costs nothing, see below);
  strategy ``"split"`` drops it too, forming
  ``1/2 m a1.a1 + m a1.a0`` with ``a = a1 + a0`` (``a1`` linear in u',
  ``a0 = a(u'=0)``), and likewise for alpha.  The returned
  ``extras["acceleration_energy"]`` is the S so formed.
* **Unknowns and state** (option ``elimination``).  By default
  (``"append"``) S is formed in all speed rates and the dependent ones
  leave the derivative through the chain rule,
  ``dS/du_r' + sum_s C_sr dS/du_s' = F~_r`` (r independent); the dependent
  rates stay unknowns beside them, fixed by the velocity constraints
  differentiated once (``A u' + e = 0`` appended), so the unknowns are all
  u' and the state is (q, u), as for Kane's method here.  With
  ``"substitute"`` the unknowns are the p independent speed rates only (a
  p x p mass matrix: the two equations of the wheelbarrow): the dependent
  rates ``C u_ind' + d`` replace u_dep' in a and alpha before S is formed;
  ``"chain"`` substitutes them after differentiating.  In both reduced
  forms the dependent speeds STAY in the state (q, u), their rates
  expressed through the unknowns in ``state_rates`` and
  ``accelerations``: inside S they appear only as state values, which is
  exact on the constraint manifold because S is differentiated with
  respect to rates only, and substituting ``u_dep = C u_ind + c`` into
  every velocity is avoided.  Integrating x' then drifts off the velocity
  constraints exactly as Kane's state does (``d/dt (A u + b) = 0`` holds
  to round-off).  The default is ``"append"`` because ``d`` carries the
  differentiated constraints into every body's acceleration: the
  wheelbarrow costs 252 raw ops appended against 449 substituted, and
  the Whipple bicycle's reduced form had not finished after ten minutes
  where the appended one derives with Kane's operation counts (table
  below).
* **How S is formed** (option ``strategy``) dominates the cost.  The
  default is the textbook one; the others compute the same derivatives
  another way:

  ``"summed"`` (default)
      S = sum_B S_B built from the kinematic expressions, summed over the
      bodies, and differentiated with respect to the speed rates: the
      method as printed.  The derivatives are sympy's very expressions,
      each shared subtree differentiated once
      (:func:`symbolic.calculus.derivative`).
  ``"components"``
      per body, S_B is written in placeholder symbols for the components
      of a and alpha (a 3- or 6-variable quadratic), differentiated with
      respect to them, and only then are the kinematics substituted:
      ``dS/du_r' = sum_B dS_B/dx_B . dx_B/du_r'`` (x_B = (a, alpha)); the
      fastest, with Kane's operation counts.
  ``"split"``
      per body, u'-free parts dropped (above), S_B built from the
      kinematic expressions and differentiated by sympy per body.
  ``"full"``
      as ``"split"`` with the whole translational term (per body rather
      than summed).
  ``"expanded"``
      S summed and fully expanded into a polynomial in u' (the textbook
      procedure by hand), then differentiated.

  The measured differences have two causes.  Expanding multiplies out the
  trigonometric products of the kinematics (n_link_pendulum, n = 5: 9714
  raw ops against 3478 in components; four-bar 353 against 137) and is the
  slowest (12.8 s against 2.6 s at n = 5, minutes from n = 6); on the
  smallest systems its collection of like terms makes it the most compact
  (double pendulum 78 against 103).  Differentiating the squares of
  kinematic expressions with sympy (``"split"``, ``"full"``,
  ``"summed"``) distributes the factor 2 of ``d(x^2) = 2 x x'`` into the
  sum x', so the mass matrix carries products like
  ``(l1 cos q2 + l2/2)(2 l1 cos q2 + l2)/2`` that cse cannot merge;
  differentiating in placeholder components avoids that and matches
  Kane's operation counts here (Kane's method is the same computation
  arranged by partial velocities).  Per body or summed makes no
  difference to the result, as sympy differentiates a sum term by term.

  Substituting the dependent rates before forming S is cheaper than
  after (wheelbarrow 449 against 1074 raw ops, rolling disc 1813 against
  4111), and appending them as unknowns cheaper still (252, 1750).
  Option ``frames``: ``"merged"`` (default) uses the shared
  :class:`~symbolic.frames.FrameAlgebra`; ``"sympy"`` sympy's
  composed direction cosines, which grow as products of sines and
  cosines along a chain (n_link_pendulum, n = 5: 8804 raw ops against
  3478).

The measurements behind the defaults (seconds and operation counts of
every variant beside Kane's, on the catalogue and on n_link_pendulum) are
made by ``python -m bench.methods gibbs_appell``.
Choice: ``strategy="summed"`` (the textbook S, within the project's
derivation-time targets: on n_link_pendulum a fraction of sympy's
KanesMethod at n = 10 and seconds at n = 20), ``elimination="append"``,
``frames="merged"``.  ``strategy="components"`` earns its place as the
fast variant: about half the derivation time and Kane's operation counts
(fewer after cse than ``"summed"``).

Extras published: ``acceleration_energy`` (S, in (t, q, u) and the speed
rates it is written in: all of them with ``"append"``, the independent
ones otherwise), ``generalized_active_forces`` (the F~ column),
``dependent_speed_coefficients`` (C), ``dependent_speed_rates``
({u_dep': C u_ind' + d}; empty with ``"append"``), ``constraint_forces``
(of the auxiliary speeds and of the ``ConstraintForce`` requests, one route
for both: :func:`formulations.auxiliary.gibbs_appell_forces`).
"""

from __future__ import annotations

import dataclasses

import sympy as sm
import sympy.physics.mechanics as me

from symbolic.calculus import (
    derivative,
    jacobian,
    linear_split,
    substitute,
    symmetric_from_lower,
)
from symbolic.frames import (
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

STRATEGIES = ("components", "split", "full", "summed", "expanded")
ELIMINATIONS = ("append", "substitute", "chain")
FRAMES = ("merged", "sympy")


class _SympyFrames:
    """Vector components through sympy's own direction cosine matrices."""

    @staticmethod
    def components(vec, frame, rep=None):
        if vec == 0:
            return sm.zeros(3, 1)
        m = vec.to_matrix(frame)
        return m.xreplace(rep) if rep else m

    @staticmethod
    def dcm(A, B):
        return A.dcm(B)


def _energy_entries(ms, qdot, speeds, frames):
    """Per body ``{"body", "a", "w", "alpha", "inertia"}``: whole
    accelerations (speed-rate terms included) in components of a frame
    moving with the body (:func:`~symbolic.frames.body_kinematics`)."""
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
        :func:`~symbolic.frames.body_kinematics` (``w``, ``alpha``,
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


def _energy_in_components(entry):
    """S_B in placeholder components of (a, alpha), its gradient with
    respect to them (the kinematics substituted after differentiating),
    and S_B with the kinematics substituted."""
    body = entry["body"]
    rigid = entry["w"] is not None
    X = sm.Matrix(sm.symbols(f"_ga0:{6 if rigid else 3}"))
    fake = {
        "body": body,
        "a": X[:3, :],
        "w": entry["w"],
        "alpha": X[3:, :] if rigid else None,
        "inertia": entry["inertia"],
    }
    S = acceleration_energy(fake, drop_free_terms=False)
    grad = sm.Matrix([S.diff(xi) for xi in X])
    x = entry["a"] if not rigid else entry["a"].col_join(entry["alpha"])
    rep = dict(zip(X, x))
    return S.xreplace(rep), grad.xreplace(rep)


def generalized_active_forces(system, speeds, qdot, frames=None):
    """F_r = sum_P v^P_r . R_P + sum_B w^B_r . T_B for every speed.

    Each load is dotted in the frame its vector is written in.
    """
    return generalized_forces(
        system.loads, system.frame, frames or FrameAlgebra(), speeds, qdot
    )


@register
class GibbsAppell(Formulation):
    """The Gibbs-Appell equations dS/du_r' = F~_r in the independent speeds.

    Parameters
    ----------
    strategy : {"summed", "components", "split", "full", "expanded"}
        How the acceleration energy is formed (see the module docstring);
        default ``"summed"``, the textbook S.
    elimination : {"append", "substitute", "chain"}
        Dependent speed rates kept as unknowns with the differentiated
        velocity constraints appended, or eliminated (p x p equations) by
        substitution before S is formed or after differentiation.
    frames : {"merged", "sympy"}
        Vector components through
        :class:`~symbolic.frames.FrameAlgebra` (successive rotations
        about one axis merged, as in Kane's method here) or through sympy's
        own direction cosine matrices.
    count_ops : bool
        As for every :class:`~formulations.base.Formulation`.

    Examples
    --------
    >>> from formulations import get_formulation
    >>> eom = get_formulation("gibbs_appell").derive("double_pendulum")
    >>> eom.mass_matrix.shape
    (2, 2)
    """

    name = "gibbs_appell"
    peer = "sympy_kane"
    version = "2"
    summary = "Gibbs-Appell: dS/du_r' = F~_r, S the acceleration energy"
    handles_holonomic = True
    handles_nonholonomic = True
    handles_rheonomic = True
    uses_multipliers = False

    def __init__(
        self,
        *,
        strategy: str = "summed",
        elimination: str = "append",
        frames: str = "merged",
        count_ops: bool = True,
    ):
        super().__init__(count_ops=count_ops)
        self._set_options(
            strategy=(strategy, STRATEGIES),
            elimination=(elimination, ELIMINATIONS),
            frames=(frames, FRAMES),
        )

    def _frames(self):
        # One instance per derivation: it caches direction cosine matrices.
        return FrameAlgebra() if self.frames == "merged" else _SympyFrames()

    def _derive(self, ms, stage) -> Derivation:
        kin = ms.kinematics
        qdot = dict(kin.qdot)
        u = list(ms.speeds)
        u_ind, u_dep = list(ms.u_ind), list(ms.u_dep)
        p = len(u_ind)
        ud = [ui.diff(t) for ui in u]
        ud_ind, ud_dep = ud[:p], ud[p:]
        with stage("constraints"):
            A = sm.Matrix(kin.velocity_constraint_A)
            b = sm.Matrix(kin.velocity_constraint_b)
            if u_dep:
                A_dep = A[:, p:]
                samples = constraint_samples(ms, A_dep)
                # A u' + e = 0 is the velocity constraint differentiated once.
                dvc = (A * sm.Matrix(u) + b).diff(t).xreplace(qdot)
                e = dvc.xreplace({x: 0 for x in ud})
                if self.elimination == "append":
                    C = solve_dependent_speeds(A_dep, -A[:, :p], samples)
                    dep_rates = {}
                else:
                    Cd = solve_dependent_speeds(
                        A_dep, (-A[:, :p]).row_join(-e), samples
                    )
                    C, d = Cd[:, :p], Cd[:, p:]
                    dep_rates = {
                        ud_dep[s]: (C[s, :] * sm.Matrix(ud_ind))[0] + d[s]
                        for s in range(len(u_dep))
                    }
            else:
                C = sm.zeros(0, p)
                dep_rates = {}
        with stage("kinematics"):
            frames = self._frames()
            entries = _energy_entries(ms, qdot, u, frames)
            if self.elimination == "substitute" and dep_rates:
                for entry in entries:
                    entry["a"] = entry["a"].xreplace(dep_rates)
                    if entry["alpha"] is not None:
                        entry["alpha"] = entry["alpha"].xreplace(dep_rates)
        # Differentiate with respect to plain symbols standing for u'.
        rates = ud_ind if self.elimination == "substitute" else ud
        zs = sm.symbols(f"_gz0:{len(rates)}")
        to_z = dict(zip(rates, zs))
        zero = {zi: 0 for zi in zs}
        with stage("acceleration_energy"):
            for entry in entries:
                entry["a"] = entry["a"].xreplace(to_z)
                if entry["alpha"] is not None:
                    entry["alpha"] = entry["alpha"].xreplace(to_z)
            drop = self.strategy == "split"
            if self.strategy == "components":
                S_bodies, grads = [], []
                for en in entries:
                    S_B, grad = _energy_in_components(en)
                    S_bodies.append(S_B)
                    grads.append(grad)
            else:
                S_bodies = [
                    acceleration_energy(en, drop_free_terms=drop, zero=zero)
                    for en in entries
                ]
            if self.strategy in ("summed", "expanded"):
                S_total = sm.Add(*S_bodies)
                if self.strategy == "expanded":
                    S_total = sm.expand(S_total)
                S_parts = [S_total]
            else:
                S_total = sm.Add(*S_bodies)
                S_parts = S_bodies
        with stage("differentiation"):
            if self.strategy == "components":
                # dS/du_r' = sum_B dS_B/dx_B . dx_B/du_r' with x_B the
                # stacked components (a, alpha) of body B.
                G = sm.zeros(len(zs), 1)
                for en, grad in zip(entries, grads):
                    x = (
                        en["a"]
                        if en["alpha"] is None
                        else en["a"].col_join(en["alpha"])
                    )
                    G += jacobian(x, zs).T * grad
            else:
                # sympy's derivative, computed once per shared subtree
                # (symbolic.calculus.derivative gives the same expression).
                G = sm.Matrix(
                    [
                        sm.Add(*[derivative(S, zr, memo) for S in S_parts])
                        for zr, memo in ((zr, {}) for zr in zs)
                    ]
                )
            if self.elimination != "substitute" and u_dep:
                G = G[:p, :] + C.T * G[p:, :]
            if self.elimination == "chain" and u_dep:
                dep_z = {to_z[k]: v.xreplace(to_z) for k, v in dep_rates.items()}
                G = G.xreplace(dep_z)
                S_total = S_total.xreplace(dep_z)
                zs = zs[:p]
                zero = {zi: 0 for zi in zs}
        with stage("generalized_active_forces"):
            F = generalized_active_forces(ms, u, qdot, frames)
            Ft = F[:p, :] + C.T * F[p:, :]
        with stage("assembly"):
            # The entries share most of their subtrees: substitute rebuilds
            # each once, where xreplace walks it once per occurrence (the
            # same expressions; most of the time on an 8-link chain).
            # G is linear in the stand-ins z: its coefficients and its
            # z-free part in one walk.  The coefficients, read off its
            # terms, hold no z, and neither does the z-free part (F~ never
            # held one), so only a mass matrix differentiated otherwise is
            # walked to put the speed rates back.
            from_z = {zi: ud[i] for i, zi in enumerate(zs)}
            shared: dict = {}
            split = linear_split(G, zs)
            if split is None:
                M = jacobian(G, zs)
                M = sm.Matrix(M.rows, M.cols, substitute(M, from_z, shared))
                G0 = substitute(G, zero)
            else:
                M, G0 = split
            if not u_dep:
                # The Hessian of S in the speed rates: symmetric, written
                # by its lower triangle so that code generators see it.
                M = symmetric_from_lower(M)
            f = sub(Ft, sm.Matrix(G.rows, 1, G0))
            if self.elimination == "append" and u_dep:
                # The dependent rates stay unknowns, fixed by the velocity
                # constraints differentiated once.
                M = M.col_join(jacobian(dvc, ud))
                f = f.col_join(-e)
        extras = {
            "acceleration_energy": substitute([S_total], from_z, shared)[0],
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
        if self.elimination == "append" or not u_dep:
            return speed_form(ms, M, f, extras)
        base = speed_form(ms, M, f)
        n_q = len(ms.coordinates)
        state_rates = sm.Matrix(base.state_rates)
        accelerations = sm.Matrix(base.accelerations)
        if dep_rates:
            state_rates = state_rates[: n_q + p, :].col_join(
                sm.Matrix([dep_rates[x] for x in ud_dep])
            )
            accelerations = accelerations.xreplace(dep_rates)
        return dataclasses.replace(
            base,
            unknowns=tuple(ud_ind),
            state_rates=state_rates,
            accelerations=accelerations,
            extras=extras,
        )
