"""The equations of motion as printed in the seed documents, as data.

Each catalogue system taken from a seed document has its published
equations here, twice when the print is wrong: ``printed`` as the document
prints it and ``corrected`` as re-deriving it showed it must read, with a
note that says what was wrong and how it was found.  Tests hold every
formulation against ``corrected``; the report shows both beside the derived
equations.

Equations are written in the declaration's own symbols (its coordinates as
functions of ``t``, their first and second derivatives, its parameters), so
that ``lhs - rhs`` can be evaluated at any state with the accelerations a
formulation computed.  Symbols a document leaves open (the solar panels'
spring torques) come with ``substitutions`` to the declaration's laws.

>>> from eomcompare.systems.seed_equations import published_equations
>>> [e.number for e in published_equations("rotating_tube")]
['(2-38)', '(2-39)']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.symbolic.text import display_name

__all__ = [
    "PublishedEquation",
    "published_equations",
    "PUBLISHED_SYSTEMS",
    "residual_function",
]

t = me.dynamicsymbols._t

_SOLAR = "kane_method_solar_panels_ru.txt"
_FA = "kane_method_examples_fa.txt"
_KOLEV = "kolev_modified_lagrange_bg.txt"


@dataclass(frozen=True)
class PublishedEquation:
    """One published equation of motion.

    Attributes
    ----------
    system : str
        Catalogue name.
    number : str
        The document's own equation number, e.g. ``"(2-70)"``.
    source : str
        Seed document it is printed in.
    printed : sympy.Eq
        The equation as printed (symbols the declaration lacks, such as a
        misprinted ``m3``, are plain symbols of that name).
    corrected : sympy.Eq or None
        The equation as it must read; None when the print is right.
    note : str
        What re-deriving it showed: the misprint and how it was found, or
        that the print was confirmed.
    substitutions : mapping
        Expressions for symbols the document leaves open, in the
        declaration's symbols (applied before evaluating).
    printed_reading : mapping
        Symbols of the print that the declaration names otherwise.
    """

    system: str
    number: str
    source: str
    printed: sm.Eq
    corrected: sm.Eq | None
    note: str
    substitutions: Mapping = field(default_factory=dict)
    #: How to read symbols of the print the declaration names otherwise
    #: (the four-bar's misprinted m3 is m2), to evaluate ``printed``.
    printed_reading: Mapping = field(default_factory=dict)

    @property
    def misprinted(self) -> bool:
        return self.corrected is not None

    @property
    def holds(self) -> sm.Eq:
        """The equation that holds: ``corrected`` if any, else ``printed``."""
        return self.corrected if self.corrected is not None else self.printed


def _names(ms):
    """Parameters and coordinates of a declaration by name."""
    p = {str(s): s for s in ms.parameters}
    q = {display_name(c): c for c in ms.coordinates}
    return p, q


def _solar_panels(ms):
    p, q = _names(ms)
    J1, J2, L1, L2, m1, m2 = (p[k] for k in ("J1", "J2", "L1", "L2", "m1", "m2"))
    phi1, phi2 = q["phi1"], q["phi2"]
    d1, d2 = phi1.diff(t), phi2.diff(t)
    a1, a2 = phi1.diff(t, 2), phi2.diff(t, 2)
    T1, T12 = sm.symbols("T1 T12")
    damped = bool(ms.options.get("damped", False))
    b1 = sm.Symbol("b1") if damped else 0
    b12 = sm.Symbol("b12") if damped else 0
    if damped:
        b1, b12 = p.get("b1", b1), p.get("b12", b12)
    subs = {T1: -p["k1"] * phi1 - b1 * d1, T12: -p["k12"] * (phi2 - sm.pi) - b12 * d2}
    eq26 = sm.Eq(
        -J1 * a1
        - L1**2 * (m1 + 4 * m2) * a1
        - (J2 + L2**2 * m2) * (a1 + a2)
        + 2
        * L1
        * L2
        * m2
        * ((2 * a1 + a2) * sm.cos(phi2) - (2 * d1 + d2) * d2 * sm.sin(phi2))
        + T1,
        0,
        evaluate=False,
    )
    eq27 = sm.Eq(
        2 * L1 * L2 * m2 * (d1**2 * sm.sin(phi2) + a1 * sm.cos(phi2))
        - (J2 + L2**2 * m2) * (a1 + a2)
        + T12,
        0,
        evaluate=False,
    )
    note = (
        "Re-derived and confirmed exactly. T1 and T12 are left open in the "
        "document; here they are the declaration's torsion springs "
        "T1 = -k1 phi1, T12 = -k12 (phi2 - pi) (damped: minus b phi')."
    )
    return [
        PublishedEquation("solar_panels", "(26)", _SOLAR, eq26, None, note, subs),
        PublishedEquation("solar_panels", "(27)", _SOLAR, eq27, None, note, subs),
    ]


def _rotating_tube(ms):
    p, q = _names(ms)
    m1, m2, k1, k2, L1, L2, g = (
        p[k] for k in ("m1", "m2", "k1", "k2", "L1", "L2", "g")
    )
    q1, q2 = q["q1"], q["q2"]
    (theta,) = ms.specified
    thd = theta.diff(t)
    eq38 = sm.Eq(
        -m1 * (q1.diff(t, 2) - (L1 + q1) * thd**2)
        + m1 * g * sm.cos(theta)
        - k1 * q1
        + k2 * (q2 - q1),
        0,
        evaluate=False,
    )
    eq39 = sm.Eq(
        -m2 * (q2.diff(t, 2) - (L1 + L2 + q2) * thd**2)
        + m2 * g * sm.cos(theta)
        - k2 * (q2 - q1),
        0,
        evaluate=False,
    )
    note = (
        "Re-derived and confirmed (u = q'). The velocities printed as "
        "(2-17), (2-18) put the transverse term along t1 where it is "
        "along t2; the equations of motion are right nonetheless."
    )
    return [
        PublishedEquation("rotating_tube", "(2-38)", _FA, eq38, None, note),
        PublishedEquation("rotating_tube", "(2-39)", _FA, eq39, None, note),
    ]


def four_bar_ratios(L1, L2, L3, q1, q2, q3, printed: bool = False):
    """A = q2'/q1' and B = q3'/q1' of (2-47); ``printed`` gives the
    document's, whose signs are wrong."""
    sign = -1 if printed else 1
    A = sign * L1 * sm.sin(q3 - q1) / (L2 * sm.sin(q2 - q3))
    B = sign * L1 * sm.sin(q1 - q2) / (L3 * sm.sin(q3 - q2))
    return A, B


