"""Hypothesis strategies of random mechanical systems, for property checks.

Every strategy draws a :class:`eomcompare.systems.MechanicalSystem`: a small symbolic
structure (which joints, which axes, which loads) and random parameter
VALUES in its ``parameters`` mapping.  Formulations can then be checked
against each other, and against independent references, on systems nobody
wrote by hand.

The symbols of a structure are always named the same way, so two draws with
the same structure differ only in their parameter values: a derivation made
for one can be evaluated with the parameters of the other
(``eom.numeric(other.parameters)``).  Each system carries in its
``options``:

``"family"``
    The strategy's family name (``"tree"``, ``"linkage"``,
    ``"sleigh"``, ``"rolling_disc"``, ``"driven_chain"``).
``"structure"``
    A hashable description of the symbolic structure; equal structures
    give identical equations up to parameter values, so it is a cache key.
``"nonconservative_power"``
    The power of the loads that are not in ``potential_energy`` (viscous
    dampers), an expression in (t, q, u); zero when every load is
    conservative.  Written from the damper laws, separately from the load
    vectors, so that an energy balance can check the two against each other.

Strategies
----------
:func:`kinematic_trees`, :func:`open_chains`
    Planar or spatial trees of rigid bodies on revolute and prismatic
    joints: random masses, inertia tensors (triangle inequalities hold),
    joint offsets, mass-centre offsets, gravity, joint springs and dampers.
:func:`closed_loops`
    Planar n-bar linkages (n = 4, 5, ...), assembled consistently; four-bars
    optionally with the explicit solutions of
    :func:`eomcompare.systems.four_bar.four_bar_closed_form`.
:func:`nonholonomic_systems`
    The Chaplygin sleigh / knife-edge family and the rolling disc.
:func:`rheonomic_systems`
    Planar chains hung from a support moved by a prescribed function of
    time (``specified``).
:func:`mechanical_systems`
    Any of the above.
:func:`unlocated_velocities`, :func:`reanchor_velocity`
    A system whose last body's mass-centre velocity is declared by
    ``v2pt_theory`` from a point not located from the fixed point (as
    sympy users declare a rolling disc from its contact point up).
:func:`consistent_states`
    ``(t, q, q')`` states of a given system satisfying every constraint.
:func:`inertia_tensors`
    Physically valid central inertia tensors.
:func:`build_tree`, :func:`build_linkage`, :func:`build_sleigh`,
:func:`build_driven_chain`
    The builders behind the strategies, for fixed structures and values
    (regression cases, hand-made checks).

Examples
--------
>>> from hypothesis import given, settings
>>> from eomcompare.testing.strategies import open_chains
>>> @settings(max_examples=2, deadline=None, database=None)
... @given(open_chains(dimension=2, max_bodies=2))
... def check(ms):
...     assert 1 <= ms.degrees_of_freedom <= 2
>>> check()
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Collection, Mapping, Sequence
from typing import Any, TypeAlias, TypeVar, cast

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

try:
    from hypothesis import assume
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - depends on the installation
    raise ImportError(
        "testing.strategies needs hypothesis, part of the test extra: "
        "pip install 'eomcompare[test]'"
    ) from None

from eomcompare.symbolic.types import (
    Dyadic,
    Expr,
    FloatArray,
    ParameterValues,
    ReferenceFrame,
    State,
    Symbol,
)
from eomcompare.systems import MechanicalSystem, get_system
from eomcompare.systems.base import ConstraintError, ConstraintForce
from eomcompare.systems.four_bar import four_bar_closed_form

_T = TypeVar("_T")
#: The symbolic part of a random family's declaration (a sympy
#: ``System``, its constant symbols by name, coordinates, speeds, ...),
#: built once per structure.
_Declaration: TypeAlias = tuple[Any, ...]
#: A tree's structure: ``(dimension, joints, springs, dampers, gravity,
#: reactions)`` with ``joints`` a tuple of ``(parent, kind, axis)``.
TreeStructure: TypeAlias = tuple[
    int, tuple[tuple[int, str, int], ...], bool, bool, bool, tuple[int, ...]
]

__all__ = [
    "kinematic_trees",
    "open_chains",
    "closed_loops",
    "nonholonomic_systems",
    "rheonomic_systems",
    "mechanical_systems",
    "consistent_states",
    "inertia_tensors",
    "build_tree",
    "build_linkage",
    "build_sleigh",
    "build_driven_chain",
    "JOINT_TYPES",
    "NONHOLONOMIC_KINDS",
    "DRIVES",
    "unlocated_velocities",
    "reanchor_velocity",
]

t = me.dynamicsymbols._t

#: Joint types of :func:`kinematic_trees`: revolute (R) and prismatic (P).
JOINT_TYPES = ("revolute", "prismatic")
#: Kinds of :func:`nonholonomic_systems`.
NONHOLONOMIC_KINDS = ("sleigh", "rolling_disc")
#: Prescribed drives of :func:`rheonomic_systems`.
DRIVES = ("translation", "rotation")


# ----------------------------------------------------------------------
# Option validation
# ----------------------------------------------------------------------
def _check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {value!r}")
    return value


def _check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        rng = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be in {rng}, not {value}")
    return value


def _check_choices(
    name: str, values: str | Sequence[str], valid: Collection[str]
) -> tuple[str, ...]:
    if isinstance(values, str):
        values = (values,)
    try:
        values = tuple(values)
    except TypeError:
        raise TypeError(
            f"{name} must be a sequence of names from {list(valid)}, not {values!r}"
        ) from None
    bad = [v for v in values if v not in valid]
    if bad or not values:
        raise ValueError(
            f"{name} must be a non-empty selection of {list(valid)}, not "
            f"{list(values)!r}"
        )
    return tuple(dict.fromkeys(values))


def _check_range(lo_name: str, lo: int, hi_name: str, hi: int) -> None:
    if lo > hi:
        raise ValueError(f"{lo_name} ({lo}) must not exceed {hi_name} ({hi})")


# ----------------------------------------------------------------------
# Numbers
# ----------------------------------------------------------------------
def _not_none(strategy: st.SearchStrategy[_T | None]) -> st.SearchStrategy[_T]:
    """``strategy`` without its ``None`` draws (rejected, as ``filter``)."""

    def present(x: _T | None) -> bool:
        return x is not None

    # filter keeps the draws' type; the cast states what it leaves out.
    return cast("st.SearchStrategy[_T]", strategy.filter(present))


def _floats(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


@st.composite
def _rotation(draw: st.DrawFn) -> FloatArray:
    """A uniformly spread rotation matrix, from a normalized quaternion."""
    v = np.array([draw(_floats(-1.0, 1.0)) for _ in range(4)])
    n = float(np.linalg.norm(v))
    if n < 0.1:
        v, n = np.array([1.0, 0.0, 0.0, 0.0]), 1.0
    w, x, y, z = v / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def inertia_tensors(*, mass: float = 1.0) -> st.SearchStrategy[FloatArray]:
    """Central inertia tensors (3x3 arrays) of bodies of mass ``mass``.

    The principal moments are ``(b + c, a + c, a + b)`` for second moments
    ``a, b, c`` of the mass distribution along the principal axes (drawn in
    ``[0.01, 1] * mass``), so they are positive and satisfy the triangle
    inequalities ``I1 <= I2 + I3`` (and cyclic) as every rigid body's do;
    the principal axes have a random orientation.

    Parameters
    ----------
    mass : float
        Positive mass that scales the tensor.

    Examples
    --------
    >>> import numpy as np
    >>> from hypothesis import given, settings
    >>> @settings(max_examples=3, database=None)
    ... @given(inertia_tensors(mass=2.0))
    ... def check(I):
    ...     assert np.all(np.linalg.eigvalsh(I) > 0)
    >>> check()
    """
    if isinstance(mass, bool) or not isinstance(mass, numbers.Real):
        raise TypeError(f"mass must be a real number, not {mass!r}")
    if not mass > 0:
        raise ValueError(f"mass must be positive, not {mass!r}")
    return _inertia_tensors(float(mass))


@st.composite
def _inertia_tensors(draw: st.DrawFn, mass: float) -> FloatArray:
    a, b, c = (draw(_floats(0.01, 1.0)) * mass for _ in range(3))
    R = draw(_rotation())
    I = R @ np.diag([b + c, a + c, a + b]) @ R.T
    return (I + I.T) / 2


def _inertia_symbols(i: int) -> tuple[Symbol, ...]:
    return tuple(
        sm.symbols(f"I{i}_xx I{i}_yy I{i}_zz I{i}_xy I{i}_yz I{i}_zx", real=True)
    )


def _inertia_values(syms: Sequence[Symbol], I: FloatArray) -> dict[Symbol, float]:
    return dict(zip(syms, (I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[1, 2], I[2, 0])))


def _inertia_dyadic(frame: ReferenceFrame, syms: Sequence[Symbol]) -> Dyadic:
    return me.inertia(frame, *syms)


# ----------------------------------------------------------------------
# Kinematic trees
# ----------------------------------------------------------------------
@functools.cache
def _tree_declaration(structure: TreeStructure) -> _Declaration:
    """The symbolic part of :func:`build_tree`, once per structure."""
    dim, joints, springs, dampers, gravity, reactions = structure
    n = len(joints)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    q = me.dynamicsymbols(f"q1:{n + 1}")
    u = me.dynamicsymbols(f"u1:{n + 1}")
    planar = dim == 2
    frames: list[ReferenceFrame] = []
    origins: list[Any] = []
    bodies: list[Any] = []
    joint_points: list[Any] = []
    loads, V, power = [], sm.S.Zero, sm.S.Zero
    sym = {}

    def s(name: str, **kw: Any) -> Symbol:
        if name not in sym:
            sym[name] = sm.Symbol(name, real=True, **kw)
        return sym[name]

    z_coords, z_speeds, cforces = [], [], []
    gvec: Any = (
        (s("gx") * N.x + s("gy") * N.y + (0 if planar else s("gz") * N.z))
        if gravity
        else 0
    )
    children = {i: [j for j, jt in enumerate(joints) if jt[0] == i] for i in range(n)}

    def subtree(i: int) -> list[int]:
        out = [i]
        for c in children[i]:
            out += subtree(c)
        return out

    for i, (parent, kind, axis) in enumerate(joints):
        k = i + 1
        Pf = N if parent < 0 else frames[parent]
        Po = O if parent < 0 else origins[parent]
        a = (Pf.x, Pf.y, Pf.z)[axis]
        r = s(f"rx{k}") * Pf.x + s(f"ry{k}") * Pf.y
        if not planar:
            r += s(f"rz{k}") * Pf.z
        J = Po.locatenew(f"J{k}", r)
        J.v2pt_theory(Po, N, Pf)
        if i in reactions:
            # The joint may slide along the parent's x and y; the holonomic
            # constraints hold it, and their multipliers are the reaction.
            zx, zy = me.dynamicsymbols(f"zx{k} zy{k}")
            wx, wy = me.dynamicsymbols(f"wx{k} wy{k}")
            Jc = J.locatenew(f"Jc{k}", zx * Pf.x + zy * Pf.y)
            Jc.set_vel(Pf, wx * Pf.x + wy * Pf.y)
            Jc.v1pt_theory(J, N, Pf)
            z_coords += [zx, zy]
            z_speeds += [wx, wy]
            J = Jc
        joint_points.append(J)
        if kind == "R":
            B = Pf.orientnew(f"B{k}", "Axis", (q[i], a))
            B.set_ang_vel(Pf, u[i] * a)
            Ob = J
        else:
            B = Pf.orientnew(f"B{k}", "Axis", (sm.S.Zero, Pf.z))
            B.set_ang_vel(Pf, 0)
            Ob = J.locatenew(f"O{k}", q[i] * a)
            Ob.set_vel(Pf, u[i] * a)
            Ob.v1pt_theory(J, N, Pf)
        c = s(f"cx{k}") * B.x + s(f"cy{k}") * B.y
        if not planar:
            c += s(f"cz{k}") * B.z
        G = Ob.locatenew(f"G{k}", c)
        G.v2pt_theory(Ob, N, B)
        m = s(f"m{k}", positive=True)
        Isyms = _inertia_symbols(k)
        for x in Isyms:
            sym[str(x)] = x
        body = me.RigidBody(f"body{k}", G, B, m, (_inertia_dyadic(B, Isyms), G))
        frames.append(B)
        origins.append(Ob)
        bodies.append(body)
        if gravity:
            loads.append(me.Force(G, m * gvec))
            V -= m * sum(gvec.dot(e) * G.pos_from(O).dot(e) for e in (N.x, N.y, N.z))
        gen = sm.S.Zero
        if springs:
            kk, s0 = s(f"k{k}"), s(f"s{k}")
            gen += -kk * (q[i] - s0)
            V += kk * (q[i] - s0) ** 2 / 2
        if dampers:
            bb = s(f"b{k}")
            gen += -bb * u[i]
            power += -bb * u[i] ** 2
        if gen != 0:
            if kind == "R":
                loads.append(me.Torque(B, gen * a))
                if parent >= 0:
                    loads.append(me.Torque(Pf, -gen * a))
            else:
                loads.append(me.Force(Ob, gen * a))
                if parent >= 0:
                    loads.append(me.Force(J, -gen * a))
        if i in reactions:
            cforces.append((i, J, Pf))
    # Constraint forces need the finished subtrees.
    cf_objs = []
    for i, J, Pf in cforces:
        sub = tuple(bodies[j] for j in subtree(i))
        # Every load point on the subtree's bodies: their origins and the
        # points where their children's joint springs push back.
        pts = tuple(origins[j] for j in subtree(i)) + tuple(
            joint_points[c] for c, jt in enumerate(joints) if jt[0] in subtree(i)
        )
        cf_objs.append(ConstraintForce(f"Rx{i + 1}", "force", Pf.x, J, sub, points=pts))
        cf_objs.append(ConstraintForce(f"Ry{i + 1}", "force", Pf.y, J, sub, points=pts))
    system = me.System(N, O)
    system.add_coordinates(*q)
    system.add_speeds(*u)
    kdes = [ui - qi.diff() for qi, ui in zip(q, u)]
    if z_coords:
        system.add_coordinates(*z_coords, independent=False)
        system.add_speeds(*z_speeds, independent=False)
        kdes += [w - z.diff() for z, w in zip(z_coords, z_speeds)]
        system.add_holonomic_constraints(*z_coords)
    system.add_kdes(*kdes)
    system.add_bodies(*bodies)
    system.add_loads(*loads)
    return system, sym, q, u, V, power, tuple(cf_objs)


def build_tree(
    structure: TreeStructure,
    values: Mapping[str, float],
    *,
    initial: Mapping[str, float] | None = None,
    name: str = "random_tree",
) -> MechanicalSystem:
    """The :class:`MechanicalSystem` of a tree structure with given values.

    Parameters
    ----------
    structure : tuple
        ``(dimension, joints, springs, dampers, gravity, reactions)`` with
        ``joints`` a tuple of ``(parent, kind, axis)``, one per body in
        order: ``parent`` the index of the parent body (-1 for the ground,
        otherwise an earlier body), ``kind`` ``"R"`` or ``"P"``, ``axis``
        0, 1 or 2 (x, y, z of the parent's frame; planar trees turn about z
        and slide along x or y).  ``reactions`` is a tuple of body indices
        whose joint reaction (force of the parent on the subtree, along the
        parent's x and y) is declared as constraint coordinates.
    values : mapping
        Parameter name -> value, for every parameter of the structure.
    initial : mapping, optional
        Coordinate name -> initial value.

    Returns
    -------
    MechanicalSystem

    Notes
    -----
    Frames and signs (the conventions :mod:`eomcompare.references.oracles` maps to
    Pinocchio): body i has frame ``B{i}`` and origin ``O{i}``.  Its joint
    sits at ``J{i} = O_parent + r_i`` with ``r_i = (rx{i}, ry{i}, rz{i})`` in
    the parent's frame (the ground's ``N`` and ``O`` for parent -1) and the
    joint frame is the parent's frame.  A revolute joint turns ``B{i}`` by
    ``q{i}`` about the joint frame's axis, with ``O{i} = J{i}``; a prismatic
    joint keeps ``B{i}`` parallel to the parent and puts
    ``O{i} = J{i} + q{i} * axis``.  The mass centre is ``G{i} = O{i} + c_i``
    with ``c_i = (cx{i}, cy{i}, cz{i})`` in ``B{i}``; ``I{i}_..`` is the
    central inertia in ``B{i}``.  Speeds are ``u{i} = q{i}'``.  Gravity is
    ``(gx, gy, gz)`` in ``N``.  A spring ``-k{i} (q{i} - s{i})`` and a
    damper ``-b{i} u{i}`` act in each joint as an action-reaction pair (a
    torque about, or a force along, the joint axis).
    """
    dim, joints, springs, dampers, gravity, reactions = structure
    system, sym, q, u, V, power, cf_objs = _tree_declaration(structure)
    initial = dict(initial or {})
    missing = sorted(set(sym) - set(values))
    if missing:
        raise ValueError(f"values missing for parameters {missing}")
    params = {sym[k]: float(values[k]) for k in sym}
    init = {qi: float(initial.get(str(qi.func), 0.0)) for qi in q}
    init |= {ui: 0.0 for ui in u}
    spread = {qi: (1.5 if kind == "R" else 0.5) for qi, (_, kind, _) in zip(q, joints)}
    return MechanicalSystem(
        name=name,
        system=system,
        parameters=params,
        initial_state=init,
        potential_energy=V,
        energy_conserved=not dampers,
        constraint_forces=cf_objs,
        description=build_tree.__doc__ or "",
        random_spread=spread,
        speed_scale=1.0,
        options={
            "family": "tree",
            "structure": ("tree",) + tuple(structure),
            "nonconservative_power": power,
        },
    )


def _tree_values(draw: st.DrawFn, structure: TreeStructure) -> dict[str, float]:
    """Random values of every parameter of a tree structure."""
    dim, joints, springs, dampers, gravity, reactions = structure
    vals = {}
    comps = "xy" if dim == 2 else "xyz"
    for i, _joint in enumerate(joints):
        k = i + 1
        m = draw(_floats(0.5, 3.0))
        vals[f"m{k}"] = m
        for c in comps:
            vals[f"r{c}{k}"] = draw(_floats(-1.0, 1.0))
            vals[f"c{c}{k}"] = draw(_floats(-0.6, 0.6))
        I = draw(_inertia_tensors(m))
        for x, v in _inertia_values(_inertia_symbols(k), I).items():
            vals[str(x)] = float(v)
        if springs:
            vals[f"k{k}"] = draw(_floats(0.0, 20.0))
            vals[f"s{k}"] = draw(_floats(-1.0, 1.0))
        if dampers:
            vals[f"b{k}"] = draw(_floats(0.0, 2.0))
    if gravity:
        for c in comps:
            vals[f"g{c}"] = draw(_floats(-10.0, 10.0))
    return vals


@st.composite
def _trees(
    draw: st.DrawFn,
    dim: int,
    lo: int,
    hi: int,
    kinds: tuple[str, ...],
    branching: bool,
    springs: bool,
    dampers: bool,
    gravity: bool,
    reactions: bool,
) -> MechanicalSystem:
    n = draw(st.integers(lo, hi))
    joints = []
    for i in range(n):
        parent = draw(st.integers(-1, i - 1)) if branching and i > 0 else i - 1
        kind = draw(st.sampled_from(kinds))
        if dim == 2:
            axis = 2 if kind == "R" else draw(st.integers(0, 1))
        else:
            axis = draw(st.integers(0, 2))
        joints.append((parent, kind, axis))
    react: tuple[int, ...] = ()
    if reactions:
        revolute = [i for i, j in enumerate(joints) if j[1] == "R"]
        if not revolute:
            # A reaction is asked for: the first joint becomes revolute.
            joints[0] = (-1, "R", 2 if dim == 2 else joints[0][2])
            revolute = [0]
        react = (draw(st.sampled_from(revolute)),)
    structure = (dim, tuple(joints), springs, dampers, gravity, react)
    values = _tree_values(draw, structure)
    initial = {f"q{i + 1}": draw(_floats(-1.0, 1.0)) for i in range(n)}
    return build_tree(
        structure,
        values,
        initial=initial,
        name="random_planar_tree" if dim == 2 else "random_spatial_tree",
    )


def kinematic_trees(
    *,
    dimension: int = 2,
    min_bodies: int = 1,
    max_bodies: int = 3,
    joint_types: Sequence[str] = JOINT_TYPES,
    branching: bool = True,
    springs: bool = True,
    dampers: bool = True,
    gravity: bool = True,
    joint_reactions: bool = False,
) -> st.SearchStrategy[MechanicalSystem]:
    """Random trees of rigid bodies on revolute and prismatic joints.

    Parameters
    ----------
    dimension : {2, 3}
        2: planar (revolute joints about z, prismatic along x or y, gravity
        in the plane); 3: spatial (any body axis).
    min_bodies, max_bodies : int
        Number of bodies, 1 to 6 (3 or fewer keep derivations fast).
    joint_types : sequence of {"revolute", "prismatic"}
    branching : bool
        False for serial chains; True lets a body hang from any earlier one.
    springs, dampers, gravity : bool
        Include joint springs, joint dampers, gravity (values random, zero
        included for springs and dampers).
    joint_reactions : bool
        Declare the reaction of one revolute joint (force of the parent on
        the subtree along the parent's x and y) as two constraint
        coordinates held by holonomic constraints, with
        :class:`~eomcompare.systems.ConstraintForce` objects: multipliers and Kane's
        auxiliary speeds both recover it.  Where no revolute joint is
        drawn, the first joint is made revolute.

    Returns
    -------
    hypothesis strategy of MechanicalSystem

    Raises
    ------
    TypeError, ValueError
        For options of the wrong type or out of range, naming valid ones.

    Examples
    --------
    >>> from eomcompare.testing.strategies import kinematic_trees
    >>> strategy = kinematic_trees(dimension=3, max_bodies=2)
    """
    if dimension not in (2, 3) or isinstance(dimension, bool):
        raise ValueError(f"dimension must be one of [2, 3], not {dimension!r}")
    lo = _check_int("min_bodies", min_bodies, 1, 6)
    hi = _check_int("max_bodies", max_bodies, 1, 6)
    _check_range("min_bodies", lo, "max_bodies", hi)
    kinds = tuple(
        {"revolute": "R", "prismatic": "P"}[k]
        for k in _check_choices("joint_types", joint_types, JOINT_TYPES)
    )
    for name, v in (
        ("branching", branching),
        ("springs", springs),
        ("dampers", dampers),
        ("gravity", gravity),
        ("joint_reactions", joint_reactions),
    ):
        _check_bool(name, v)
    if joint_reactions and "R" not in kinds:
        raise ValueError("joint_reactions needs 'revolute' in joint_types")
    return _trees(
        int(dimension),
        lo,
        hi,
        kinds,
        branching,
        springs,
        dampers,
        gravity,
        joint_reactions,
    )


def open_chains(
    *,
    dimension: int = 2,
    min_bodies: int = 1,
    max_bodies: int = 3,
    joint_types: Sequence[str] = JOINT_TYPES,
    springs: bool = True,
    dampers: bool = True,
    gravity: bool = True,
    joint_reactions: bool = False,
) -> st.SearchStrategy[MechanicalSystem]:
    """Random serial chains: :func:`kinematic_trees` without branching.

    Examples
    --------
    >>> from eomcompare.testing.strategies import open_chains
    >>> strategy = open_chains(dimension=2, joint_types=["revolute"])
    """
    return kinematic_trees(
        dimension=dimension,
        min_bodies=min_bodies,
        max_bodies=max_bodies,
        joint_types=joint_types,
        branching=False,
        springs=springs,
        dampers=dampers,
        gravity=gravity,
        joint_reactions=joint_reactions,
    )


# ----------------------------------------------------------------------
# Closed loops
# ----------------------------------------------------------------------
@functools.cache
def _linkage_declaration(n_bars: int, explicit: bool) -> _Declaration:
    """The symbolic part of :func:`build_linkage`, once per structure."""
    N = me.ReferenceFrame("N")
    A = me.Point("O")
    A.set_vel(N, 0)
    nl = n_bars - 1
    q = me.dynamicsymbols(f"q1:{nl + 1}")
    u = me.dynamicsymbols(f"u1:{nl + 1}")
    L = sm.symbols(f"L0:{nl + 1}", positive=True)
    gx, gy, tau, k1, s1, b1 = sm.symbols("gx gy tau k1 s1 b1", real=True)
    D = A.locatenew("D", L[0] * N.y)
    D.set_vel(N, 0)
    bodies, loads, V = [], [], sm.S.Zero
    tip, frames = A, []
    syms = {str(x): x for x in (*L, gx, gy, tau, k1, s1, b1)}
    for i in range(nl):
        k = i + 1
        B = N.orientnew(f"B{k}", "Axis", (q[i], N.z))
        B.set_ang_vel(N, u[i] * N.z)
        base = D if k == nl else tip
        cx, cy = sm.symbols(f"cx{k} cy{k}", real=True)
        m = sm.Symbol(f"m{k}", positive=True)
        Is = _inertia_symbols(k)
        syms |= {str(x): x for x in (cx, cy, m, *Is)}
        G = base.locatenew(f"G{k}", cx * B.x + cy * B.y)
        G.v2pt_theory(base, N, B)
        if k < nl:
            tip = base.locatenew(f"P{k}", L[k] * B.x)
            tip.v2pt_theory(base, N, B)
        bodies.append(me.RigidBody(f"link{k}", G, B, m, (_inertia_dyadic(B, Is), G)))
        loads.append(me.Force(G, m * (gx * N.x + gy * N.y)))
        V -= m * (gx * G.pos_from(A).dot(N.x) + gy * G.pos_from(A).dot(N.y))
        frames.append(B)
    loads.append(me.Torque(frames[0], (tau - k1 * (q[0] - s1) - b1 * u[0]) * N.z))
    V += -tau * q[0] + k1 * (q[0] - s1) ** 2 / 2
    power = -b1 * u[0] ** 2
    closure = (
        sum(
            (L[i + 1] * sm.Matrix([sm.cos(q[i]), sm.sin(q[i])]) for i in range(nl - 1)),
            sm.zeros(2, 1),
        )
        - L[nl] * sm.Matrix([sm.cos(q[-1]), sm.sin(q[-1])])
        - sm.Matrix([0, L[0]])
    )
    system = me.System(N, A)
    system.add_coordinates(*q[:-2])
    system.add_coordinates(*q[-2:], independent=False)
    system.add_speeds(*u[:-2])
    system.add_speeds(*u[-2:], independent=False)
    system.add_kdes(*[ui - qi.diff() for qi, ui in zip(q, u)])
    system.add_holonomic_constraints(*closure)
    system.add_bodies(*bodies)
    system.add_loads(*loads)
    dep = {}
    if explicit:
        q2f, q3f = four_bar_closed_form(q[0], L[1], L[2], L[3], L[0])
        dep = {q[1]: q2f, q[2]: q3f}
    return system, syms, q, u, V, power, dep


def build_linkage(
    n_bars: int,
    values: Mapping[str, float],
    initial: Sequence[float | Expr],
    *,
    explicit: bool = False,
) -> MechanicalSystem:
    """A planar n-bar linkage of rigid links with pin joints.

    Ground pivots A (the origin) and D = L0 * N.y.  Links 1..n-2 form a
    chain from A, link n-1 hangs from D; their absolute angles ``q1..q{n-1}``
    are measured from N.x about N.z (link n-1 from D towards the joint it
    shares with link n-2).  Loop closure::

        sum_{i<n-1} L_i e(q_i) - L_{n-1} e(q_{n-1}) = L0 N.y

    The last two angles are dependent.  Link i has mass ``m{i}``, mass
    centre ``(cx{i}, cy{i})`` in its frame (x along the link), central
    inertia ``I{i}_..``.  Loads: gravity ``(gx, gy)``, a constant torque
    ``tau`` on link 1, a spring ``-k1 (q1 - s1)`` and a damper ``-b1 q1'``
    between the ground and link 1.  For the four-bar the geometry is that
    of the catalogue's ``four_bar`` (with ``explicit=True`` its closed form
    gives ``dependent_solutions``).
    """
    system, syms, q, u, V, power, dep = _linkage_declaration(n_bars, explicit)
    params = {syms[k]: float(v) for k, v in values.items()}
    init = (
        {qi: float(v) for qi, v in zip(q, initial)}
        | {u[0]: 0.0}
        | {ui: 0.0 for ui in u[1:-2]}
    )
    return MechanicalSystem(
        name=f"random_{n_bars}_bar",
        system=system,
        parameters=params,
        initial_state=init,
        dependent_solutions=dep,
        potential_energy=V,
        energy_conserved=False,
        description=build_linkage.__doc__ or "",
        random_spread=0.25,
        speed_scale=1.0,
        options={
            "family": "linkage",
            "structure": ("linkage", n_bars, explicit),
            "nonconservative_power": power,
        },
    )


def _link_values(draw: st.DrawFn, nl: int) -> dict[str, float]:
    vals = {}
    for k in range(1, nl + 1):
        m = draw(_floats(0.5, 3.0))
        vals[f"m{k}"] = m
        vals[f"cx{k}"] = draw(_floats(-0.3, 1.0))
        vals[f"cy{k}"] = draw(_floats(-0.3, 0.3))
        I = draw(_inertia_tensors(m))
        vals |= {
            str(x): float(v) for x, v in _inertia_values(_inertia_symbols(k), I).items()
        }
    vals["gx"] = draw(_floats(-10.0, 10.0))
    vals["gy"] = draw(_floats(-10.0, 10.0))
    vals["tau"] = draw(_floats(-5.0, 5.0))
    vals["k1"] = draw(_floats(0.0, 20.0))
    vals["s1"] = draw(_floats(-1.0, 1.0))
    vals["b1"] = draw(_floats(0.0, 2.0))
    return vals


@st.composite
def _linkages(draw: st.DrawFn, lo: int, hi: int, explicit: bool) -> MechanicalSystem:
    n_bars = draw(st.integers(lo, hi))
    nl = n_bars - 1
    if n_bars == 4 and explicit and draw(st.booleans()):
        # A Grashof crank-rocker with margins: the crank L1 is shortest and
        # the distance D P1, in [L4 - L1, L4 + L1], stays 0.1 inside
        # (|L2 - L3|, L2 + L3), so coupler and rocker are never collinear
        # and the closed form holds on the whole crank turn.
        L1 = draw(_floats(0.1, 0.4))
        L4 = draw(_floats(L1 + 0.3, 1.5))
        L2 = draw(_floats(L1 + 0.2, 1.5))
        d = L4 - L1 - 0.1
        lo3, hi3 = max(L2 - d, L4 + L1 + 0.1 - L2, L1 + 0.05), L2 + d
        L3 = lo3 + (hi3 - lo3) * draw(_floats(0.02, 0.98))
        q1 = draw(_floats(-3.0, 3.0))
        q2, q3 = four_bar_closed_form(q1, L1, L2, L3, L4)
        vals = {"L0": L4, "L1": L1, "L2": L2, "L3": L3} | _link_values(draw, nl)
        return build_linkage(4, vals, [q1, float(q2), float(q3)], explicit=True)
    lengths = [draw(_floats(0.3, 1.5)) for _ in range(nl)]
    angles = [draw(_floats(-np.pi, np.pi)) for _ in range(nl - 1)]
    # The angle between the two dependent links is kept away from 0 and pi
    # so that the loop can be solved for them (well-conditioned Jacobian).
    delta = draw(_floats(0.6, np.pi - 0.6)) * draw(st.sampled_from([-1, 1]))
    # Link n-1 points from D to the tip of link n-2.
    angles.append(angles[-1] + np.pi + delta)
    w = sum(
        L * np.array([np.cos(a), np.sin(a)]) for L, a in zip(lengths[:-1], angles[:-1])
    ) - lengths[-1] * np.array([np.cos(angles[-1]), np.sin(angles[-1])])
    L0 = float(np.hypot(*w))
    assume(L0 > 0.2)
    # Turn the whole assembly so that the ground link lies along +y.
    rot = np.pi / 2 - float(np.arctan2(w[1], w[0]))
    angles = [a + rot for a in angles]
    vals = {"L0": L0} | {f"L{k}": lengths[k - 1] for k in range(1, nl + 1)}
    vals |= _link_values(draw, nl)
    return build_linkage(n_bars, vals, angles, explicit=False)


def closed_loops(
    *, min_bars: int = 4, max_bars: int = 5, explicit_four_bar: bool = True
) -> st.SearchStrategy[MechanicalSystem]:
    """Random planar n-bar linkages assembled consistently.

    Link lengths and all link angles are drawn first; the ground link is
    whatever closes the loop, and the assembly is turned so that it lies
    along +y (gravity has a random direction, so nothing is lost).  The
    two dependent links meet at an angle kept away from 0 and pi, so the
    loop equations can be solved for them.

    Parameters
    ----------
    min_bars, max_bars : int
        Bars including the ground, 4 to 7 (n bars have n - 3 degrees of
        freedom).
    explicit_four_bar : bool
        Let some four-bars be Grashof crank-rockers in the catalogue's
        geometry that carry the explicit solutions of
        :func:`eomcompare.systems.four_bar.four_bar_closed_form` as
        ``dependent_solutions``.

    Examples
    --------
    >>> from eomcompare.testing.strategies import closed_loops
    >>> strategy = closed_loops(min_bars=4, max_bars=4)
    """
    lo = _check_int("min_bars", min_bars, 4, 7)
    hi = _check_int("max_bars", max_bars, 4, 7)
    _check_range("min_bars", lo, "max_bars", hi)
    _check_bool("explicit_four_bar", explicit_four_bar)
    return _linkages(lo, hi, explicit_four_bar)


# ----------------------------------------------------------------------
# Nonholonomic systems
# ----------------------------------------------------------------------
@functools.cache
def _sleigh_declaration() -> _Declaration:
    """The Chaplygin sleigh's declaration (parameters symbolic)."""
    x, y, th = me.dynamicsymbols("x y theta")
    u1, u2, u3 = me.dynamicsymbols("u1 u2 u3")
    m, a, b, beta, gx, gy, k, s0, c = sm.symbols("m a b beta gx gy k s0 c", real=True)
    Is = _inertia_symbols(1)
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    B = N.orientnew("B", "Axis", (th, N.z))
    B.set_ang_vel(N, u3 * N.z)
    P = O.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, u1 * B.x + u2 * B.y)
    G = P.locatenew("G", a * B.x + b * B.y)
    G.v2pt_theory(P, N, B)
    body = me.RigidBody("sleigh", G, B, m, (_inertia_dyadic(B, Is), G))
    system = me.System(N, O)
    system.add_coordinates(x, y, th)
    system.add_speeds(u3, u1)
    system.add_speeds(u2, independent=False)
    # Written solved for the speeds: the declaration's speeds in coordinate
    # rates (which multiplier formulations use) then carry no spurious
    # 1/sin(theta) from a symbolic elimination.
    system.add_kdes(
        u1 - (sm.cos(th) * x.diff() + sm.sin(th) * y.diff()),
        u2 - (-sm.sin(th) * x.diff() + sm.cos(th) * y.diff()),
        u3 - th.diff(),
    )
    # The blade at P points along B.x turned by beta: no velocity across it.
    system.add_nonholonomic_constraints(-sm.sin(beta) * u1 + sm.cos(beta) * u2)
    system.add_bodies(body)
    system.add_loads(
        me.Force(G, m * (gx * N.x + gy * N.y)),
        me.Torque(B, (-k * (th - s0) - c * u3) * N.z),
    )
    V = (
        -m * (gx * G.pos_from(O).dot(N.x) + gy * G.pos_from(O).dot(N.y))
        + k * (th - s0) ** 2 / 2
    )
    syms = {str(v): v for v in (m, a, b, beta, gx, gy, k, s0, c, *Is)}
    return system, syms, (x, y, th, u1, u2, u3), V, -c * u3**2


