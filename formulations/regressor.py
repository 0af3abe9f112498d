"""The identification model of a joint tree: joint forces linear in the
inertial parameters, ``tau = Y(q, q', q'') beta``, and the base inertial
parameters ``beta``.

Standard parameters (SYMORO's; Khalil & Dombre, *Modeling, Identification
and Control of Robots*, ch. 9), ten per body k, in this order::

    XXk, XYk, XZk, YYk, YZk, ZZk   inertia tensor about the body's origin
    MXk, MYk, MZk                  first moment m c about the origin
    Mk                             mass

all in the body's frame (for :func:`eomcompare.systems.robots.mdh_system` Khalil's
link frame j; for a URDF robot the child link's frame, as Pinocchio's
``computeJointTorqueRegressor``, whose ten per joint are the same numbers
ordered ``M, MX, MY, MZ, XX, XY, YY, XZ, YZ, ZZ``).  The dynamics is
linear in them: column c of ``Y`` is the backward pass of the recursion of
:func:`eomcompare.formulations.kane_recursive.inverse_dynamics` with parameter c one
and the others zero.

Base parameters (Gautier & Khalil, "Direct calculation of minimum set of
inertial parameters of serial robots", IEEE Trans. Robotics and Automation
6(3), 1990; Khalil & Dombre ch. 9): some standard parameters have no effect
on ``tau`` and others act only in fixed combinations.  Regrouping, from the
tips inwards, for body j on joint j:

* revolute joint about the joint frame's axis e_i (the other two axes
  e_a, e_b in order): the part of body j symmetric about the axis -- the
  inertia ``I_bb (1 - e_i e_i^T)``, the first moment along the axis and the
  mass -- moves with the parent whatever q_j is, so it is carried into the
  parent's parameters (the joint's fixed placement applied, with the
  parallel-axis terms); body j keeps ``I_aa - I_bb`` (SYMORO's XXR_j for
  e_i = z) and loses ``I_bb``, its axial first moment and its mass;
* prismatic joint: body j turns with its parent, so its whole inertia
  tensor is carried into the parent's (rotated by the placement); its
  first moments and mass stay;
* what is carried into the ground has no effect, and a parameter whose
  column of ``Y`` vanishes at random states and random geometry (e.g. the
  first link's inertia off a vertical first axis) is removed.

For axes along e_z and Khalil's modified DH these are the book's formulas
(``XX_{j-1} += YY_j + 2 r_j MZ_j + r_j^2 M_j``, ``MX_{j-1} += d_j M_j``,
...).  The result is checked numerically by Gautier's QR method: the
number of base parameters must equal the rank of the standard regressor
stacked over random states, and :func:`base_parameters` raises if the rules
leave a dependency they do not cover.
"""

from __future__ import annotations

import weakref
from functools import cached_property

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

from .base import UnsupportedSystemError
from .kane_recursive import inverse_dynamics, recursive_kinematics, tree_record

__all__ = [
    "STANDARD_NAMES",
    "standard_parameters",
    "standard_parameter_values",
    "inverse_dynamics_regressor",
    "base_parameters",
    "numerical_rank",
]

#: The ten standard parameters of a body, in order.
STANDARD_NAMES = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")
# Index of the inertia entries in the 3 x 3 tensor, in STANDARD_NAMES order.
_TENSOR = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))


def _tree(ms):
    """The links of the tree's record (systems.joint_tree), undamped."""
    links = tree_record(ms, "the inverse-dynamics regressor").links
    if any(s.damping is not None for s in links):
        raise ValueError(
            f"{ms.name}: joint damping is not an inertial parameter; the "
            "regressor is of the rigid-body model (declare without damping)"
        )
    return links


def standard_parameters(ms) -> tuple:
    """The 10 n standard parameter symbols of a joint tree (see the module),
    body by body: ``XX1, XY1, ..., M1, XX2, ...``."""
    n = len(_tree(ms))
    return tuple(
        sm.Symbol(f"{name}{k}", real=True)
        for k in range(1, n + 1)
        for name in STANDARD_NAMES
    )