def _four_bar(ms):
    if len(ms.coordinates) != 3:
        return []  # (2-70) is written with the redundant angles
    p, q = _names(ms)
    L1, L2, L3, m1, m2, g, tau = (
        p[k] for k in ("L1", "L2", "L3", "m1", "m2", "g", "tau")
    )
    q1, q2, q3 = q["q1"], q["q2"], q["q3"]
    u1, u1d = q1.diff(t), q1.diff(t, 2)

    def eq(mass2, printed):
        A, B = four_bar_ratios(L1, L2, L3, q1, q2, q3, printed)
        dBY = B.diff(q1) + A * B.diff(q2) + B * B.diff(q3)
        return sm.Eq(
            (m1 * L1**2 + mass2 * L3**2 * B**2) * u1d
            + mass2 * L3**2 * B * dBY * u1**2
            + g * (m1 * L1 * sm.sin(q1) + mass2 * L3 * sm.sin(q3) * B),
            tau,
            evaluate=False,
        )

    note = (
        "Two misprints. (2-47) prints both velocity ratios with the wrong "
        "sign: A = q2'/q1' = L1 sin(q3 - q1) / (L2 sin(q2 - q3)) and "
        "B = q3'/q1' = L1 sin(q1 - q2) / (L3 sin(q3 - q2)) (found against a "
        "finite-difference solution of the loop equations), and (2-64), "
        "(2-69), (2-70) print m3 where the coupler-rocker mass m2 is meant "
        "(the linkage has no third mass). Y = (1, A, B), dB/dq . Y is "
        "derived from B(q)."
    )
    return [
        PublishedEquation(
            "four_bar",
            "(2-70)",
            _FA,
            eq(sm.Symbol("m3"), True),
            eq(m2, False),
            note,
            printed_reading={sm.Symbol("m3"): m2},
        )
    ]