def build_sleigh(
    values: Mapping[str, float], initial: Mapping[str, float] | None = None
) -> MechanicalSystem:
    """The Chaplygin sleigh with parameter values by name (``m, a, b, beta,
    gx, gy, k, s0, c, I1_xx .. I1_zx``) and initial ``x, y, theta``.

    Examples
    --------
    >>> from eomcompare.testing.strategies import build_sleigh
    >>> values = dict(m=1.0, a=0.0, b=0.0, beta=0.0, gx=0.0, gy=0.0, k=0.0,
    ...               s0=0.0, c=0.0, I1_xx=0.1, I1_yy=0.1, I1_zz=0.2,
    ...               I1_xy=0.0, I1_yz=0.0, I1_zx=0.0)
    >>> build_sleigh(values).degrees_of_freedom
    2
    """
    system, syms, (x, y, th, u1, u2, u3), V, power = _sleigh_declaration()
    initial = dict(initial or {})
    init = {
        x: initial.get("x", 0.0),
        y: initial.get("y", 0.0),
        th: initial.get("theta", 0.0),
        u1: 0.0,
        u3: 0.0,
    }
    return MechanicalSystem(
        name="random_sleigh",
        system=system,
        parameters={syms[k]: float(values[k]) for k in syms},
        initial_state=init,
        potential_energy=V,
        description=_SLEIGH_DOC,
        random_spread={x: 1.0, y: 1.0, th: 3.0},
        speed_scale=1.0,
        options={
            "family": "sleigh",
            "structure": ("sleigh",),
            "nonconservative_power": power,
        },
    )