def _body_parameters(values):
    """(I_O, m c, m) of a body from its ten standard parameters."""
    xx, xy, xz, yy, yz, zz, mx, my, mz, m = values
    J = sm.Matrix([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    return J, sm.Matrix([mx, my, mz]), m


def standard_parameter_values(ms) -> dict:
    """``{standard symbol: expression}``: the declaration's mass, mass
    centre and central inertia turned into the standard parameters
    (:func:`eomcompare.formulations.kane_recursive.origin_inertia`), e.g. ``MX1 = m1
    cx1`` and ``XX1 = I1_xx + m1 (cy1^2 + cz1^2)``."""
    out = {}
    p = iter(standard_parameters(ms))
    for link in _tree(ms):
        m, mc, IO = link.inertia.at_origin()
        for i, j in _TENSOR:
            out[next(p)] = sm.expand(IO[i, j])
        for x in mc:
            out[next(p)] = x
        out[next(p)] = m
    return out


def _standard_regressor(ms):
    """Y column by column: tau is linear in the standard parameters, so
    column c is the backward pass of the recursion with parameter c one and
    every other zero (the forward pass computed once)."""
    links = _tree(ms)
    params = standard_parameters(ms)
    t = me.dynamicsymbols._t
    q = list(ms.coordinates)
    qd = [x.diff(t) for x in q]
    qdd = [x.diff(t, 2) for x in q]
    kinematics = recursive_kinematics(ms, qdd)
    zero = (sm.S.Zero, sm.zeros(3, 1), sm.zeros(3, 3))
    columns = []
    for c in range(len(params)):
        unit = [0] * len(params)
        unit[c] = 1
        k = c // 10
        J, mc, m = _body_parameters(unit[10 * k : 10 * k + 10])
        inertia = [zero] * len(links)
        inertia[k] = (m, mc, J)
        columns.append(
            inverse_dynamics(ms, qdd, inertia=inertia, kinematics=kinematics)
        )
    # The speeds of a joint tree are the joint rates (declare_tree).
    Y = sm.Matrix.hstack(*columns).xreplace(dict(zip(ms.speeds, qd)))
    return Y, params


class _Regressor:
    """The standard regressor of one declaration: ``Y`` (immutable), its
    parameters, and ``Y`` as a numeric function of (q, q', q'', geometry),
    lambdified on first use.

    Both are functions of the declaration's tree record and symbols only;
    the geometry's values are read from the declaration at each
    evaluation (:meth:`stacked`), never kept.
    """

    def __init__(self, ms):
        Y, self.params = _standard_regressor(ms)
        self.Y = sm.ImmutableMatrix(Y)
        self.tree = ms.tree
        self.coordinates = tuple(ms.coordinates)

    @cached_property
    def function(self):
        """``(geometry, f)``: ``f(q, q', q'', geometry values)`` is ``Y``."""
        return _lambdified(self.coordinates, self.Y)

    def stacked(self, ms, states, seed):
        """:func:`_stack` of ``Y``, lambdified once."""
        return _evaluate(ms, *self.function, states, seed)


#: The regressor of each declaration, built once and kept beside it (as
#: numeric.model keeps the generated functions beside their equations):
#: base_parameters, inverse_dynamics_regressor and numerical_rank read the
#: same Y and its numeric form, and the customised Newton-Euler's base
#: parameters (newton_euler.base_inertia) ask for them at every
#: derivation.  An entry lives as long as its declaration; one made for
#: another tree record (the declaration's ``tree`` replaced) is made again.
_REGRESSORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _regressor(ms) -> _Regressor:
    got = _REGRESSORS.get(ms)
    if got is None or got.tree is not getattr(ms, "tree", None):
        got = _REGRESSORS[ms] = _Regressor(ms)
    return got


def inverse_dynamics_regressor(ms, base=False):
    """``(Y, parameters)`` with ``Y * parameters`` the joint forces of a
    joint tree's rigid-body inverse dynamics (gravity included), ``Y`` a
    sympy Matrix in q, q', q'' and the geometry.

    ``Y`` is derived once per declaration and kept beside it (with its
    lambdified form, which :func:`base_parameters` and
    :func:`numerical_rank` read); each call returns a copy of its own.

    Parameters
    ----------
    ms : MechanicalSystem
        Declared by :func:`eomcompare.systems.declare_tree` (URDF robots, the DH and
        modified-DH arms, ``spatial_chain``), without joint damping.
    base : bool
        False: ``parameters`` are the 10 n standard symbols
        (:func:`standard_parameters`, see the module for their meaning),
        ``Y`` n x 10 n.  True: ``parameters`` are the base parameters as
        expressions of the standard ones (:func:`base_parameters`), ``Y``
        their columns only.

    Raises
    ------
    UnsupportedSystemError
        When ``ms`` is not a joint tree.
    ValueError
        When a joint is damped.
    """
    reg = _regressor(ms)
    if not base:
        return sm.Matrix(reg.Y), sm.Matrix(reg.params)
    _, beta, _, columns = _base(ms, reg)
    return sm.Matrix(reg.Y[:, columns]), sm.Matrix(beta)


def numerical_rank(ms, Y=None, *, columns=None, states=30, seed=0) -> int:
    """Rank of the standard regressor stacked over random states (q, q',
    q'' uniform) and random geometry (each parameter's default scaled by a
    factor in [0.5, 1.5]): the number of base parameters, by Gautier's QR
    method (singular values above ``1e-9`` of the largest).

    ``Y`` in the place of the standard regressor (of the declaration's
    coordinates and parameters); ``columns``: the rank of those columns
    only (e.g. the parameters an assumption set keeps)."""
    if Y is None:
        W = _regressor(ms).stacked(ms, states, seed)
    else:
        W = _stack(ms, Y, states, seed)
    if columns is not None:
        W = W[:, list(columns)]
    s = np.linalg.svd(W, compute_uv=False)
    return int(np.sum(s > 1e-9 * s[0]))


def _stack(ms, Y, states, seed):
    """Y at ``states`` random states, one block of rows each, the geometry
    at random values (seeded by ``seed``)."""
    return _evaluate(ms, *_lambdified(ms.coordinates, Y), states, seed)


def _lambdified(coordinates, Y):
    """``(geometry, f)``: the symbols of Y other than the coordinates and
    time, in order, and ``f(q, q', q'', geometry values)`` = Y."""
    t = me.dynamicsymbols._t
    q = list(coordinates)
    x = [*q, *(v.diff(t) for v in q), *(v.diff(t, 2) for v in q)]
    geometry = sorted(Y.free_symbols - {t}, key=str)
    plain = sm.symbols(f"_x0:{len(x)}")
    # xreplace matches q'' and q' as whole nodes before q inside them.
    Yp = Y.xreplace(dict(zip(x, plain)))
    return geometry, sm.lambdify([*plain, *geometry], Yp, cse=True)


def _evaluate(ms, geometry, f, states, seed):
    """:func:`_stack` by ``f`` of :func:`_lambdified`, the geometry's
    values the declaration's, each scaled at random."""
    q = list(ms.coordinates)
    rng = np.random.default_rng(seed)
    values = [ms.parameters[s] * rng.uniform(0.5, 1.5) for s in geometry]
    n = len(q)
    rows = [
        np.asarray(f(*rng.uniform(-2, 2, 3 * n), *values), dtype=float)
        for _ in range(states)
    ]
    return np.vstack(rows)


def _regroup(ms, params):
    """The standard parameters of each body after the regrouping rules
    (see the module): ``[(I_O, m c, m)]`` of expressions."""
    links = _tree(ms)
    bodies = [
        list(_body_parameters(params[10 * k : 10 * k + 10])) for k in range(len(links))
    ]
    for k in range(len(links), 0, -1):
        s = links[k - 1]
        a = list(s.joint.axis)
        if sorted(abs(x) for x in a) != [0, 0, 1]:
            raise UnsupportedSystemError(
                f"{ms.name}: joint {s.name!r} is not about (along) a "
                "coordinate axis of its frame; the regrouping rules need one"
            )
        i = [abs(x) for x in a].index(1)
        J, mc, m = bodies[k - 1]
        E = sm.eye(3)
        if s.joint.turns:
            ia, ib = [x for x in range(3) if x != i]
            ei = E[:, i]
            Jt, st, mt = J[ib, ib] * (E - ei * ei.T), mc[i] * ei, m
            J = J.copy()
            J[ia, ia] = J[ia, ia] - J[ib, ib]
            J[ib, ib] = 0
            mc = mc.copy()
            mc[i] = 0
            bodies[k - 1] = [J, mc, sm.S.Zero]
        else:
            Jt, st, mt = J, sm.zeros(3, 1), sm.S.Zero
            bodies[k - 1] = [sm.zeros(3, 3), mc, m]
        if s.parent == 0:
            continue  # carried into the ground: no effect
        R, p = sm.Matrix(s.rotation), sm.Matrix(s.offset)
        sp = R * st
        Jp = (
            R * Jt * R.T
            + mt * ((p.T * p)[0] * E - p * p.T)
            + 2 * (p.T * sp)[0] * E
            - p * sp.T
            - sp * p.T
        )
        P = bodies[s.parent - 1]
        bodies[s.parent - 1] = [P[0] + Jp, P[1] + sp + mt * p, P[2] + mt]
    return bodies


def _base(ms, reg):
    params = reg.params
    bodies = _regroup(ms, params)
    grouped = []
    for J, mc, m in bodies:
        grouped += [J[i, j] for i, j in _TENSOR] + list(mc) + [m]
    grouped = [sm.expand(g) for g in grouped]
    W = reg.stacked(ms, states=30, seed=1)
    scale = np.max(np.abs(W))
    columns = [
        c
        for c, g in enumerate(grouped)
        if g != 0 and np.max(np.abs(W[:, c])) > 1e-10 * scale
    ]
    Wb = W[:, columns]
    sv = np.linalg.svd(Wb, compute_uv=False)
    rank = int(np.sum(sv > 1e-9 * sv[0]))
    if rank != len(columns):
        raise UnsupportedSystemError(
            f"{ms.name}: the regrouping rules leave {len(columns)} parameters "
            f"where the regressor has rank {rank}: a special geometry the "
            "general rules do not cover"
        )
    beta = [grouped[c] for c in columns]
    names = []
    for c in columns:
        base_name = str(params[c])
        names.append(
            sm.Symbol(
                base_name if beta[len(names)] == params[c] else _r_name(base_name),
                real=True,
            )
        )
    return params, beta, dict(zip(names, beta)), columns


def _r_name(name):
    """SYMORO's name of a regrouped parameter: ``XX2`` -> ``XXR2``."""
    head = name.rstrip("0123456789")
    return f"{head}R{name[len(head) :]}"


def base_parameters(ms):
    """``(standard, base, grouping)``: the standard parameter symbols of a
    joint tree (:func:`standard_parameters`), its base parameters as
    expressions of them (and of the geometry), and ``{name: expression}``
    naming each base parameter as SYMORO does (``ZZR1``, ``XXR2``, ``MX3``:
    an ``R`` where the standard parameter has others grouped into it).

    The regrouping rules of the module, then the parameters without effect
    removed; ``tau = Y_b base`` with ``Y_b`` the regressor's columns of the
    kept parameters (:func:`inverse_dynamics_regressor` with ``base=True``).

    Raises
    ------
    UnsupportedSystemError
        When ``ms`` is not a joint tree, when a joint axis is not a
        coordinate axis of its frame, or when the rules leave a dependency
        (the count would exceed the regressor's numerical rank).
    """
    standard, beta, grouping, _ = _base(ms, _regressor(ms))
    return standard, tuple(beta), grouping
