"""Customised recursive Newton-Euler inverse dynamics of a joint tree, in
the style of Khalil & Kleinfinger (SYMORO; Khalil & Dombre, *Modeling,
Identification and Control of Robots*, ch. 9), and the dynamics written in
the base inertial parameters.

Every vector is kept in components of its own link frame and the link's
inertia is taken in the standard parameters (inertia tensor ``J`` about the
link origin, first moment ``MS = m c``, mass ``M``; see
:mod:`eomcompare.formulations.regressor`).  The recursion, for link j with parent
i = j - 1 and joint axis a (a coordinate axis of the joint frame)::

    w_j   = A w_i + qd_j a                          (revolute; A w_i prismatic)
    wd_j  = A wd_i + qdd_j a + (A w_i) x qd_j a     (revolute; A wd_i prismatic)
    U_j   = skew(wd_j) + skew(w_j)^2                (9 entries)
    vd_j  = A (vd_i + U_i P_j)                      (+ qdd_j a + 2 w_j x qd_j a,
                                                     prismatic)
    F_j   = M_j vd_j + U_j MS_j
    N_j   = J_j wd_j + w_j x (J_j w_j) + MS_j x vd_j
    f_i  += A^T f_j ;   n_i += A^T n_j + P_j x (A^T f_j)
    tau_j = a . n_j  (revolute) or a . f_j (prismatic)

with ``A`` the parent-to-link rotation and ``P_j`` the link origin in the
parent.  The customisation (Khalil & Kleinfinger 1987) is what makes it
cheap on a real robot's geometry:

* the rotations of the modified-DH transforms are products of a turn about
  a coordinate axis and a rotation whose entries are 0 and +-1: only the
  nonzero entries are multiplied, a +-1 entry costs nothing;
* ``U_i P_j`` uses only the nonzero components of the (usually one-entry)
  offset, and the matrix ``U_i`` is shared by the link's force and its
  children's origin accelerations;
* ``w x (J w)`` is written in the six products ``w_a w_b`` (shared with
  ``U``) and the differences of parameters ``ZZ - YY`` ..., which are
  constants: ``(w x J w)_x = XZ wx wy - XY wx wz + (ZZ - YY) wy wz
  + YZ (wy^2 - wz^2)`` and its cyclic permutations, and ``J wd`` joins
  it through U's entries (``XZ (wd_z + wx wy) = XZ U_yx``);
* a prismatic link's ``U`` and products are its parent's, permuted; a
  revolute link's ``U_zz = -(wx^2 + wy^2)`` is its parent's entry seen in
  the joint frame (a turn about z keeps ``wx^2 + wy^2``);
* a revolute link's mass is a point mass of its parent (its origin is
  fixed there): carried into the parent's constants ``M``, ``MS``, ``J``
  wherever that adds no nonzero parameter, and a link sharing its
  parent's origin then needs no force of its own beyond ``U MS``;
* a prismatic link's inertia tensor is carried into its parent (it
  turns with it: the moment is a couple, the same about either origin),
  where that adds no nonzero parameter: one moment in place of two
  (Khalil & Dombre's grouping of a prismatic link's inertia);
* the rest of U's column along a revolute joint's axis is also the
  parent's, turned (the joint rate's terms lie in the axis's row and on
  the diagonal): taken where the parent's has a single nonzero entry
  there, one product in place of ``w_x w_z + wd_y``;
* a revolute joint parallel to its revolute parent (no constant
  rotation between them, the same axis: a PUMA-like elbow) is turned by
  the sum of the two angles where the parent's vectors before its own
  turn are sparser (SYMORO's ``C23``, ``S23``): ``w`` and ``wd`` from the
  grandparent's, and backwards its moment carried into the grandparent
  by the same turn (its axis component is the parent's unchanged);
* each revolute link's inertia is balanced about its joint axis: a
  part ``lam (1 - a a^T)`` (a body symmetric about the axis, whose
  moment is the same in either link: Khalil & Dombre's grouping of
  ``YY_j``) moved to the first revolute ancestor so that ``ZZ = XX + YY``;
  the moment's components across the axis are then one entry of U each,
  ``XX U_zy`` and ``-YY U_zx``;
* a revolute link without children takes U's entries across its axis
  from the turned parent's ``w'`` and ``wd'`` (``U_xz = w_x w'_z + wd'_y``,
  ``U_zx = w_x (w'_z + 2 q') - wd'_y``): wd across the axis is not needed,
  and ``w'_z + 2 q'`` is ``w_z + q'`` (a sum, no product) where ``w_z`` is
  needed anyway;
* the frame of a revolute link without children is turned about its
  axis by the constant angle that lays its first moment across the axis
  on one coordinate (``MX`` on x, ``MY = 0``; the joint's angle read as
  ``q + atan2(MY, MX)``, the inertia in the turned frame parameter-only
  functions of the given): its force ``U MS`` and moment ``MS x vd`` lose
  the other entry's terms and the acceleration they alone needed, for
  the one sum ``q + beta`` (on a wrist with general inertia);
* the moment ``J wd + w x J w`` of a link turning with the first joint
  and its own alone (``w = u_1 e(theta) + u_s a``: the Stanford arm's
  link 2, the RX-90's links 2 and 3 by ``theta = q2 + q3``) is taken in
  closed form from Lagrange's equations of ``w^T J w / 2``: ``e^T J e``
  in ``cos 2 theta``, ``sin 2 theta``, ``e^T J a`` in ``cos theta``,
  ``sin theta``, each with constant coefficients, and their derivatives
  (a couple: ``tau_1`` and the joint's own take one share each, a
  parallel parent the joint's), in place of the recursion's three
  components and the differences ``w_y^2 - w_z^2`` the products of
  inertia need; where the link has products of inertia, and where its
  inertia is symmetric about its axis (then ``e^T J e`` is a constant,
  its term ``alpha_0 qdd_1`` one of link 1's own, and ``e^T J a`` zero:
  the moment is the one product ``ZZ qdd_s`` on the joint's own
  ``tau``, its components across the axis having no share in tau)
  (:mod:`eomcompare.formulations.newton_euler_closed_form`);
* the balance of a link whose first revolute ancestor is such a
  two-rate link (the Stanford arm's link 4 for link 2, through the
  prismatic link 3; the RX-90's link 4 for link 3) is chosen for the
  ancestor instead of for the link's own ``ZZ = XX + YY``, where one
  amount leaves the ancestor's inertia symmetric about its axis and the
  link's moment across its own axis is formed anyway: the ancestor's
  moment is then the closed form's one product, for a product and a sum
  at most per component of the link's moment across its axis
  (``_axisymmetric_balance``);
* a leaf turned as below takes no first moment along its axis from
  its parent (``_axial_moments``) when it has none: its force would
  need a second column of U;
* the rest of U's column along a revolute joint's axis, turned from the
  parent's, also stands in where that saves: ``U_ib = 2 w_b w_i -
  U_bi`` beside it, ``wd`` across the axis (``U_bi - w_b w_i``) and a
  leaf's moment (``XX wd_x + ZZ w_y w_z = (XX + ZZ) w_y w_z - XX U_yz``)
  fall back on it where nothing else needs that ``wd`` component (or
  the parent's turned one), which then goes with its rate terms and
  frees the parent's in turn, from the leaves inwards
  (``_Program.pruned``): on the Stanford arm's wrist the leaf's moment
  frees link 5's ``wd_x``, whose U entry frees link 4's, and so on to
  link 2;
* an origin offset's acceleration ``U_i P_j`` with one nonzero entry
  (``RL2 q''_1``) is turned as it is, not named first: cse shares the
  turn's products ``q''_1 cos``, ``q''_1 sin`` with those of ``wd``;
* zero components (the first link's velocity, an assumption set's zero
  products of inertia and first moments, base parameters that vanish)
  propagate as exact zeros, and parameter-only products (``M_j g``,
  ``ZZ - YY``) are constants, counted once per parameter set.

``tests/formulations/test_newton_euler.py`` checks it against Pinocchio's
``rnea`` and against ``M q'' - f`` of the formulations.
"""