@st.composite
def _sleighs(draw: st.DrawFn) -> MechanicalSystem:
    m = draw(_floats(0.5, 3.0))
    vals = {
        "m": m,
        "a": draw(_floats(-1.0, 1.0)),
        "b": draw(_floats(-0.5, 0.5)),
        "beta": draw(_floats(-1.0, 1.0)),
        "gx": draw(_floats(-10.0, 10.0)),
        "gy": draw(_floats(-10.0, 10.0)),
        "k": draw(_floats(0.0, 10.0)),
        "s0": draw(_floats(-1.0, 1.0)),
        "c": draw(_floats(0.0, 2.0)),
    }
    I = draw(_inertia_tensors(m))
    vals |= {
        str(s): float(v) for s, v in _inertia_values(_inertia_symbols(1), I).items()
    }
    init = {
        "x": draw(_floats(-1.0, 1.0)),
        "y": draw(_floats(-1.0, 1.0)),
        "theta": draw(_floats(-3.0, 3.0)),
    }
    return build_sleigh(vals, init)


_SLEIGH_DOC = """Chaplygin sleigh: a planar rigid body (mass m, central
inertia I1_.., mass centre G at (a, b) in the body frame from the blade's
contact point P = (x, y)) on a plane with in-plane gravity (gx, gy), a
heading spring -k (theta - s0) and damper -c theta'.  The blade at P points
along B.x turned by beta and allows no velocity across it.  Speeds: u3 =
theta', u1, u2 the components of P's velocity along B.x, B.y (u2
dependent).  With a = b = 0 it is the knife edge."""