def _wheelbarrow(ms):
    p, q = _names(ms)
    m_w, m_wb, J, r, l, R, beta, I, pp = (
        p[k] for k in ("m_w", "m_wb", "J", "r", "l", "R", "beta", "I", "p")
    )
    phi, theta = q["phi"], q["theta"]
    # u1 = v = r phi' (rolling, (2-76)), u2 = theta'.
    u1, u2 = r * phi.diff(t), theta.diff(t)
    u1d, u2d = r * phi.diff(t, 2), theta.diff(t, 2)
    printed = sm.Eq(
        (m_w + m_wb) * u2d + J * u1d / r**2 + m_wb * l * u2**2,
        2 * R * sm.cos(beta),
        evaluate=False,
    )
    corrected = sm.Eq(
        (m_w + m_wb + J / r**2) * u1d + m_wb * l * u2**2,
        2 * R * sm.cos(beta),
        evaluate=False,
    )
    eq112 = sm.Eq(
        (I + J / 2 + m_wb * l**2) * u2d - l * m_wb * u1 * u2,
        -2 * pp * R * sm.sin(beta),
        evaluate=False,
    )
    return [
        PublishedEquation(
            "wheelbarrow",
            "(2-111)",
            _FA,
            printed,
            corrected,
            "(2-98), (2-100) and (2-111) print u2' where u1' is "
            "meant: the translational inertia (m_w + m_wb) "
            "multiplies the forward acceleration u1' = r phi'', "
            "as the wheel's J/r^2 beside it does.",
        ),
        PublishedEquation(
            "wheelbarrow",
            "(2-112)",
            _FA,
            eq112,
            None,
            "Confirmed (u1 = r phi', u2 = theta').",
        ),
    ]


def _rod_slider_shaft(ms):
    p, q = _names(ms)
    mR, mP, L, beta, g, T = (p[k] for k in ("m_R", "m_P", "L", "beta", "g", "T"))
    q1, q2 = q["q1"], q["q2"]
    u1, u2 = q1.diff(t), q2.diff(t)
    u1d, u2d = q1.diff(t, 2), q2.diff(t, 2)
    eq144 = sm.Eq(
        u1d - sm.sin(beta) ** 2 * u2**2 * q1, g * sm.cos(beta), evaluate=False
    )
    eq145 = sm.Eq(
        sm.sin(beta) ** 2
        * ((mP * q1**2 + 4 * mR * L**2 / 3) * u2d + 2 * mP * q1 * u1 * u2),
        T,
        evaluate=False,
    )
    note = (
        "Re-derived and confirmed ((2-144) is printed divided by m_P). "
        "The constraint force R2(R->P) printed as (2-182) is a misprint "
        "(its inertia term is copied from R3); see the system's tests."
    )
    return [
        PublishedEquation("rod_slider_shaft", "(2-144)", _FA, eq144, None, note),
        PublishedEquation("rod_slider_shaft", "(2-145)", _FA, eq145, None, note),
    ]


def _kolev_manipulator(ms):
    p, q = _names(ms)
    m1, m2, J, h, g, gamma = (p[k] for k in ("m1", "m2", "J_O2", "h", "g", "gamma"))
    c22, c23, c33, F_D = (p[k] for k in ("c22", "c23", "c33", "F_D"))
    qG, q2, q3 = q["qG"], q["q2"], q["q3"]
    qGdd, q2dd, q3dd = (x.diff(t, 2) for x in (qG, q2, q3))
    hc = h * sm.cos(gamma)
    r = m2 / m1 * hc
    eqs = [
        sm.Eq((m1 + m2) * qGdd, F_D - (m1 + m2) * g, evaluate=False),
        sm.Eq(
            q2dd
            + q3dd * hc
            + c22 * (m1 + m2) / (m1 * m2) * q2
            + (c23 * m1 + c22 * m2 * hc) / (m1 * m2) * q3,
            F_D / (m1 + m2),
            evaluate=False,
        ),
        sm.Eq(
            q2dd * (m1 + m2) * m2 * hc / m1
            + q3dd * (J + (m2 * hc) ** 2 / m1)
            + q2 * (m1 + m2) / m1 * (c23 + c22 * r)
            + q3 * (2 * c23 * r + c22 * r**2 + c33 + m2 * g * h * sm.sin(gamma)),
            F_D * r,
            evaluate=False,
        ),
    ]
    note = (
        "Reproduced exactly, with body 1 at qG + q1 and body 2 at qG - q2. "
        "As printed, the constraint (3.2) and the first term of T in (3.5) "
        "carry signs that contradict (3.6), (3.8) and (3.10); with them "
        "corrected (m1 q1 - m2 q2 - m2 h cos(gamma) q3 = 0 and "
        "m1 (qG' + q1')^2) the modified Lagrange equations give (3.10) as "
        "printed."
    )
    return [
        PublishedEquation(
            "kolev_manipulator", f"(3.10) row {i + 1}", _KOLEV, e, None, note
        )
        for i, e in enumerate(eqs)
    ]


