"""Families of systems built from a structure and parameter values: kinematic
trees, planar n-bar linkages, the Chaplygin sleigh, the rolling disc and
chains driven by a prescribed motion of their support.

These are the declarations behind the hypothesis strategies of
:mod:`eomcompare.testing.strategies`, which draw the structures and values;
here they take fixed ones (regression cases, hand-made checks, the
Pinocchio oracle of :mod:`eomcompare.references.oracles`).  Nothing here
draws a random number.

The symbols of a structure are always named the same way, so two systems
with the same structure differ only in their parameter values: a
derivation made for one can be evaluated with the parameters of the other
(``eom.numeric(other.parameters)``).  The symbolic part of a structure is
built once (``functools.cache``).  Each system carries in its
``options``:

``"family"``
    The family's name (``"tree"``, ``"linkage"``, ``"sleigh"``,
    ``"rolling_disc"``, ``"driven_chain"``).
``"structure"``
    A hashable description of the symbolic structure; equal structures
    give identical equations up to parameter values, so it is a cache key.
``"nonconservative_power"``
    The power of the loads that are not in ``potential_energy`` (viscous
    dampers), an expression in (t, q, u); zero when every load is
    conservative, ``None`` when unknown (a driven chain, whose drive does
    work).  Written from the damper laws, separately from the load
    vectors, so that an energy balance can check the two against each other.

Examples
--------
>>> from eomcompare.systems.families import build_tree
>>> structure = (2, ((-1, "R", 2),), False, False, True, ())
>>> values = {"m1": 1.0, "rx1": 0.0, "ry1": 0.0, "cx1": 0.5, "cy1": 0.0,
...           "I1_xx": 0.1, "I1_yy": 0.1, "I1_zz": 0.1, "I1_xy": 0.0,
...           "I1_yz": 0.0, "I1_zx": 0.0, "gx": 0.0, "gy": -9.81}
>>> build_tree(structure, values).degrees_of_freedom
1
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.text import display_name
from eomcompare.symbolic.types import (
    Dyadic,
    Expr,
    FloatArray,
    ReferenceFrame,
    Symbol,
)

from .base import ConstraintForce, MechanicalSystem
from .catalogue import get_system
from .four_bar import four_bar_closed_form

#: The symbolic part of a family's declaration (a sympy ``System``, its
#: constant symbols by name, coordinates, speeds, ...), built once per
#: structure.
_Declaration: TypeAlias = tuple[Any, ...]
#: A tree's structure: ``(dimension, joints, springs, dampers, gravity,
#: reactions)`` with ``joints`` a tuple of ``(parent, kind, axis)``.
TreeStructure: TypeAlias = tuple[
    int, tuple[tuple[int, str, int], ...], bool, bool, bool, tuple[int, ...]
]

__all__ = [
    "TreeStructure",
    "build_tree",
    "build_linkage",
    "build_sleigh",
    "build_rolling_disc",
    "build_driven_chain",
    "reanchor_velocity",
    "inertia_symbols",
    "inertia_values",
]

t = me.dynamicsymbols._t


def inertia_symbols(i: int) -> tuple[Symbol, ...]:
    """The six symbols of body ``i``'s central inertia, as every family
    names them: ``I{i}_xx, I{i}_yy, I{i}_zz, I{i}_xy, I{i}_yz, I{i}_zx``."""
    return tuple(
        sm.symbols(f"I{i}_xx I{i}_yy I{i}_zz I{i}_xy I{i}_yz I{i}_zx", real=True)
    )


def inertia_values(syms: Sequence[Symbol], I: FloatArray) -> dict[Symbol, float]:
    """The values of :func:`inertia_symbols` ``syms`` read from a 3x3
    inertia tensor ``I``."""
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
        Isyms = inertia_symbols(k)
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
        Is = inertia_symbols(k)
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


# ----------------------------------------------------------------------
# The Chaplygin sleigh
# ----------------------------------------------------------------------
_SLEIGH_DOC = """Chaplygin sleigh: a planar rigid body (mass m, central
inertia I1_.., mass centre G at (a, b) in the body frame from the blade's
contact point P = (x, y)) on a plane with in-plane gravity (gx, gy), a
heading spring -k (theta - s0) and damper -c theta'.  The blade at P points
along B.x turned by beta and allows no velocity across it.  Speeds: u3 =
theta', u1, u2 the components of P's velocity along B.x, B.y (u2
dependent).  With a = b = 0 it is the knife edge."""


@functools.cache
def _sleigh_declaration() -> _Declaration:
    """The Chaplygin sleigh's declaration (parameters symbolic)."""
    x, y, th = me.dynamicsymbols("x y theta")
    u1, u2, u3 = me.dynamicsymbols("u1 u2 u3")
    m, a, b, beta, gx, gy, k, s0, c = sm.symbols("m a b beta gx gy k s0 c", real=True)
    Is = inertia_symbols(1)
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
    >>> from eomcompare.systems.families import build_sleigh
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


# ----------------------------------------------------------------------
# The rolling disc
# ----------------------------------------------------------------------
@functools.cache
def _disc_declaration() -> MechanicalSystem:
    # Building the catalogue's disc simplifies its constraints: once only.
    return get_system("rolling_disc")


def build_rolling_disc(
    values: Mapping[str, float], initial: Mapping[str, float] | None = None
) -> MechanicalSystem:
    """The catalogue's ``rolling_disc`` with parameter values by name (``m,
    r, g``) and initial coordinates and independent speeds by name (``q1,
    q2, q3, x, y, u1, u2, u3``; those not given keep the catalogue's).

    Raises
    ------
    ValueError
        For a missing parameter, or an initial value of anything but a
        coordinate or an independent speed (the dependent speeds follow
        from the constraints).

    Examples
    --------
    >>> ms = build_rolling_disc({"m": 2.0, "r": 0.3, "g": 9.81}, {"q2": 0.1})
    >>> ms.degrees_of_freedom, ms.options["family"]
    (3, 'rolling_disc')
    """
    base = _disc_declaration()
    by_name = {str(k): k for k in base.parameters}
    missing = sorted(set(by_name) - set(values))
    if missing:
        raise ValueError(f"values missing for parameters {missing}")
    settable = {display_name(x): x for x in (*base.coordinates, *base.u_ind)}
    unknown = sorted(set(initial or {}) - set(settable))
    if unknown:
        raise ValueError(
            f"no initial value can be given for {unknown}; valid: {list(settable)}"
        )
    init = {k: v for k, v in base.initial_state.items() if k not in base.u_dep}
    init |= {settable[k]: float(v) for k, v in (initial or {}).items()}
    return MechanicalSystem(
        name="random_rolling_disc",
        system=base.system,
        parameters={by_name[k]: float(values[k]) for k in by_name},
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


# ----------------------------------------------------------------------
# Chains driven by a prescribed motion
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
    # Potential energy, observables and constraint forces are expressions
    # of the old body's points; the re-anchored declaration leaves them out.
    return ms.replace(
        name=ms.name + ("_reanchored" if moving else "_pinned_at_C"),
        system=system,
        parameters=dict(ms.parameters),
        potential_energy=None,
        observables={},
        constraint_forces=(),
        description="",
        energy_conserved=False,
        options=dict(ms.options) | {"reanchored": (tuple(offset), moving)},
    )