@functools.cache
def _disc_declaration() -> MechanicalSystem:
    # Building the catalogue's disc simplifies its constraints: once only.
    return get_system("rolling_disc")


@st.composite
def _discs(draw: st.DrawFn) -> MechanicalSystem:
    base = _disc_declaration()
    by_name = {str(k): k for k in base.parameters}
    vals = {
        "m": draw(_floats(0.5, 3.0)),
        "r": draw(_floats(0.1, 1.0)),
        "g": draw(_floats(0.0, 10.0)),
    }
    q2 = base.coordinates[1]
    init = dict(base.initial_state)
    init |= {c: draw(_floats(-1.0, 1.0)) for c in base.coordinates}
    init[q2] = draw(_floats(-0.6, 0.6))
    for ui in base.u_ind:
        init[ui] = draw(_floats(-3.0, 3.0))
    for ui in base.u_dep:
        init.pop(ui, None)
    return MechanicalSystem(
        name="random_rolling_disc",
        system=base.system,
        parameters={by_name[k]: v for k, v in vals.items()},
        initial_state=init,
        potential_energy=base.potential_energy,
        energy_conserved=True,
        description=base.description,
        random_spread=base.random_spread,
        speed_scale=base.speed_scale,
        options={
            "family": "rolling_disc",
            "structure": ("rolling_disc",),
            "nonconservative_power": sm.S.Zero,
        },
    )