from __future__ import annotations

import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic import lists3 as v3

from .base import UnsupportedSystemError
from .kane_recursive import tree_record
from .newton_euler_closed_form import (
    _axisymmetric_balance,
    _closed_form_shares,
    _closed_forms,
    _two_rate_links,
)
from .newton_euler_fallbacks import (
    _leaf_axis_entries,
    _moment_fallbacks,
    _turned_column,
    _u_fallbacks,
    _wd_fallbacks,
)
from .newton_euler_inertia import (
    _axial_moments,
    _balance_axes,
    _fold_masses,
    _fold_prismatic_inertia,
    _is_signed_permutation,
    _leaf_offsets,
    _turn_frame,
)
from .newton_euler_program import _Program, _same

__all__ = [
    "ASSUMPTIONS",
    "PARAMETER_SETS",
    "customised_inverse_dynamics",
    "standard_inertia",
    "base_inertia",
    "link_inertia",
]

#: Inertia assumption sets of SYMORO's counts: name -> the standard
#: parameters (of :data:`eomcompare.formulations.regressor.STANDARD_NAMES`) that are
#: zero in every link.  "simplified": principal axes parallel to the link
#: frame and mass centre on the joint axis (XY = XZ = YZ = MX = MY = 0).
ASSUMPTIONS = {
    "general": (),
    "simplified": ("XY", "XZ", "YZ", "MX", "MY"),
}
#: The parametrisations a derivation can take.
PARAMETER_SETS = ("standard", "base")


