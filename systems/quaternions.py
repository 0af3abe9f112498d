"""Unit quaternions among a declaration's coordinates: which four
coordinates orient a frame with three speeds, and the speeds written in the
coordinate rates everywhere on the unit sphere.

A quaternion block is four independent coordinates that orient one frame
(``orient_quaternion``) and whose kinematic equations are
``q' = F(q) w`` in three speeds w with ``F^T F = |q|^2 / 4 * I``: the
quaternion kinematics in body rates (``q' = 1/2 q (x) (0, w)``) or in space
rates (``q' = 1/2 (0, w) (x) q``).  On the unit sphere ``w = 4 F^T q'``,
a left inverse of F defined for every q, which is how the speeds are
written in the rates (``MechanicalSystem.kinematics.u_of_qdot``): solving
three of the four kinematic equations for w instead would be singular
where the fourth row's component vanishes (at the identity for some
choices).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.calculus import jacobian
from eomcompare.symbolic.frames import connected_frames, declared_orientations

__all__ = ["QuaternionBlock", "quaternion_blocks", "speeds_from_quaternion_rates"]

t = me.dynamicsymbols._t


class QuaternionBlock:
    """Four coordinates, their three speeds and ``F`` (4 x 3) with
    ``q' = F w``."""

    def __init__(self, coordinates, speeds, F) -> None:
        self.coordinates = tuple(coordinates)
        self.speeds = tuple(speeds)
        self.F = sm.ImmutableMatrix(F)

    @property
    def speeds_in_rates(self) -> sm.Matrix:
        """``4 F^T q'``: the speeds on the unit sphere."""
        return 4 * self.F.T * sm.Matrix([c.diff(t) for c in self.coordinates])

    @property
    def norm_constraint(self):
        """``q . q - 1``."""
        return sum(c**2 for c in self.coordinates) - 1

    def __repr__(self) -> str:
        names = [str(c).replace("(t)", "") for c in self.coordinates]
        return f"QuaternionBlock({names})"


def quaternion_blocks(
    frame, q_ind: Sequence, speeds: Sequence, qdot: Mapping
) -> list[QuaternionBlock]:
    """The quaternion blocks of a declaration: ``frame`` its inertial frame,
    ``q_ind`` its independent coordinates, ``qdot`` ``{q': expression in
    (t, q, u)}`` from its kinematic equations."""
    ind = set(q_ind)
    u = list(speeds)
    found: list[QuaternionBlock] = []
    seen = set()
    for F_ in connected_frames(frame):
        for dcm in declared_orientations(F_).values():
            four = sorted(
                (x for x in sm.Matrix(dcm).atoms(sm.Function) if x in ind), key=str
            )
            if len(four) != 4 or tuple(four) in seen:
                continue
            # Declared order (w, x, y, z) is the order of the coordinates.
            four = [x for x in q_ind if x in set(four)]
            seen.add(tuple(sorted(four, key=str)))
            rates = sm.Matrix([qdot[c.diff(t)] for c in four])
            J = jacobian(rates, u)
            cols = [j for j in range(len(u)) if any(J[i, j] != 0 for i in range(4))]
            if len(cols) != 3:
                continue
            bias = rates - J * sm.Matrix(u)
            if any(sm.expand(b) != 0 for b in bias):
                continue
            F = J.extract(list(range(4)), cols)
            FtF = F.T * F
            norm4 = sum(c**2 for c in four) / 4
            if any(
                sm.expand(FtF[i, j] - (norm4 if i == j else 0)) != 0
                for i in range(3)
                for j in range(3)
            ):
                continue
            found.append(QuaternionBlock(four, [u[j] for j in cols], F))
    return found


def speeds_from_quaternion_rates(
    blocks: Sequence[QuaternionBlock],
    coordinates: Sequence,
    speeds: Sequence,
    qdot: Mapping,
    solve,
) -> dict | None:
    """``{u: expression in (t, q, q')}`` for every speed when the excess of
    coordinates over speeds is that of the quaternion ``blocks``: their
    speeds ``4 F^T q'``, the others solved (by ``solve(A, b)``, A x = b)
    from the other coordinates' kinematic equations.  None otherwise."""
    q, u = list(coordinates), list(speeds)
    if not blocks or len(q) - len(u) != len(blocks):
        return None
    u_map = {}
    in_block = set()
    for b in blocks:
        for ui, e in zip(b.speeds, b.speeds_in_rates):
            u_map[ui] = e
        in_block |= set(b.coordinates)
    rest_u = [ui for ui in u if ui not in u_map]
    rest_q = [qi for qi in q if qi not in in_block]
    if len(rest_u) != len(rest_q):
        return None
    if rest_u:
        rows = sm.Matrix([qi.diff(t) - qdot[qi.diff(t)] for qi in rest_q])
        rows = rows.xreplace(u_map)
        A = jacobian(rows, rest_u)
        rhs = -(rows - A * sm.Matrix(rest_u)).applyfunc(sm.expand)
        for ui, e in zip(rest_u, solve(A, rhs)):
            u_map[ui] = sm.sympify(e)
    return {ui: u_map[ui] for ui in u}