def nonholonomic_systems(
    *, kinds: Sequence[str] = NONHOLONOMIC_KINDS
) -> st.SearchStrategy[MechanicalSystem]:
    """Random nonholonomic systems.

    Parameters
    ----------
    kinds : sequence of {"sleigh", "rolling_disc"}
        ``"sleigh"``: the Chaplygin sleigh / knife-edge family (random mass,
        inertia, mass-centre offset from the blade, blade angle, in-plane
        gravity, heading spring and damper).  ``"rolling_disc"``: the
        catalogue's ``rolling_disc`` declaration with random mass, radius,
        gravity and initial state.

    Examples
    --------
    >>> from eomcompare.testing.strategies import nonholonomic_systems
    >>> strategy = nonholonomic_systems(kinds=["sleigh"])
    """
    kinds = _check_choices("kinds", kinds, NONHOLONOMIC_KINDS)
    parts = {"sleigh": _sleighs(), "rolling_disc": _discs()}
    return st.one_of(*[parts[k] for k in kinds])


# ----------------------------------------------------------------------
# Rheonomic systems
# ----------------------------------------------------------------------
@functools.cache
def _driven_declaration(n: int, drive: str) -> _Declaration:
    """The symbolic part of :func:`build_driven_chain`, once per structure."""
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    q = me.dynamicsymbols(f"q1:{n + 1}")
    u = me.dynamicsymbols(f"u1:{n + 1}")
    A, w, phi, g = sm.symbols("A w phi g", real=True)
    syms = {str(x): x for x in (A, w, phi, g)}
    if drive == "translation":
        s, alpha = me.dynamicsymbols("s"), sm.Symbol("alpha", real=True)
        syms["alpha"] = alpha
        S = O.locatenew("S", s * (sm.cos(alpha) * N.x + sm.sin(alpha) * N.y))
        S.set_vel(N, s.diff(t) * (sm.cos(alpha) * N.x + sm.sin(alpha) * N.y))
        specified = {s: A * sm.sin(w * t + phi)}
        Pf = N
    else:
        th = me.dynamicsymbols("theta")
        La, Om = sm.symbols("La Omega", real=True)
        syms |= {"La": La, "Omega": Om}
        arm = N.orientnew("arm", "Axis", (th, N.z))
        arm.set_ang_vel(N, th.diff(t) * N.z)
        S = O.locatenew("S", La * arm.x)
        S.v2pt_theory(O, N, arm)
        specified = {th: Om * t + A * sm.sin(w * t + phi)}
        Pf = arm
    bodies, loads = [], []
    joint = S
    for i in range(n):
        k = i + 1
        l, m, J = sm.symbols(f"l{k} m{k} J{k}", positive=True)
        syms |= {str(l): l, str(m): m, str(J): J}
        B = Pf.orientnew(f"B{k}", "Axis", (q[i], Pf.z))
        B.set_ang_vel(Pf, u[i] * Pf.z)
        G = joint.locatenew(f"G{k}", l / 2 * B.x)
        G.v2pt_theory(joint, N, B)
        tip = joint.locatenew(f"P{k}", l * B.x)
        tip.v2pt_theory(joint, N, B)
        bodies.append(me.RigidBody(f"link{k}", G, B, m, (me.inertia(B, 0, J, J), G)))
        loads.append(me.Force(G, -m * g * N.y))
        joint, Pf = tip, B
    system = me.System(N, O)
    system.add_coordinates(*q)
    system.add_speeds(*u)
    system.add_kdes(*[ui - qi.diff() for qi, ui in zip(q, u)])
    system.add_bodies(*bodies)
    system.add_loads(*loads)
    V = sum(b.mass * g * b.masscenter.pos_from(O).dot(N.y) for b in bodies)
    return system, syms, q, u, V, specified


