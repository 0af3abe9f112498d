"""Compact vector algebra for derivations: components in chosen frames.

sympy's vector algebra re-expresses vectors through direction cosine
matrices composed frame by frame.  For a chain of bodies each oriented from
its parent (as joints naturally give) the composed matrices are products of
sines and cosines whose size doubles with every link, which is where the
exponential growth of sympy's raw expressions comes from.  Here successive
rotations about the same body axis are merged first, so a planar chain
yields ``cos(q1 + q2 + q3)`` instead of the expanded products, and every
derived quantity is a 3-vector of components in one frame.

>>> import sympy.physics.mechanics as me
>>> q1, q2 = me.dynamicsymbols("q1 q2")
>>> N = me.ReferenceFrame("N")
>>> A = N.orientnew("A", "Axis", (q1, N.z))
>>> B = A.orientnew("B", "Axis", (q2, A.z))
>>> FrameAlgebra().dcm(B, N)[0, 0]
cos(q1(t) + q2(t))
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

import sympy as sm
import sympy.physics.mechanics as me

from .calculus import jacobian, substitute, time_derivative
from .dense import entries, matrix

__all__ = [
    "FrameAlgebra",
    "axis_rotation",
    "natural_frame",
    "kinetic_energy",
    "generalized_forces",
    "BodyKinematics",
    "VectorCalculus",
    "body_kinematics",
    "declared_orientations",
    "declared_positions",
    "connected_frames",
    "connected_points",
    "matmul",
    "dot",
    "cross",
    "add",
    "sub",
    "scale",
    "dyadic_matrix",
]

t = me.dynamicsymbols._t


# ----------------------------------------------------------------------
# The declaration's graphs of frames and points
# ----------------------------------------------------------------------
# sympy.physics.vector keeps the frames a frame was oriented relative to,
# and the points a point was located from, in the private attributes
# ``ReferenceFrame._dcm_dict`` and ``Point._pos_dict``, and offers no public
# way to list them (``dcm`` and ``pos_from`` need the other end already
# known).  These two functions are the only readers of those attributes in
# this project; everything else goes through them.
def declared_orientations(frame) -> dict:
    """``{G: frame.dcm(G)}`` for every frame G oriented directly relative to
    ``frame`` (either way round), with the matrix as sympy keeps it."""
    return dict(frame._dcm_dict)


def declared_positions(point) -> dict:
    """``{Q: point.pos_from(Q)}`` for every point Q located directly
    relative to ``point`` (either way round)."""
    return dict(point._pos_dict)


def connected_frames(frame) -> list:
    """Every frame connected to ``frame`` through declared orientations,
    breadth first from ``frame`` (which comes first)."""
    return _reach(frame, declared_orientations)


def connected_points(point) -> list:
    """Every point connected to ``point`` through declared positions,
    breadth first from ``point`` (which comes first)."""
    return _reach(point, declared_positions)


def _reach(start, neighbours):
    seen, queue = {start: None}, deque([start])
    while queue:
        for other in neighbours(queue.popleft()):
            if other not in seen:
                seen[other] = None
                queue.append(other)
    return list(seen)


def _as_matrix(A):
    return A if isinstance(A, sm.MatrixBase) else sm.Matrix(A)


def matmul(A, B) -> sm.Matrix:
    """``A * B`` with the same entries, without products by zero.

    sympy's product multiplies zero by every nonzero entry (``0 * oo`` is
    ``nan``) and so asks the assumptions system whether each large entry is
    finite, which on the composed rotations of a spatial chain costs more
    than the product itself.  Each entry here is ``Add`` of the nonzero
    products in the order of the inner index, as sympy's is.
    """
    A, B = _as_matrix(A), _as_matrix(B)
    if A.cols != B.rows:
        raise sm.ShapeError(f"matrices {A.shape} and {B.shape} do not fit")
    n, m = A.cols, B.cols
    a, b = entries(A), entries(B)
    rows = [a[i * n : (i + 1) * n] for i in range(A.rows)]
    cols = [b[j::m] for j in range(m)]
    return matrix(
        A.rows,
        m,
        [
            sm.Add(*[x * y for x, y in zip(r, c) if x != 0 and y != 0])
            for r in rows
            for c in cols
        ],
    )


def dot(a, b):
    """``a.dot(b)`` of two 3x1 (or 1x3) columns, without products by zero."""
    a = entries(a) if isinstance(a, sm.MatrixBase) else a
    b = entries(b) if isinstance(b, sm.MatrixBase) else b
    return sm.Add(*[x * y for x, y in zip(a, b) if x != 0 and y != 0])


def cross(a, b) -> sm.Matrix:
    """``a.cross(b)`` of two 3x1 columns, without products by zero."""
    a = entries(a) if isinstance(a, sm.MatrixBase) else list(a)
    b = entries(b) if isinstance(b, sm.MatrixBase) else list(b)

    def p(x, y):
        return x * y if x != 0 and y != 0 else sm.S.Zero

    return matrix(
        3,
        1,
        [
            p(a[1], b[2]) - p(a[2], b[1]),
            p(a[2], b[0]) - p(a[0], b[2]),
            p(a[0], b[1]) - p(a[1], b[0]),
        ],
    )


def _entry(x):
    # sympy's matrices store no zero entry: a sum or product that comes out
    # a number zero (Float 0.0 included) is the exact zero.
    return x if x else sm.S.Zero


def add(A, B) -> sm.Matrix:
    """``A + B`` with the same entries, entry by entry.

    sympy's matrix arithmetic converts both operands to its domain
    matrices and back at every operation, which on the many small
    component matrices of a derivation costs more than the sums; the
    entries are the ones it gives (a zero entry contributes nothing).
    """
    if A.shape != B.shape:
        raise sm.ShapeError(f"matrices {A.shape} and {B.shape} do not fit")
    zero = sm.S.Zero
    return matrix(
        A.rows,
        A.cols,
        [
            _entry(b) if a is zero else _entry(a) if b is zero else _entry(a + b)
            for a, b in zip(entries(A), entries(B))
        ],
    )


def sub(A, B) -> sm.Matrix:
    """``A - B`` with the same entries (sympy's ``A + (-B)``), entry by entry."""
    return add(A, scale(-1, B))


def scale(s, A) -> sm.Matrix:
    """``s * A`` with the same entries, entry by entry (zero entries stay
    zero without a product)."""
    zero = sm.S.Zero
    return matrix(
        A.rows, A.cols, [zero if a is zero else _entry(s * a) for a in entries(A)]
    )


def axis_rotation(axis: int, angle) -> sm.Matrix:
    """``X.dcm(Y)`` for X rotated by ``angle`` about axis ``axis`` of Y."""
    c, s = sm.cos(angle), sm.sin(angle)
    i, j = (axis + 1) % 3, (axis + 2) % 3
    R = [sm.S.One if k in (0, 4, 8) else sm.S.Zero for k in range(9)]
    R[3 * i + i], R[3 * i + j], R[3 * j + i], R[3 * j + j] = c, s, -s, c
    return matrix(3, 3, R)


class _Flat:
    """``M[i, j]`` of a 3x3 matrix read from its list of entries (sympy's
    indexing costs microseconds per entry)."""

    __slots__ = ("e",)

    def __init__(self, M):
        self.e = entries(M)

    def __getitem__(self, ij):
        return self.e[3 * ij[0] + ij[1]]


def _as_axis_rotation(M):
    """(axis, angle) when M is a simple rotation about a body axis."""
    M = _Flat(M)
    for k in range(3):
        i, j = (k + 1) % 3, (k + 2) % 3
        if M[k, k] != 1 or any(M[k, m] != 0 or M[m, k] != 0 for m in (i, j)):
            continue
        c = M[i, i]
        if not isinstance(c, sm.cos) or M[j, j] != c:
            return None
        a = c.args[0]
        if M[i, j] == sm.sin(a) and M[j, i] == -sm.sin(a):
            return k, a
        if M[i, j] == -sm.sin(a) and M[j, i] == sm.sin(a):
            return k, -a
        return None
    return None


class FrameAlgebra:
    """Direction cosine matrices with merged same-axis rotations, and vector
    components in any frame, cached for one derivation.

    The frames themselves are not changed: sympy's own caches stay as they
    were, so other formulations see the declaration untouched.
    """

    def __init__(self) -> None:
        self._dcm = {}

    @staticmethod
    def path(A, B):
        """The frames from A to B along declared orientations, both
        included; ValueError when they are not connected."""
        if A is B:
            return [A]
        prev = {A: None}
        queue = deque([A])
        while queue:
            F = queue.popleft()
            for G in declared_orientations(F):
                if G not in prev:
                    prev[G] = F
                    if G is B:
                        path = [B]
                        while prev[path[-1]] is not None:
                            path.append(prev[path[-1]])
                        return path[::-1]
                    queue.append(G)
        raise ValueError(f"frames {A} and {B} are not connected")

    def dcm(self, A, B) -> sm.Matrix:
        """``A.dcm(B)``: components in A of B's basis vectors; v_A = dcm v_B."""
        key = (A, B)
        if key in self._dcm:
            return self._dcm[key]
        path = self.path(A, B)
        result = sm.eye(3)
        run_axis, run_angle = None, sm.S.Zero
        for F, G in zip(path[:-1], path[1:]):
            step = declared_orientations(F)[G]
            rot = _as_axis_rotation(step)
            if rot is not None and rot[0] == run_axis:
                run_angle += rot[1]
                continue
            if run_axis is not None:
                result = matmul(result, axis_rotation(run_axis, run_angle))
                run_axis = None
            if rot is not None:
                run_axis, run_angle = rot
            else:
                result = matmul(result, step)
        if run_axis is not None:
            result = matmul(result, axis_rotation(run_axis, run_angle))
        self._dcm[key] = result
        self._dcm[(B, A)] = result.T
        return result

    def components(self, vec, frame, rep=None) -> sm.Matrix:
        """3x1 components of a sympy vector in ``frame``.

        ``rep`` is an optional xreplace applied to the measure numbers
        first (e.g. the kinematic differential equations' q' -> f(q, u)),
        or a sequence of them applied in turn.
        """
        out = sm.zeros(3, 1)
        if vec == 0:
            return out
        reps = [rep] if isinstance(rep, Mapping) else list(rep or ())
        # (an empty mapping would still walk every path of every measure)
        reps = [r for r in reps if r]
        for measure, F in vec.args:
            m = measure
            for r in reps:
                m = m.xreplace(r)
            out = add(out, m if F is frame else matmul(self.dcm(frame, F), m))
        return out

    def vector(self, components, frame):
        """The sympy vector with the given components in ``frame``."""
        return (
            components[0] * frame.x + components[1] * frame.y + components[2] * frame.z
        )


def dyadic_matrix(dyadic, frame) -> sm.Matrix:
    """``dyadic.to_matrix(frame)``, read off the measure numbers when every
    term of ``dyadic`` is in ``frame`` (a central inertia declared in its
    body's frame, the usual case).

    sympy's ``to_matrix`` takes nine double dot products, each composing
    direction cosine matrices term by term: a third of a second for one
    inertia, paid whenever a declaration is checked.  Terms in other frames
    fall back to it.
    """
    M = sm.zeros(3, 3)
    for measure, a, b in dyadic.args:
        index = []
        for vec in (a, b):
            (components, F), *rest = vec.args
            if rest or F is not frame:
                return sm.Matrix(dyadic.to_matrix(frame))
            nonzero = [i for i, c in enumerate(components) if c != 0]
            if len(nonzero) != 1 or components[nonzero[0]] != 1:
                return sm.Matrix(dyadic.to_matrix(frame))
            index.append(nonzero[0])
        M[index[0], index[1]] += measure
    return M


def natural_frame(vec, default):
    """The frame of a vector's first term, where it is simplest."""
    return vec.args[0][1] if vec != 0 else default


def kinetic_energy(bodies, N, fa: FrameAlgebra, rep=None) -> sm.Expr:
    """Kinetic energy of ``bodies`` in N from components in each body's own
    frame (a particle: the frame of its velocity's first term).

    Taking the components in the body's frame keeps the central inertia
    constant and, through the merged rotations of ``fa``, keeps the size of
    the velocities polynomial in the length of a chain; sympy's ``dot`` of
    the same vectors composes the direction cosine matrices frame by frame.
    ``rep`` is applied to the measure numbers first (e.g. speeds written in
    coordinate rates).
    """
    T = sm.S.Zero
    for body in bodies:
        vel = body.masscenter.vel(N)
        rigid = isinstance(body, me.RigidBody)
        F = body.frame if rigid else natural_frame(vel, N)
        v = fa.components(vel, F, rep)
        T += body.mass * dot(v, v) / 2
        if rigid:
            w = fa.components(body.frame.ang_vel_in(N), F, rep)
            T += dot(w, matmul(dyadic_matrix(body.central_inertia, F), w)) / 2
    return T


def generalized_forces(
    loads, N, fa: FrameAlgebra, rates, rep=None, partials=None
) -> sm.Matrix:
    """``Q_i = sum_P F_P . dv_P/dr_i + sum_B T_B . dw_B/dr_i`` for the
    velocity variables ``rates`` (speeds or coordinate rates), with every
    vector in the components of its load's own frame; ``rep`` as in
    :func:`kinetic_energy` (applied to the loads' measure numbers too).

    ``partials``, a pair of dicts ``(points, frames)``, collects the partial
    velocities of the load points and the partial angular velocities of
    the loaded frames by name, as ``(3 x len(rates) matrix, frame of its
    components)``, the first found for each name (Kane's extras)."""
    rates = list(rates)
    Q = sm.zeros(len(rates), 1)
    for load in loads:
        E = natural_frame(load.vector, N)
        comps = fa.components(load.vector, E, rep)
        if isinstance(load, me.Force):
            vel, name, table = load.point.vel(N), load.point.name, 0
        else:
            vel, name, table = load.frame.ang_vel_in(N), load.frame.name, 1
        if partials is not None:
            jac = jacobian(fa.components(vel, E, rep), rates)
            partials[table].setdefault(name, (jac, E))
        elif vel == 0 or comps == sm.zeros(3, 1):
            continue
        else:
            jac = jacobian(fa.components(vel, E, rep), rates)
        Q = add(Q, matmul(jac.T, comps))
    return Q


# ----------------------------------------------------------------------
# Velocities, partial velocities and accelerations of the bodies
# ----------------------------------------------------------------------
class BodyKinematics:
    """Kinematics of one body in components of a frame F moving with it.

    Attributes
    ----------
    body, frame : the body and the frame F of the components (the body's
        own frame for a rigid body, where its inertia is constant; for a
        particle the frame of its velocity's first term).
    v : 3x1 velocity of the mass centre.
    vr, wr : 3 x o partial velocities and partial angular velocities (wr
        None for a particle).
    w : angular velocity (None for a particle); ``frame_w`` that of F.
    a0, alpha0 : acceleration of the mass centre and angular acceleration
        without the speed-rate terms, ``a = vr u' + a0`` (None when
        :func:`body_kinematics` was asked for whole accelerations).
    a, alpha : the whole accelerations, speed-rate terms included (None
        unless asked for).
    inertia : 3x3 central inertia in F (None for a particle).
    """

    __slots__ = (
        "body",
        "frame",
        "v",
        "a0",
        "a",
        "w",
        "alpha0",
        "alpha",
        "vr",
        "wr",
        "inertia",
        "frame_w",
    )

    def __init__(self, body, frame):
        self.body, self.frame = body, frame
        self.v = self.a0 = self.a = self.w = self.alpha0 = self.alpha = None
        self.vr = self.wr = self.inertia = self.frame_w = None

    def inertia_force(self):
        """Components of -m a0 (speed-rate terms excluded)."""
        return -self.body.mass * self.a0

    def inertia_torque(self):
        """Components of -(I alpha0 + w x I w), or None for a particle."""
        if self.w is None:
            return None
        Iw = matmul(self.inertia, self.w)
        return scale(-1, add(matmul(self.inertia, self.alpha0), cross(self.w, Iw)))


class VectorCalculus:
    """Velocity, partial velocities and acceleration of a point from its
    declared velocity, frame by frame.

    The declared velocity is a sum of small measure vectors in several
    frames; each is differentiated while small (d/dt in N of m_G in G is
    m_G' + w_G x m_G) and only then brought into the target frame through
    the direction cosine matrices of ``fa``, so no large expression is ever
    differentiated.

    Parameters
    ----------
    N : ReferenceFrame
        The inertial frame.
    qdot : mapping
        Coordinate rates in the speeds, ``{q': f(t, q, u)}``.
    speeds : sequence
        The generalized speeds u of the partial velocities.
    fa : FrameAlgebra
        Or any object with its ``components(vec, frame, rep)`` and
        ``dcm(A, B)``.
    """

    def __init__(self, N, qdot, speeds, fa):
        self.N, self.qdot, self.speeds, self.fa = N, qdot, list(speeds), fa
        self.ud_zero = {u.diff(t): 0 for u in speeds}
        self._w = {}
        self._memo_d, self._memo_qdot, self._memo_ud = {}, {}, {}
        # xreplace(qdot) then xreplace(ud_zero) of a derivative: no value
        # of qdot is a key of ud_zero's, so one mapping does both, applied
        # as the derivative is formed (where no q' is a sum of speeds).
        self._rates_with = self._rates_without = None
        if not any(sm.sympify(v).is_Add for v in qdot.values()):
            self._rates_with = dict(qdot)
            self._rates_without = dict(qdot) | {
                k: sm.S.Zero for k in self.ud_zero if k not in qdot
            }

    def rate(self, x, speed_rates=False):
        """d/dt of a column in (t, q, u), in (t, q, u) and, unless
        ``speed_rates``, without the speed-rate terms:
        ``x.diff(t).xreplace(qdot).xreplace(ud_zero)``, each shared subtree
        differentiated and rebuilt once (the components of deep bodies of a
        spatial chain are small graphs but exponentially large trees)."""
        # The rates replaced as the derivative is formed: the terms of the
        # speed rates, set to zero, are never built (x holds no q', u':
        # it is in (t, q, u)).
        rates = self._rates_with if speed_rates else self._rates_without
        memo = self._memo_d.setdefault(bool(speed_rates), {})
        if rates is None:  # a kinematic equation with a sum: afterwards
            d = [time_derivative(e, t, memo, exact=True) for e in entries(x)]
            d = substitute(d, self.qdot, self._memo_qdot)
            if not speed_rates:
                d = substitute(d, self.ud_zero, self._memo_ud)
        else:
            d = [
                time_derivative(e, t, memo, exact=True, rates=rates) for e in entries(x)
            ]
        return matrix(x.shape[0], x.shape[1], d)

    def in_speeds(self, x):
        """``x.xreplace(qdot)``, each shared subtree rebuilt once."""
        return matrix(
            x.shape[0], x.shape[1], substitute(entries(x), self.qdot, self._memo_qdot)
        )

    def frame_rate(self, G):
        """Angular velocity of G in N, in components of G."""
        if G not in self._w:
            self._w[G] = self.fa.components(G.ang_vel_in(self.N), G, self.qdot)
        return self._w[G]

    def velocity(
        self, vec, F, acceleration=True, speed_rates=False, *, value=True, partials=True
    ):
        """Components in F of a velocity ``vec``, its partial velocities
        and its time derivative in N (without the speed-rate terms unless
        ``speed_rates``; a zero column without ``acceleration``, and
        likewise for the velocity without ``value`` and the partial
        velocities without ``partials``: a caller that does not read them
        does not pay for rotating them into F)."""
        n = len(self.speeds)
        v, vr, a = sm.zeros(3, 1), sm.zeros(3, n), sm.zeros(3, 1)
        if vec == 0:
            return v, vr, a
        for measure, G in vec.args:
            m = self.in_speeds(measure)
            R = None if G is F else self.fa.dcm(F, G)
            if partials:
                mr = jacobian(m, self.speeds)
            if acceleration:
                aG = add(self.rate(m, speed_rates), cross(self.frame_rate(G), m))
            if R is None:
                if value:
                    v = add(v, m)
                if partials:
                    vr = add(vr, mr)
                if acceleration:
                    a = add(a, aG)
            else:
                if value:
                    v = add(v, matmul(R, m))
                if partials:
                    vr = add(vr, matmul(R, mr))
                if acceleration:
                    a = add(a, matmul(R, aG))
        return v, vr, a


def body_kinematics(
    bodies, N, qdot, speeds, fa, *, speed_rates: bool = False, partials: bool = True
) -> list[BodyKinematics]:
    """:class:`BodyKinematics` of every body, in (t, q, u).

    Parameters
    ----------
    bodies : sequence of RigidBody or Particle
    N : ReferenceFrame
        The inertial frame.
    qdot, speeds, fa
        As for :class:`VectorCalculus`.
    speed_rates : bool
        Whole accelerations ``a``, ``alpha`` (speed-rate terms included,
        as the acceleration energy of Gibbs-Appell needs) instead of
        ``a0``, ``alpha0`` without them (as Kane's inertia forces split
        them off through the partial velocities).
    partials : bool
        Partial velocities ``vr``, ``wr`` and the velocity ``v`` too;
        without them (what the acceleration energy of Gibbs-Appell reads
        is the accelerations alone) those attributes are None.

    Examples
    --------
    >>> import sympy as sm, sympy.physics.mechanics as me
    >>> q, u = me.dynamicsymbols("q u")
    >>> m, l = sm.symbols("m l")
    >>> N = me.ReferenceFrame("N")
    >>> A = N.orientnew("A", "Axis", (q, N.z))
    >>> A.set_ang_vel(N, u * N.z)
    >>> O = me.Point("O")
    >>> O.set_vel(N, 0)
    >>> P = O.locatenew("P", l * A.x)
    >>> P.set_vel(N, l * u * A.y)
    >>> k, = body_kinematics([me.Particle("p", P, m)], N, {q.diff(): u}, [u],
    ...                      FrameAlgebra(), speed_rates=True)
    >>> k.vr.T, k.a.T
    (Matrix([[0, l, 0]]), Matrix([[-l*u(t)**2, l*Derivative(u(t), t), 0]]))
    """
    calc = VectorCalculus(N, qdot, speeds, fa)
    out = []
    for body in bodies:
        vel = body.masscenter.vel(N)
        rigid = isinstance(body, me.RigidBody)
        k = BodyKinematics(body, body.frame if rigid else natural_frame(vel, N))
        wF = calc.frame_rate(k.frame)
        k.frame_w = wF
        k.v, k.vr, a = calc.velocity(
            vel, k.frame, speed_rates=speed_rates, value=partials, partials=partials
        )
        if not partials:
            k.v = k.vr = None
        if rigid:
            # The components of d/dt(w) in N and in F coincide (w x w = 0).
            alpha = calc.rate(wF, speed_rates)
            k.w = wF
            k.wr = jacobian(wF, speeds) if partials else None
            k.inertia = dyadic_matrix(body.central_inertia, k.frame)
        else:
            alpha = None
        if speed_rates:
            k.a, k.alpha = a, alpha
        else:
            k.a0, k.alpha0 = a, alpha
        out.append(k)
    return out