#: System name -> builder of its published equations from a declaration.
PUBLISHED_SYSTEMS: dict[str, Callable] = {
    "solar_panels": _solar_panels,
    "rotating_tube": _rotating_tube,
    "four_bar": _four_bar,
    "wheelbarrow": _wheelbarrow,
    "rod_slider_shaft": _rod_slider_shaft,
    "kolev_manipulator": _kolev_manipulator,
}


def published_equations(system, **options) -> list[PublishedEquation]:
    """The published equations of a catalogue system ([] when it has none).

    Parameters
    ----------
    system : str or MechanicalSystem
        A catalogue name (built with ``options``) or a declaration.
    """
    from .base import MechanicalSystem
    from .catalogue import get_system

    if isinstance(system, str):
        if system not in PUBLISHED_SYSTEMS:
            return []
        system = get_system(system, **options)
    elif not isinstance(system, MechanicalSystem):
        raise TypeError(
            "system must be a catalogue name or a MechanicalSystem, "
            f"not {type(system).__name__}"
        )
    builder = PUBLISHED_SYSTEMS.get(system.name)
    return builder(system) if builder else []


def residual_function(equation: sm.Eq, ms, substitutions=None):
    """``f(t, q, qd, qdd) -> (residual, scale)`` of ``lhs - rhs``.

    The scale is the sum of the magnitudes of the additive terms, so the
    relative residual ``abs(residual) / scale`` is about the rounding error
    when the equation holds.  Raises ValueError naming the symbols the
    declaration does not define (a misprinted parameter).
    """
    expr = equation.lhs - equation.rhs
    if substitutions:
        expr = expr.subs(substitutions)
    if ms.specified:
        spec = dict(ms.specified)
        expr = expr.subs({k.diff(t, 2): v.diff(t, 2) for k, v in spec.items()})
        expr = expr.subs({k.diff(t): v.diff(t) for k, v in spec.items()})
        expr = expr.subs(spec)
    expr = expr.subs(dict(ms.parameters))
    n = len(ms.coordinates)
    qs = sm.symbols(f"_q0:{n}")
    qds = sm.symbols(f"_qd0:{n}")
    qdds = sm.symbols(f"_qdd0:{n}")
    ts = sm.Symbol("_t")
    rep = {}
    for c, _, b, d in zip(ms.coordinates, qs, qds, qdds):
        rep[c.diff(t, 2)] = d
        rep[c.diff(t)] = b
    expr = expr.subs(rep).subs(dict(zip(ms.coordinates, qs))).subs(t, ts)
    left = expr.free_symbols - set(qs) - set(qds) - set(qdds) - {ts}
    if left:
        raise ValueError(
            "the equation uses symbols the declaration does not "
            f"define: {sorted(map(str, left))}"
        )
    terms = sm.Add.make_args(sm.expand(expr))
    args = [ts, qs, qds, qdds]
    f = sm.lambdify(args, expr, "numpy")
    g = sm.lambdify(args, [sm.Abs(x) for x in terms], "numpy")

    def residual(t0, q, qd, qdd):
        return float(f(t0, q, qd, qdd)), float(sum(g(t0, q, qd, qdd)))

    return residual