def build_driven_chain(
    n: int, drive: str, values: Mapping[str, float], initial: Sequence[float]
) -> MechanicalSystem:
    """A planar chain of n links (pin joints, relative angles) hung from a
    support S moved by a prescribed function of time.

    ``drive="translation"``: ``S = s(t) (cos(alpha) N.x + sin(alpha) N.y)``
    with ``s(t) = A sin(w t + phi)``.  ``drive="rotation"``: S is the tip of
    an arm of length ``La`` turned about O by ``theta(t) = Omega t +
    A sin(w t + phi)``, and the first joint angle is measured from the arm.
    Links are rods along their x axis: length ``l{i}``, mass ``m{i}``,
    central moment ``J{i}``, mass centre at ``l{i}/2``.  Gravity ``-g N.y``.
    """
    system, syms, q, u, V, specified = _driven_declaration(n, drive)
    return MechanicalSystem(
        name="random_driven_chain",
        system=system,
        parameters={syms[k]: v for k, v in values.items()},
        initial_state={qi: v for qi, v in zip(q, initial)} | {ui: 0.0 for ui in u},
        specified=specified,
        potential_energy=V,
        description=build_driven_chain.__doc__ or "",
        random_spread=1.5,
        options={
            "family": "driven_chain",
            "structure": ("driven_chain", n, drive),
            "nonconservative_power": None,
        },
    )


