"""Operation counts the way the robotics literature counts them, applied to
derivations.

The convention (multiplications including divisions, additions including
subtractions, function calls apart, common subexpressions once, parameter-
only parts once per parameter set) and the counting itself are
:mod:`eomcompare.symbolic.literature_counts`; this module applies them to a
derivation's equations and holds the published figures.

Forward dynamics is the mass matrix and forcing, evaluated together as the
compiled backend does (one cse over both), plus the solve of
:mod:`eomcompare.numeric.compiled`, counted from its loops: for a mass matrix
symmetric as written its lower triangle and LDL^T
(:func:`ldl_solve_counts`), else the whole matrix and LU with partial
pivoting (:func:`lu_solve_counts`); dense, as a generic solver.  The
backend also takes shared numbers and factors out of sums
(:func:`eomcompare.numeric.c_code.factor_numbers`, :func:`~eomcompare.numeric.c_code.factor_common`);
the convention here is cse alone, so the backend evaluates at most the
operations counted.  Equations in explicit form
with an evaluation order (``kane_articulated``'s) are
counted from that order, which the compiled backend prints as it is,
without a solve (:func:`forward_dynamics_counts`).  Inverse dynamics is
``tau = M z' - f`` for given ``z'`` (the unknowns, q'' here), counted as
one set of expressions.

:data:`PUBLISHED` holds the published figures to set beside these counts.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sm

from eomcompare.symbolic.literature_counts import (
    OpCount,
    assignments_counts,
    count_ops_literature,
    ldl_solve_counts,
    lu_solve_counts,
)
from eomcompare.symbolic.literature_counts import (
    forward_dynamics_counts_of as _forward_dynamics_counts_of,
)

__all__ = [
    "OpCount",
    "count_ops_literature",
    "lu_solve_counts",
    "ldl_solve_counts",
    "forward_dynamics_counts",
    "forward_dynamics_counts_of",
    "assignments_counts",
    "inverse_dynamics_counts",
    "recursive_inverse_dynamics_counts",
    "PUBLISHED",
    "featherstone",
]


def _parameters(eom):
    return set(eom.system.parameters)


def _assignments(eom):
    return eom.extras.get("assignments")


def forward_dynamics_counts(eom) -> dict:
    """Counts of the forward dynamics of ``eom`` per evaluation: ``"mf"``
    (mass matrix and forcing together), ``"solve"`` (LDL^T or LU, as
    the backend solves), ``"total"``, as :class:`OpCount`.

    Equations in explicit form with an evaluation order
    (``eom.extras["assignments"]``, ``kane_articulated``'s)
    are counted from it, and have no solve: the compiled backend skips it
    when the mass matrix is the identity."""
    return forward_dynamics_counts_of(
        eom.mass_matrix,
        eom.forcing,
        _parameters(eom),
        assigned=_assignments(eom),
    )


def forward_dynamics_counts_of(
    mass_matrix, forcing, parameters, *, assigned=None, symmetric=None
) -> dict:
    """:func:`eomcompare.symbolic.literature_counts.forward_dynamics_counts_of`, with
    the solve decided, when ``symmetric`` is not given, from the mass
    matrix given, as the compiled backend decides from the matrix it
    compiles."""
    if assigned is None and symmetric is None:
        from eomcompare.numeric.c_code import is_structurally_symmetric

        symmetric = is_structurally_symmetric(sm.Matrix(mass_matrix))
    return _forward_dynamics_counts_of(
        mass_matrix, forcing, parameters, assigned=assigned, symmetric=symmetric
    )


def inverse_dynamics_counts(eom) -> OpCount:
    """Counts of ``tau = M z' - f`` with the unknowns' values ``z'`` given
    (q'' for the robots), one cse over all of ``tau``.

    Raises
    ------
    ValueError
        For equations in explicit form by a recursion
        (``extras["assignments"]``): there ``M z' - f`` is not the joint
        forces."""
    if _assignments(eom) is not None:
        raise ValueError(
            f"{eom.formulation} {dict(eom.options)}: the equations are in "
            "explicit form (u' = forcing), where M z' - f is not the joint "
            "forces; count inverse dynamics with a mass-matrix formulation or "
            "recursive_inverse_dynamics_counts"
        )
    zdd = sm.symbols(f"_zdd0:{len(eom.unknowns)}")
    tau = eom.mass_matrix * sm.Matrix(zdd) - eom.forcing
    return count_ops_literature([tau], _parameters(eom))


def recursive_inverse_dynamics_counts(ms) -> OpCount:
    """Counts of ``tau = M u' - f`` of a joint tree evaluated by Kane's
    equations recursively in body frames
    (:func:`eomcompare.formulations.kane_recursive.inverse_dynamics`), without forming
    ``M``; one cse over all of ``tau``."""
    from eomcompare.formulations.kane_recursive import inverse_dynamics

    zdd = sm.symbols(f"_zdd0:{len(ms.speeds)}")
    return count_ops_literature([inverse_dynamics(ms, zdd)], set(ms.parameters))


def featherstone(n: int) -> dict:
    """Featherstone (2008) Table 10.1 for n revolute joints, general
    inertia: ``{algorithm: (multiplications, additions)}``."""
    F = Fraction
    return {
        "RNEA": (93 * n - 108, 81 * n - 100),
        "CRBA": (10 * n**2 + 22 * n - 32, 6 * n**2 + 37 * n - 43),
        "factorize+solve": (
            F(n**3, 6) + F(3 * n**2, 2) - F(2 * n, 3),
            F(n**3, 6) + n**2 - F(7 * n, 6),
        ),
        "ABA": (224 * n - 259, 205 * n - 248),
    }


#: Six-joint inverse dynamics, (multiplications, additions), and notes.
PUBLISHED = {
    "Lagrangian, 4x4 matrices (Uicker/Kahn; Hollerbach 1980)": (
        66271,
        51548,
        "Hollerbach's polynomial 32 1/2 n^4 + 86 5/12 n^3 + "
        "171 1/4 n^2 + 53 1/3 n - 128 gives 67,143 at n = 6, not 66,271: "
        "one of the two is misprinted",
    ),
    "recursive Newton-Euler (Hollerbach 1980)": (
        852,
        738,
        "150n - 48 / 131n - 48 at n = 6: consistent",
    ),
    "Kane's equations, Stanford arm (Kane & Levinson 1983)": (
        646,
        394,
        "for their own Stanford arm model; the paper could not be "
        "consulted here, so its inertia assumptions are bracketed by "
        "three sets (bench robots, part 2)",
    ),
    "simplified Newton-Euler, ARM program": (
        224,
        174,
        "symbolically customized to one arm",
    ),
}
_SYMORO_NOTE = (
    "customised Newton-Euler (Khalil & Kleinfinger; SYMORO), OpenSYMORO run "
    "on Khalil's modified-DH robot and counted with this project's "
    "convention; this project's counts beside it in "
    "reports/bench/robots/khalil.md (python -m eomcompare.bench.khalil)"
)
for _robot, _sets in (
    (
        "Stanford arm (Khalil)",
        (
            ("general inertia", 324, 279),
            ("general inertia, base parameters", 262, 211),
            ("principal axes, mass centres on joint axes", 209, 149),
            ("principal axes, mass centres on joint axes, base parameters", 143, 96),
        ),
    ),
    (
        "RX-90",
        (
            ("general inertia", 331, 282),
            ("general inertia, base parameters", 287, 226),
        ),
    ),
):
    for _label, _mul, _add in _sets:
        PUBLISHED[f"customised Newton-Euler, SYMORO, {_robot}, {_label}"] = (
            _mul,
            _add,
            _SYMORO_NOTE,
        )