def _check_assumptions(assumptions):
    if assumptions not in ASSUMPTIONS:
        raise ValueError(
            f"assumptions must be one of {list(ASSUMPTIONS)}, not {assumptions!r}"
        )


def standard_inertia(ms, assumptions="general"):
    """``(inertia, parameters)``: per link ``(M, MS, J)`` in the standard
    parameter symbols of :func:`eomcompare.formulations.regressor.standard_parameters`
    (those the assumption set makes zero replaced by 0), and the symbols
    kept."""
    from .regressor import STANDARD_NAMES, _body_parameters, standard_parameters

    _check_assumptions(assumptions)
    zero = {STANDARD_NAMES.index(x) for x in ASSUMPTIONS[assumptions]}
    p = standard_parameters(ms)
    inertia, kept = [], []
    for k in range(len(p) // 10):
        v = [0 if i in zero else s for i, s in enumerate(p[10 * k : 10 * k + 10])]
        kept += [s for s in v if s != 0]
        J, mc, m = _body_parameters(v)
        inertia.append((m, mc, J))
    return inertia, tuple(kept)


def base_inertia(ms, assumptions="general"):
    """``(inertia, grouping)``: per link ``(M, MS, J)`` written in the base
    inertial parameters -- each base parameter's symbol (SYMORO's name,
    ``XXR2``, ``MX3``) in the place of the standard parameter it is
    grouped into, every other standard parameter zero -- and ``{base
    symbol: expression in the standard parameters}`` (under the assumption
    set: its zero parameters set to zero in the expressions, and a base
    parameter whose expression vanishes left out).

    ``tau`` from these is ``tau`` of the standard parameters for every
    value of them (the regrouping of :func:`eomcompare.formulations.regressor.base_parameters`).
    """
    from .regressor import STANDARD_NAMES, _body_parameters, base_parameters

    _check_assumptions(assumptions)
    standard, _, grouping = base_parameters(ms)
    zero = {
        s: 0
        for k, s in enumerate(standard)
        if STANDARD_NAMES[k % 10] in ASSUMPTIONS[assumptions]
    }
    index = {s.name: k for k, s in enumerate(standard)}
    values = [sm.S.Zero] * len(standard)
    kept = {}
    for name, expr in grouping.items():
        expr = sm.expand(expr.xreplace(zero))
        if expr == 0:
            continue
        plain = name.name.replace("R", "", 1) if name.name not in index else name.name
        values[index[plain]] = name
        kept[name] = expr
    inertia = []
    for k in range(len(standard) // 10):
        J, mc, m = _body_parameters(values[10 * k : 10 * k + 10])
        inertia.append((m, mc, J))
    return inertia, kept


def link_inertia(ms, assumptions="general", parameters="standard"):
    """``(inertia, parameter symbols)`` of :func:`standard_inertia` or
    :func:`base_inertia`: what :func:`customised_inverse_dynamics` takes."""
    if parameters == "standard":
        return standard_inertia(ms, assumptions)
    if parameters == "base":
        inertia, grouping = base_inertia(ms, assumptions)
        return inertia, tuple(grouping)
    raise ValueError(
        f"parameters must be one of {list(PARAMETER_SETS)}, not {parameters!r}"
    )


def _stage(let, k, what):
    """Mark what ``let`` names from now on as part of link k's ``what``
    (``forward``, ``wrench``, ``backward``: bench.khalil's breakdown)."""
    if isinstance(let, _Program):
        let.stage = (k, what)


def _rotation(link, q):
    """Parent-to-link rotation (3 x 3) of a link of the tree's record: the
    joint frame's constant rotation (entries 0, +-1 for modified DH) and
    the joint's rotation at q (a turn about a coordinate axis, its
    entries 0, +-1, cos q and +-sin q, or none)."""
    return link.to_parent(q).T


def _products(w):
    """The six products ``w_a w_b`` (a <= b) of an angular velocity."""
    return {(a, b): w[a] * w[b] for a in range(3) for b in range(a, 3)}


def _permuted_products(A, pr, w):
    """The products of ``A w`` from those of ``w`` when ``A`` is a signed
    permutation (each row one entry +-1); otherwise recomputed."""
    rows = [[(j, A[i, j]) for j in range(3) if A[i, j] != 0] for i in range(3)]
    if pr is None or any(len(r) != 1 or abs(r[0][1]) != 1 for r in rows):
        return _products(v3.mv(A, w))
    out = {}
    for a in range(3):
        for b in range(a, 3):
            (i, si), (j, sj) = rows[a][0], rows[b][0]
            out[a, b] = si * sj * pr[min(i, j), max(i, j)]
    return out


def _u_matrix(w, wd, pr):
    """``skew(wd) + skew(w)^2`` from the products ``pr`` of w."""
    U = sm.zeros(3, 3)
    for a in range(3):
        b, c = (a + 1) % 3, (a + 2) % 3
        U[a, a] = -(pr[b, b] + pr[c, c])
        U[a, b] = pr[min(a, b), max(a, b)] - wd[c]
        U[b, a] = pr[min(a, b), max(a, b)] + wd[c]
    return U


def _moment(J, w, wd, pr, U):
    """``J wd + w x (J w)`` with the products of w and the entries of U:
    component a (b, c the next two, cyclically) is ``J_aa wd_a - J_ab
    U_ca + J_ac U_ba + (J_cc - J_bb) w_b w_c + J_bc (w_b^2 - w_c^2)``, since
    ``U_ba = wd_c + w_a w_b`` and ``U_ca = w_a w_c - wd_b``."""
    out = []
    for a in range(3):
        b, c = (a + 1) % 3, (a + 2) % 3
        d = J[c, c] - J[b, b]
        terms = [
            -J[a, b] * U[c, a] if v3.nz(J[a, b]) else 0,
            J[a, c] * U[b, a] if v3.nz(J[a, c]) else 0,
        ]
        if v3.nz(J[a, a]) and sm.cancel(J[a, a] - d) == 0:
            # J_aa (wd_a + w_b w_c) = J_aa U_cb (_balance_axes).
            terms.append(J[a, a] * U[c, b])
        elif v3.nz(J[a, a]) and sm.cancel(J[a, a] + d) == 0:
            terms.append(-J[a, a] * U[b, c])
        else:
            if v3.nz(J[a, a]) and v3.nz(wd[a]):
                terms.append(J[a, a] * wd[a])
            if v3.nz(d):
                terms.append(d * pr[min(b, c), max(b, c)])
        if v3.nz(J[b, c]):
            terms.append(J[b, c] * (pr[b, b] - pr[c, c]))
        out.append(sm.Add(*[t for t in terms if t != 0]))
    return out


def _angle_sum(links, k, q, u, w, wd, qdd, let):
    """``(T_k w_p, wd_k)`` of a revolute joint k parallel to its revolute
    parent p (no constant rotation between them, the same axis), by the
    one turn ``q_p + q_k`` from the grandparent's vectors seen in p's
    joint frame (``w'``, ``wd'``: a free signed permutation), when these
    have fewer nonzero components across the axis than p's own: the
    sines and cosines of ``q_p + q_k`` replace the products of p's turn
    and k's (SYMORO's ``C23``, ``S23``).  With ``T`` that turn::

        w_k  = T w' + (u_p + u_k) a                (across the axis)
        wd_k = T wd' + (T w') x a (u_p + u_k) + (wd_p . a + qdd_k) a

    (a turn about a commutes with ``x a``).  None when it does not
    apply."""
    s = links[k - 1]
    p = s.parent
    if not p or not s.joint.turns or sm.Matrix(s.rotation) != sm.eye(3):
        return None
    sp = links[p - 1]
    Rp = sm.Matrix(sp.rotation)
    if (
        not sp.joint.turns
        or tuple(sp.joint.axis) != tuple(s.joint.axis)
        or not _is_signed_permutation(Rp)
    ):
        return None
    i = [abs(x) for x in s.joint.axis].index(1)
    across = [j for j in range(3) if j != i]
    wpre, wdpre = v3.mtv(Rp, w[sp.parent]), v3.mtv(Rp, wd[sp.parent])

    def nonzero(v):
        return sum(1 for j in across if v3.nz(v[j]))

    if nonzero(wpre) + nonzero(wdpre) >= nonzero(w[p]) + nonzero(wd[p]):
        return None
    T = _rotation(s, q[p - 1] + q[k - 1])
    a = [sm.Integer(x) for x in s.joint.axis]
    turned = v3.mv(T, wpre)
    wr = let([turned[j] if j != i else w[p][i] for j in range(3)])
    # u_p + u_k; when w' has no axis component it is k's own (a . w_k),
    # the very sum the caller forms.
    if v3.nz(wpre[i]):
        upk = let(u[p - 1] + u[k - 1])
    else:
        upk = a[i] * let(w[p][i] + a[i] * u[k - 1])
    plane = [wr[j] if j != i else 0 for j in range(3)]
    wdk = v3.add(v3.mv(T, wdpre), v3.cross(plane, [x * upk for x in a]))
    wdk[i] = wd[p][i] + a[i] * qdd[k - 1]
    return wr, wdk


def customised_inverse_dynamics(
    ms,
    accelerations=None,
    *,
    assumptions="general",
    parameters="standard",
    inertia=None,
    program=False,
    summed_angles=True,
    balanced_axes=True,
    leaf_axis_entries=True,
    inertia_moves=True,
    leaf_offsets=True,
    closed_forms=True,
    column_fallbacks=True,
):
    """Joint forces ``tau`` of a joint tree by the customised recursive
    Newton-Euler algorithm (see the module), in the standard or base
    inertial parameters.

    Parameters
    ----------
    ms : MechanicalSystem
        Declared by :func:`eomcompare.systems.declare_tree` (the modified-DH arms,
        URDF robots, ``spatial_chain``), joint axes along coordinate axes
        of the joint frames, without damping or armature.
    accelerations : sequence, optional
        q'' (the speeds' rates), one per joint; the speeds differentiated
        by default.
    assumptions : str
        ``"general"`` or ``"simplified"`` (:data:`ASSUMPTIONS`): which
        standard parameters are zero.
    parameters : str
        ``"standard"`` (10 symbols per link, :func:`standard_inertia`),
        ``"base"`` (the base parameters, :func:`base_inertia`) or
        ``"declared"`` (the declaration's own mass, mass centre and
        inertia, as :func:`eomcompare.formulations.kane_recursive.origin_inertia`).
    inertia : sequence of (M, MS, J), optional
        Per link, in place of the three above.
    program : bool
        False: ``tau`` as expressions.  True: as an evaluation order
        (:class:`eomcompare.formulations.articulated_body.Assignments`: every
        intermediate vector component named once, only those ``tau``
        needs kept), what the operation counts are taken of.  A
        ``_Program`` already under way (another evaluation order, as
        :func:`eomcompare.formulations.newton_euler_composite.customised_forward_dynamics`
        builds): ``tau``'s intermediates named in it, ``tau`` returned in
        its symbols.

    summed_angles : bool
        Turn a revolute joint parallel to its revolute parent by the sum
        of the two angles where that is cheaper (``_angle_sum``; default);
        False turns joint by joint (to measure what the sums save).
    balanced_axes : bool
        Balance each revolute link's inertia about its joint axis
        (``_balance_axes``; default); False keeps the given inertia.
    leaf_axis_entries : bool
        A revolute link without children takes U's entries across its
        axis from its parent's turned vectors (``_leaf_axis_entries``;
        default).
    inertia_moves : bool
        Move inertia between links where that is cheaper (masses folded
        into parents, axial first moments into children, inertia balanced
        about the axes: :mod:`eomcompare.formulations.newton_euler_inertia`;
        default).  False keeps each link's given inertia (and ignores
        ``balanced_axes``): what the base parameters alone would save.
    leaf_offsets : bool
        Turn the frame of a revolute link without children about its
        axis so that its first moment has one entry across the axis
        (``_leaf_offsets``; default).
    closed_forms : bool
        Take the moment ``J wd + w x J w`` of a link turning with the
        first joint and its own (``_two_rate_links``) in closed form, from
        Lagrange's equations of ``w^T J w / 2``
        (:mod:`eomcompare.formulations.newton_euler_closed_form`; default),
        where it has products of inertia or is symmetric about its axis;
        with ``balanced_axes``, a child's balance is chosen to make it so
        where it can (``_axisymmetric_balance``).
    column_fallbacks : bool
        Let U's entries beside a revolute joint's axis, wd across it and
        a leaf's moment fall back on U's column along the axis turned
        from the parent's, where nothing else needs that wd component
        (``_u_fallbacks``, ``_wd_fallbacks``, ``_moment_fallbacks``;
        default; an evaluation order only).

    Returns
    -------
    (tau, symbols)
        ``tau`` an n x 1 Matrix in q, q', q'' (the speeds) -- or its
        evaluation order with ``program`` --, and the inertial parameter
        symbols it is written in.

    Raises
    ------
    UnsupportedSystemError
        When ``ms`` is not a joint tree or a joint axis is not a coordinate
        axis of its frame.
    ValueError
        For an unknown option, a damped joint or joint armature, or not one
        acceleration per joint.
    """
    tree = tree_record(ms, "customised Newton-Euler")
    links = tree.links
    for s in links:
        if sorted(abs(x) for x in s.joint.axis) != [0, 0, 1]:
            raise UnsupportedSystemError(
                f"{ms.name}: joint {s.name!r} is not about (along) a "
                "coordinate axis of its frame"
            )
        if s.damping is not None or s.armature is not None:
            raise ValueError(
                f"{ms.name}: joint {s.name!r} has damping or armature; the "
                "customised Newton-Euler model is of rigid links only"
            )
    n = len(links)
    q, u = list(ms.coordinates), list(ms.speeds)
    if accelerations is None:
        accelerations = [x.diff(me.dynamicsymbols._t) for x in u]
    accelerations = list(accelerations)
    if len(accelerations) != n:
        raise ValueError(
            f"accelerations must have {n} entries (one per joint), not "
            f"{len(accelerations)}"
        )
    if inertia is None:
        if parameters == "declared":
            _check_assumptions(assumptions)
            inertia = [
                (m, list(mc), sm.Matrix(J))
                for m, mc, J in (s.inertia.at_origin() for s in links)
            ]
            symbols = ()
        else:
            inertia, symbols = link_inertia(ms, assumptions, parameters)
    else:
        if len(inertia) != n:
            raise ValueError(
                f"inertia must have {n} entries (one per link), not {len(inertia)}"
            )
        symbols = ()
    if isinstance(program, _Program):
        let = program
    else:
        # The inertia's symbols are constants, given or not.
        constants = set(symbols) | set(ms.parameters)
        for m, mc, J in inertia:
            constants |= sm.Matrix([m, *mc, *J]).free_symbols
        let = _Program(constants) if program else _same
    zero = [sm.S.Zero] * 3
    # Index 0: the base, accelerating against gravity.
    w, wd, vd, U = [zero], [zero], [tree.base_acceleration()], [sm.zeros(3, 3)]
    pr = [None]
    A, P, parallel = [None], [None], [False]
    # k -> (axis i, {j: U_k[j, i] across the axis, from the parent's}).
    columns = {}
    children = tree.children()
    offsets = _leaf_offsets(links, inertia, children) if leaf_offsets else {}
    for k, s in enumerate(links, start=1):
        _stage(let, k, "forward")
        p, joint = s.parent, s.joint
        Ak = _rotation(s, q[k - 1] + offsets[k][0] if k in offsets else q[k - 1])
        off = s.origin(q[k - 1])
        # Origin acceleration of link k seen in the parent: vd_p + U_p P_k.
        vp = v3.add(vd[p], v3.mv(U[p], off)) if any(v3.nz(x) for x in off) else vd[p]
        summed = summed_angles and _angle_sum(links, k, q, u, w, wd, accelerations, let)
        parallel.append(bool(summed))
        if summed:
            wr, wdk = summed
        else:
            wr = let(v3.mv(Ak, w[p]))
            wdr = let(v3.mv(Ak, wd[p]))
        vk = let(v3.mv(Ak, let.scaled(vp) if isinstance(let, _Program) else vp))
        # The joint's rates S q' and S q'' (angular and linear parts).
        qa, qv = joint.angular_velocity(u[k - 1]), joint.linear_velocity(u[k - 1])
        wk = v3.add(wr, qa)
        if not summed:
            wdk = v3.add(
                wdr, joint.angular_velocity(accelerations[k - 1]), v3.cross(wr, qa)
            )
        vk = v3.add(
            vk,
            joint.linear_velocity(accelerations[k - 1]),
            [2 * x for x in v3.cross(wk, qv)],
        )
        w.append(let(wk))
        wd.append(let(wdk))
        vd.append(let(vk))
        if not joint.turns and not Ak.free_symbols:
            # A constant rotation of signed permutations (modified DH):
            # the link's U and products are its parent's, permuted.
            pr.append(_permuted_products(Ak, pr[p], w[p]))
            U.append(sm.Matrix(Ak * U[p] * Ak.T))
        else:
            pr.append(let(_products(w[-1])))
            Uk = _u_matrix(w[-1], wd[-1], pr[-1])
            column, leaf = None, False
            R = sm.Matrix(s.rotation)
            if joint.turns and _is_signed_permutation(R):
                # A turn about axis i keeps w_j^2 + w_k^2: U_ii is the
                # parent's, seen in the joint frame (a free permutation).
                i = [abs(x) for x in joint.axis].index(1)
                M = R.T * U[p] * R
                Uk[i, i] = M[i, i]
                turned = _turned_column(M, Ak * R, i)
                for j, x in turned.items():
                    Uk[j, i] = x
                leaf = leaf_axis_entries and not summed and not children[k]
                if leaf:
                    _leaf_axis_entries(Uk, i, wr, wdr, qa[i], w[-1][i], turned, let)
                if column_fallbacks and isinstance(let, _Program) and not summed:
                    # The rest of the column, turned, named before U (the
                    # fallbacks' definitions use it).
                    full = v3.mv(Ak * R, [M[j, i] for j in range(3)])
                    column = {
                        j: let(full[j]) for j in range(3) if j != i and j not in turned
                    }
            U.append(let(Uk))
            if column is not None:
                column.update({j: U[-1][j, i] for j in turned})
                columns[k] = (i, column)
                if not leaf:
                    _u_fallbacks(U[-1], i, column, wd[-1], pr[-1], let)
                _wd_fallbacks(i, column, wdr, wd[-1], pr[-1], let)
        A.append(Ak)
        P.append(off)
    if inertia_moves:
        inertia = _fold_prismatic_inertia(links, _fold_masses(links, inertia, P))
    two_rate = _two_rate_links(links, tree.floating) if closed_forms else {}
    if inertia_moves and balanced_axes:
        inertia = _balance_axes(
            links,
            _axial_moments(links, inertia, P, set(offsets)),
            P,
            _axisymmetric_balance(links, two_rate),
        )
    # The moves leave a leaf's first moment across its axis as it was
    # (they add along the axis, and inertia symmetric about it).
    inertia = [
        _turn_frame(x, offsets[k][1]) if k in offsets else x
        for k, x in enumerate(inertia, start=1)
    ]
    # Link forces without the mass term, moments about the link origins.
    f = [None] * (n + 1)
    nn = [None] * (n + 1)
    mass = [None] * (n + 1)
    extra = [sm.S.Zero] * (n + 1)
    closed, inertia = _closed_forms(links, inertia, two_rate)
    for k in range(1, n + 1):
        _stage(let, k, "wrench")
        m, mc, J = inertia[k - 1]
        mc, J = list(mc), sm.Matrix(J)
        f[k] = let(v3.mv(U[k], mc))
        mass[k] = m
        if k in closed:
            r, between, got = closed[k]
            sign, i = got[6:]
            th = q[k - 1] + (offsets[k][0] if k in offsets else 0)
            if between is not None:
                th = q[between - 1] + th
            shares = _closed_form_shares(
                got,
                th,
                (u[r - 1], accelerations[r - 1]),
                w[k][i],
                wd[k][i],
                pr[k][i, i],
                let,
            )
            extra[r] += shares[0]
            own = [sign * shares[1] if j == i else 0 for j in range(3)]
            J = sm.zeros(3, 3)
        else:
            own = [0, 0, 0]
        nn[k] = v3.add(_moment(J, w[k], wd[k], pr[k], U[k]), v3.cross(mc, vd[k]), own)
        nn[k] = let(nn[k])
        if k in columns:
            _moment_fallbacks(nn[k], *columns[k], wd[k], pr[k], let)
    # Backward pass.  A revolute link whose origin is its parent's moves
    # its parent's origin's acceleration: its mass term rotated back is
    # M_k vd_p, so its mass joins the parent's (SYMORO's wrist).
    # A child c parallel to its parent k (forward: _angle_sum) leaves its
    # moment n_c pending in k: k's axis component is a . n_c, and k's
    # parent receives it by the one turn q_k + q_c.
    tau = [sm.S.Zero] * n
    pending = [[] for _ in range(n + 1)]

    def carried(k):
        s = links[k - 1]
        turned = [
            let(v3.mtv(_rotation(s, q[k - 1] + q[c - 1]), m)) for c, m in pending[k]
        ]
        return let(v3.add(let(v3.mtv(A[k], let(nn[k]))), *turned))

    for k in range(n, 0, -1):
        _stage(let, k, "backward")
        s = links[k - 1]
        p, joint = s.parent, s.joint
        # The link's origin is fixed in its parent's frame.
        shared = joint.turns and not any(v3.nz(x) for x in P[k])
        fk = v3.add(f[k], [mass[k] * x for x in vd[k]]) if v3.nz(mass[k]) else f[k]
        # S^T of the link's wrench; the pending moments carry no force.
        tau[k - 1] = sm.Add(
            joint.generalized_force(nn[k], fk),
            *[joint.generalized_force(m, zero) for _, m in pending[k]],
        )
        if p and parallel[k]:
            # k's moment whole, in its frame (its own pending turned in).
            m = v3.add(nn[k], *[v3.mtv(A[c], m) for c, m in pending[k]])
            pending[p].append((k, let(m)))
            pending[k] = []
        if p and shared:
            mass[p] = mass[p] + mass[k]
            f[p] = let(v3.add(f[p], let(v3.mtv(A[k], let(f[k])))))
            if not parallel[k]:
                nn[p] = let(v3.add(nn[p], carried(k)))
            continue
        if p:
            fp = let(v3.mtv(A[k], let(fk)))
            f[p] = let(v3.add(f[p], fp))
            moment = [] if parallel[k] else [carried(k)]
            nn[p] = let(v3.add(nn[p], *moment, v3.cross(P[k], fp)))
    tau = [t + x for t, x in zip(tau, extra[1:])]
    if isinstance(program, _Program):
        return sm.Matrix(tau), tuple(symbols)
    if program:
        return let.pruned(tau), tuple(symbols)
    return sm.Matrix(tau), tuple(symbols)