@st.composite
def _driven(
    draw: st.DrawFn, lo: int, hi: int, drives: tuple[str, ...]
) -> MechanicalSystem:
    n = draw(st.integers(lo, hi))
    drive = draw(st.sampled_from(drives))
    vals = {
        "A": draw(_floats(0.0, 1.0)),
        "w": draw(_floats(0.0, 5.0)),
        "phi": draw(_floats(-np.pi, np.pi)),
        "g": draw(_floats(0.0, 10.0)),
    }
    if drive == "translation":
        vals["alpha"] = draw(_floats(-np.pi, np.pi))
    else:
        vals["La"] = draw(_floats(0.1, 1.0))
        vals["Omega"] = draw(_floats(-3.0, 3.0))
    for k in range(1, n + 1):
        l, m = draw(_floats(0.2, 1.5)), draw(_floats(0.5, 3.0))
        # Between a thin rod (m l^2/12) and a point mass at the centre.
        vals |= {
            f"l{k}": l,
            f"m{k}": m,
            f"J{k}": m * l * l / 12 * draw(_floats(0.05, 1.0)),
        }
    init = [draw(_floats(-1.5, 1.5)) for _ in range(n)]
    return build_driven_chain(n, drive, vals, init)


def rheonomic_systems(
    *, min_bodies: int = 1, max_bodies: int = 2, drives: Sequence[str] = DRIVES
) -> st.SearchStrategy[MechanicalSystem]:
    """Random planar chains driven by a prescribed motion of their support.

    The support's motion is a function of time given through ``specified``
    (see :func:`build_driven_chain`); the energy of such a system is not
    conserved (the drive does work), so ``nonconservative_power`` is
    ``None``: unknown.

    Parameters
    ----------
    min_bodies, max_bodies : int
        Links, 1 to 4.
    drives : sequence of {"translation", "rotation"}

    Examples
    --------
    >>> from eomcompare.testing.strategies import rheonomic_systems
    >>> strategy = rheonomic_systems(drives=["rotation"])
    """
    lo = _check_int("min_bodies", min_bodies, 1, 4)
    hi = _check_int("max_bodies", max_bodies, 1, 4)
    _check_range("min_bodies", lo, "max_bodies", hi)
    drives = _check_choices("drives", drives, DRIVES)
    return _driven(lo, hi, drives)


# ----------------------------------------------------------------------
# Everything, and states
# ----------------------------------------------------------------------
def mechanical_systems(*, max_bodies: int = 3) -> st.SearchStrategy[MechanicalSystem]:
    """Any of the families above, each with small structures.

    Examples
    --------
    >>> from eomcompare.testing.strategies import mechanical_systems
    >>> strategy = mechanical_systems(max_bodies=2)
    """
    hi = _check_int("max_bodies", max_bodies, 1, 6)
    return st.one_of(
        open_chains(dimension=2, max_bodies=hi),
        kinematic_trees(dimension=3, max_bodies=min(hi, 2)),
        closed_loops(min_bars=4, max_bars=min(4 + max(hi - 1, 0), 5)),
        nonholonomic_systems(),
        rheonomic_systems(max_bodies=min(hi, 2)),
    )


def consistent_states(
    system: MechanicalSystem, *, parameters: ParameterValues | None = None
) -> st.SearchStrategy[State]:
    """States ``(t, q, q')`` of ``system`` satisfying every constraint.

    Drawn by :meth:`eomcompare.systems.MechanicalSystem.random_state` from a random
    seed (so a failing example names a reproducible state); seeds for which
    no consistent state is found are rejected.

    Parameters
    ----------
    system : MechanicalSystem
    parameters : mapping, optional
        Parameter values overriding the system's own.

    Examples
    --------
    >>> from eomcompare.systems import get_system
    >>> from eomcompare.testing.strategies import consistent_states
    >>> strategy = consistent_states(get_system("four_bar"))
    """
    if not isinstance(system, MechanicalSystem):
        raise TypeError(
            f"system must be a MechanicalSystem, not {type(system).__name__}"
        )

    def state(seed: int) -> State | None:
        try:
            return system.random_state(seed=seed, parameters=parameters)
        except ConstraintError:
            return None

    return _not_none(st.integers(0, 2**32 - 1).map(state))


# ----------------------------------------------------------------------
# Velocities declared from points not located from the origin
# ----------------------------------------------------------------------
def reanchor_velocity(
    ms: MechanicalSystem, offset: Sequence[float], *, moving: bool = True
) -> MechanicalSystem:
    """``ms`` with its last rigid body's mass centre re-declared from a new
    point that has no position from the fixed point.

    A new point ``C`` gets a declared velocity and the mass centre becomes
    ``C + offset`` (``offset = (dx, dy, dz)`` in the body's frame) with its
    velocity by ``v2pt_theory(C, N, body frame)``.  With ``moving`` C's
    velocity is the true velocity of the body's point at ``-offset`` from
    its mass centre, so the system is unchanged; otherwise ``C`` is
    declared at rest, which (like a disc's contact point) puts a
    constraint into the velocity.  Loads at the old mass centre move to
    the new one.  ``ms`` itself is not changed.

    Returns
    -------
    MechanicalSystem
        Whose ``declaration_analysis`` records the new mass centre as a
        velocity that is not the derivative of a position.
    """
    N = ms.frame
    rigid = [b for b in ms.bodies if isinstance(b, me.RigidBody)]
    if not rigid:
        raise ValueError(f"system {ms.name!r} has no rigid body to re-anchor")
    body = rigid[-1]
    B, G = body.frame, body.masscenter
    d = sum((float(c) * e for c, e in zip(offset, (B.x, B.y, B.z))), me.Vector(0))
    C = me.Point("C_unlocated")
    C.set_vel(N, (G.vel(N) - B.ang_vel_in(N).cross(d)) if moving else 0)
    G2 = C.locatenew("G_unlocated", d)
    G2.v2pt_theory(C, N, B)
    new_body = me.RigidBody(body.name, G2, B, body.mass, (body.central_inertia, G2))
    old = ms.system
    system = me.System(N, old.fixed_point)
    system.add_coordinates(*ms.q_ind)
    if ms.q_dep:
        system.add_coordinates(*ms.q_dep, independent=False)
    system.add_speeds(*ms.u_ind)
    if ms.u_dep:
        system.add_speeds(*ms.u_dep, independent=False)
    system.add_kdes(*ms.kdes)
    if ms.holonomic_constraints:
        system.add_holonomic_constraints(*ms.holonomic_constraints)
    if ms.nonholonomic_constraints:
        system.add_nonholonomic_constraints(*ms.nonholonomic_constraints)
    system.add_bodies(*[new_body if b is body else b for b in ms.bodies])
    system.add_loads(
        *[
            me.Force(G2, ld.vector)
            if isinstance(ld, me.Force) and ld.point is G
            else ld
            for ld in ms.loads
        ]
    )
    return MechanicalSystem(
        name=ms.name + ("_reanchored" if moving else "_pinned_at_C"),
        system=system,
        parameters=dict(ms.parameters),
        initial_state=dict(ms.initial_state),
        specified=dict(ms.specified),
        dependent_solutions=dict(ms.dependent_solutions),
        random_spread=ms.random_spread,
        speed_scale=ms.speed_scale,
        options=dict(ms.options) | {"reanchored": (tuple(offset), moving)},
    )


def _every_speed_moves_a_body(ms: MechanicalSystem) -> bool:
    N = ms.frame
    vectors = []
    for b in ms.bodies:
        vectors.append(b.masscenter.vel(N))
        if isinstance(b, me.RigidBody):
            vectors.append(b.frame.ang_vel_in(N))
    measures = [m for v in vectors if v != 0 for mat, _ in v.args for m in mat]
    return all(any(sm.sympify(m).diff(u) != 0 for m in measures) for u in ms.speeds)


@st.composite
def _reanchored(
    draw: st.DrawFn, base: st.SearchStrategy[MechanicalSystem], moving: tuple[bool, ...]
) -> MechanicalSystem:
    ms = draw(base)
    offset = draw(st.tuples(*[_floats(-0.5, 0.5)] * 3))
    mode = draw(st.sampled_from(moving))
    out = reanchor_velocity(ms, offset, moving=mode)
    # At rest, C can take away the only motion of a speed (a prismatic
    # leaf): its mass matrix is singular, a degenerate system to skip.
    assume(_every_speed_moves_a_body(out))
    return out


def unlocated_velocities(
    systems: st.SearchStrategy[MechanicalSystem] | None = None,
    *,
    moving: Sequence[bool] = (True, False),
) -> st.SearchStrategy[MechanicalSystem]:
    """Systems whose last body's mass-centre velocity comes by
    ``v2pt_theory`` from a point not located from the fixed point.

    Parameters
    ----------
    systems : strategy of MechanicalSystem, optional
        The systems to re-declare (default: planar open chains and spatial
        trees of up to two bodies).
    moving : sequence of bool
        Which kinds of new point to draw (see :func:`reanchor_velocity`).

    Examples
    --------
    >>> from eomcompare.testing.strategies import unlocated_velocities
    >>> strategy = unlocated_velocities()
    """
    if systems is None:
        systems = st.one_of(
            open_chains(dimension=2, max_bodies=2),
            kinematic_trees(dimension=3, max_bodies=2),
        )
    moving = tuple(moving)
    if not moving or not all(isinstance(m, bool) for m in moving):
        raise ValueError(
            f"moving must be a non-empty sequence of bools, not {moving!r}"
        )
    return _reanchored(systems, moving)
