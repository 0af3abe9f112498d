"""The equations a run derived, typeset for the report.

A worker packs each case's equations (:func:`pack_equations`) beside its
trajectories, so the report shows the equations of the run itself, never a
re-derivation.  :func:`equations_html` and :func:`equations_markdown` typeset
them in the form of their formulation: presentation MathML from sympy's own
printer for the HTML (no script, no network: every current browser lays it
out), LaTeX from ``sympy.physics.vector``'s printer between ``$$`` for the
Markdown.  Large systems show their structure instead of pages of symbols:
sizes, the sparsity pattern of the mass matrix as a small inline SVG, the
first entries, and the rest and the cse'd form in collapsed ``<details>``.

The published equations beside the derived ones and the report's section
are :mod:`eomcompare.compare.equations_section`'s; the notebook display of
a declaration and its equations is :mod:`eomcompare.compare.notebook`'s.
"""

from __future__ import annotations

import html
import pickle
import sys
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me
from sympy.core.function import AppliedUndef
from sympy.printing.mathml import MathMLPresentationPrinter

from eomcompare.numeric.trust import CacheRefused, sign, verify
from eomcompare.symbolic.counting import tree_leaves, tree_size

__all__ = [
    "pack_equations",
    "unpack_equations",
    "UntrustedEquations",
    "CaseEquations",
    "equations_html",
    "equations_markdown",
    "mathml",
    "latex",
    "FORMS",
    "PUBLISHED_FORMS",
    "is_large",
]

t = me.dynamicsymbols._t

#: Formulation -> (name of its form, what M z = f means for it).
FORMS = {
    "kane": (
        "Kane's equations F_r + F*_r = 0",
        "as M(q, t) u' = f(q, u, t), one row per generalized speed; rows "
        "of the constraints differentiated follow when dependent speeds "
        "are kept.",
    ),
    "lagrange": (
        "Lagrange's equations with multipliers",
        "d/dt ∂L/∂q' - ∂L/∂q = Q + Cᵀλ in all coordinates, then the "
        "constraint rows C q'' = -C' q' (the constraints "
        "differentiated twice); the unknowns are q'' and λ.",
    ),
    "modified_lagrange": (
        "Kolev's modified Lagrange equations",
        "T in all coordinates, the dependent ones eliminated "
        "after differentiating: one row per independent "
        "coordinate, unknowns its q''.",
    ),
    "gibbs_appell": (
        "The Gibbs–Appell equations ∂S/∂u'_r = Q_r",
        "S the acceleration energy, as M u' = f.",
    ),
    "sympy_kane": ("sympy's KanesMethod", "mass_matrix_full-free form M u' = f."),
    "sympy_lagrange": (
        "sympy's LagrangesMethod",
        "M q'' = f, with multiplier columns and constraint rows "
        "for constrained systems.",
    ),
}
#: Seed document -> the formulation whose form its published equations
#: have: the report shows them beside that formulation's derived equations
#: (Kolev's (3.10), one row per independent coordinate, beside
#: ``modified_lagrange``; Kane's equations in generalized speeds beside
#: ``kane``).
PUBLISHED_FORMS = {
    "kane_method_solar_panels_ru.txt": "kane",
    "kane_method_examples_fa.txt": "kane",
    "kolev_modified_lagrange_bg.txt": "modified_lagrange",
}
#: Beyond these sizes a case shows structure, not every symbol.
LARGE_ROWS = 6
LARGE_OPS = 400
#: Entries longer than this are not typeset at all (only counted).
MAX_ENTRY_OPS = 1500
#: Lines of cse'd expressions typeset at most.
MAX_CSE_LINES = 60
#: Characters of MathML typeset at most in each collapsed part of a case
#: (the further entries of a large system, the cse'd form): what is left
#: out is counted, and every entry stays in the run's arrays.  Keeps the
#: report of the main job to a few megabytes.
MATHML_BUDGET = 8_000
#: Characters of MathML of a form simplified for display beyond which it is
#: not shown (the report of the main job stays within 3 MB).
SIMPLIFIED_BUDGET = 4_000
#: Characters of presentation MathML in which every leaf of an expression
#: (a symbol, a number) is printed at least (``<mi>x</mi>``, ``<mn>2</mn>``,
#: a sign as ``<mo>-</mo>``): an expression with more leaves than a budget
#: holds at this many is left out without being printed first.
MIN_LEAF_CHARS = 10
#: Subexpressions a printer keeps printed at most (then it starts afresh).
_MEMO_SIZE = 200_000
#: Where the equations left out of the page are.
_WHERE_ALL = (
    "all of them are in the run's trajectories/&lt;case&gt;.npz "
    "(<code>compare.equations.unpack_equations</code>)"
)


# ----------------------------------------------------------------------
# Packing in the worker
# ----------------------------------------------------------------------
def _mass_symbols(ms) -> set:
    out = set()
    for b in ms.bodies:
        out |= sm.sympify(getattr(b, "mass", 0)).free_symbols
        inertia = getattr(b, "inertia", None)
        if inertia is not None:
            dyadic = (
                inertia[0]
                if isinstance(inertia, tuple)
                else getattr(inertia, "dyadic", inertia)
            )
            try:
                out |= dyadic.to_matrix(ms.frame).free_symbols
            except (AttributeError, TypeError, ValueError):
                pass
    return out - {t}


def _constraint_rows(eom) -> int:
    """How many trailing rows of M z = f are constraint rows.

    Constraint rows are kinematic: neither M nor f contains a mass or an
    inertia, which is checked (not assumed) row by row from the bottom.
    """
    ms = eom.system
    if not (ms.holonomic_constraints or ms.nonholonomic_constraints):
        return 0
    masses = _mass_symbols(ms)
    if not masses:
        return 0
    n, k = eom.mass_matrix.shape[0], 0
    for i in range(n - 1, -1, -1):
        syms = eom.mass_matrix.row(i).free_symbols | eom.forcing[i].free_symbols
        if syms & masses:
            break
        k += 1
    return k if k < n else 0


#: What a signature of packed equations is made for (:mod:`eomcompare.numeric.trust`).
_SIGNED_AS = "compare.equations"
_SIGNATURE_BYTES = 64  # an HMAC-SHA256 in hex


class UntrustedEquations(ValueError):
    """Packed equations not signed with this user's key: they were not
    written by this user's runs (or were damaged), and are not unpickled."""


def pack_equations(eom) -> np.ndarray:
    """The equations of a derivation as bytes in an array (for ``.npz``).

    Holds the mass matrix, forcing, unknowns, multipliers, states and
    kinematic equations, and how many rows are constraint rows, pickled
    after a signature (:func:`eomcompare.numeric.trust.sign`, the key that signs the
    caches): the output directory may be shared, and an unpickler runs
    what a pickle names.  Read back with :func:`unpack_equations`.
    """
    payload = pickle.dumps(equations_data(eom), protocol=pickle.HIGHEST_PROTOCOL)
    try:
        signature = sign(payload, _SIGNED_AS).encode()
    except CacheRefused:  # no key: kept unsigned, so never shown
        signature = b"0" * _SIGNATURE_BYTES
    return np.frombuffer(signature + payload, dtype=np.uint8)


def equations_data(eom) -> dict:
    """What :func:`pack_equations` stores and :func:`equations_html` reads."""
    return {
        "formulation": eom.formulation,
        "mass_matrix": eom.mass_matrix,
        "forcing": eom.forcing,
        "unknowns": tuple(eom.unknowns),
        "multipliers": tuple(eom.multipliers),
        "states": tuple(eom.states),
        "kinematic_equations": tuple(eom.kinematic_equations),
        "constraint_rows": _constraint_rows(eom),
        "dof": eom.system.degrees_of_freedom,
    }


def unpack_equations(array) -> dict:
    """The dict :func:`pack_equations` stored, once its signature holds
    (checked before anything is unpickled).

    Raises
    ------
    UntrustedEquations
        When the signature does not hold (or the key cannot be read).
    """
    raw = np.asarray(array, dtype=np.uint8).tobytes()
    signature, payload = raw[:_SIGNATURE_BYTES], raw[_SIGNATURE_BYTES:]
    try:
        trusted = verify(payload, _SIGNED_AS, signature.decode("ascii"))
    except (CacheRefused, UnicodeDecodeError):
        trusted = False
    if not trusted:
        raise UntrustedEquations(
            "not signed with this user's key (written by someone else, or "
            "damaged); not loaded"
        )
    return pickle.loads(payload)


# ----------------------------------------------------------------------
# Printing
# ----------------------------------------------------------------------
def _is_dynamic(e) -> bool:
    return isinstance(e, AppliedUndef) and e.args == (t,)


class _Printer(MathMLPresentationPrinter):
    """sympy's presentation printer with mechanics' notation: ``q1(t)`` as
    q₁ and its time derivatives with dots (as ``vlatex`` writes them)."""

    def __init__(self, settings=None):
        super().__init__(settings)
        self._symbols = {}
        self._printed: dict = {}

    def _print(self, expr, **kwargs):
        # The formulations of a system share most subexpressions, and a
        # subexpression prints alike wherever it stands (its parent adds
        # any parentheses): each is printed once, and where it comes again
        # its markup is inserted as it is (a raw text node, as sympy's
        # printer writes its own symbols), serialized once from the node
        # printed first, which nothing changes after.
        if kwargs or not isinstance(expr, sm.Basic) or isinstance(expr, sm.Symbol):
            return super()._print(expr, **kwargs)
        got = self._printed.get(expr)
        if got is None:
            if len(self._printed) >= _MEMO_SIZE:
                self._printed.clear()
            node = self._printed[expr] = super()._print(expr)
            return node
        if not isinstance(got, str):
            got = self._printed[expr] = got.toxml()
        return self.dom.createTextNode(got)

    def _print_Symbol(self, sym, style="plain"):
        # Parsing a name into sub- and superscripts dominates printing large
        # expressions; each symbol is parsed once.
        key = (sym.name, style)
        node = self._symbols.get(key)
        if node is None:
            node = self._symbols[key] = super()._print_Symbol(sym, style)
        return node.cloneNode(True)

    def _print_AppliedUndef(self, e):
        if _is_dynamic(e):
            return self._print(sm.Symbol(e.func.__name__))
        return self._print_Function(e)

    def _print_Derivative(self, e):
        if not (_is_dynamic(e.expr) and set(e.variables) == {t}):
            return super()._print_Derivative(e)
        order = len(e.variables)
        base = self._print(sm.Symbol(e.expr.func.__name__))
        head = base.childNodes[0] if base.nodeName in ("msub", "msubsup") else base
        if order <= 3:
            over = self.dom.createElement("mover")
            over.setAttribute("accent", "true")
            dot = self.dom.createElement("mo")
            dot.appendChild(
                self.dom.createTextNode({1: "\u02d9", 2: "\u00a8", 3: "\u20db"}[order])
            )
            wrapped = head.cloneNode(True)
            over.appendChild(wrapped)
            over.appendChild(dot)
        else:
            over = self.dom.createElement("msup")
            over.appendChild(head.cloneNode(True))
            mo = self.dom.createElement("mrow")
            mo.appendChild(self._print(sm.Symbol(f"({order})")))
            over.appendChild(mo)
        if head is base:
            return over
        base.replaceChild(over, head)
        return base


_PRINTER = _Printer({"order": "none"})


class _Latex(me.vector.printing.VectorLatexPrinter):
    """``vlatex``'s printer, each subexpression printed once (as
    :class:`_Printer`)."""

    def __init__(self, settings=None):
        super().__init__(settings)
        self._printed: dict = {}

    def _print(self, expr, **kwargs):
        if kwargs or not isinstance(expr, sm.Basic):
            return super()._print(expr, **kwargs)
        text = self._printed.get(expr)
        if text is None:
            text = super()._print(expr)
            if len(self._printed) >= _MEMO_SIZE:
                self._printed.clear()
            self._printed[expr] = text
        return text


_LATEX = _Latex()


@lru_cache(maxsize=4096)
def _mathml(expr) -> str:
    return _PRINTER._print(expr).toxml()


def mathml(expr) -> str:
    """Presentation MathML (the inner content, no ``<math>``) of ``expr``.

    The formulations of a system often share entries (the same mass matrix
    entry from Kane and Gibbs–Appell); each is typeset once.
    """
    return _mathml(sm.sympify(expr))


@lru_cache(maxsize=4096)
def _latex(expr) -> str:
    # vlatex(expr), by one printer of vlatex's settings (none).
    return _LATEX.doprint(expr)


def latex(expr) -> str:
    return _latex(sm.sympify(expr))


def math_element(inner: str, block: bool = True) -> str:
    disp = ' display="block"' if block else ""
    return f'<math xmlns="http://www.w3.org/1998/Math/MathML"{disp}>{inner}</math>'


def mrow(*parts) -> str:
    return "<mrow>" + "".join(parts) + "</mrow>"


EQ = "<mo>=</mo>"


def expression_ops(expr) -> int:
    """Size of an expression tree (nodes), a cheap stand-in for count_ops
    where only "too large to typeset" is decided."""
    return _tree_size(sm.sympify(expr))


def shortest_mathml(*exprs) -> int:
    """A lower bound on the characters of :func:`mathml` of ``exprs``
    together (:data:`MIN_LEAF_CHARS` a leaf), from their trees alone."""
    return MIN_LEAF_CHARS * sum(_tree_leaves(sm.sympify(e)) for e in exprs)


@lru_cache(maxsize=8192)
def _tree_leaves(expr) -> int:
    return tree_leaves(expr)


@lru_cache(maxsize=8192)
def _tree_size(expr) -> int:
    # Each entry is asked about several times (to typeset it, to bound the
    # cse'd block, in the Markdown); it is walked once, each shared
    # subtree once.
    return tree_size(expr)


# ----------------------------------------------------------------------
# One case
# ----------------------------------------------------------------------
@dataclass
class CaseEquations:
    """A case's equations as packed by the worker, with its row's counts."""

    label: str
    formulation: str
    data: dict
    ops_raw: float = float("nan")
    ops_cse: float = float("nan")

    @classmethod
    def of(cls, eom, label: str | None = None) -> CaseEquations:
        """A derivation's equations, with its counts, as a case shows them
        (``label`` defaults to the system's name)."""
        counts = eom.op_counts
        return cls(
            eom.system.name if label is None else label,
            eom.formulation,
            equations_data(eom),
            float(counts.get("raw", float("nan"))),
            float(counts.get("cse", float("nan"))),
        )

    @property
    def shape(self):
        return self.data["mass_matrix"].shape

    @property
    def n_constraint_rows(self) -> int:
        return int(self.data.get("constraint_rows", 0))


def is_large(case: CaseEquations) -> bool:
    ops = case.ops_raw
    if not (ops == ops):  # NaN: count here, only for small matrices
        ops = (
            0
            if case.shape[0] > LARGE_ROWS
            else sum(
                expression_ops(e)
                for e in [*case.data["mass_matrix"], *case.data["forcing"]]
            )
        )
    return case.shape[0] > LARGE_ROWS or ops > LARGE_OPS


def _form_text(case: CaseEquations) -> str:
    name, what = FORMS.get(case.formulation, (case.formulation, "as M z = f."))
    n, m = case.shape
    k = case.n_constraint_rows
    mult = len(case.data.get("multipliers", ()))
    parts = [f"{name}, {what}", f"{n} equations in {m} unknowns"]
    if mult:
        parts.append(f"{mult} multipliers")
    if k:
        parts.append(
            f"the last {k} rows are constraint rows (no mass or inertia in them)"
        )
    return "; ".join(parts) + "."


def _sparsity_svg(M, cell: int = 6) -> str:
    """The non-zero pattern of M as a small inline SVG."""
    n, m = M.shape
    size = max(min(cell, 240 // max(n, m, 1)), 2)
    w, h = m * size, n * size
    rects = [
        f'<rect x="{j * size}" y="{i * size}" width="{size}" height="{size}"/>'
        for i in range(n)
        for j in range(m)
        if M[i, j] != 0
    ]
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="spy" width="{w + 2}" '
        f'height="{h + 2}" viewBox="-1 -1 {w + 2} {h + 2}" role="img">'
        f"<title>non-zero pattern of the {n}×{m} mass matrix</title>"
        f'<rect x="-1" y="-1" width="{w + 2}" height="{h + 2}" fill="none" '
        f'stroke="#888"/><g fill="#1f4e99">{"".join(rects)}</g></svg>'
    )


def _matrix_equation(M, z, f) -> str:
    return math_element(
        mrow(mathml(sm.Matrix(M)), mathml(sm.Matrix(z)), EQ, mathml(sm.Matrix(f)))
    )


def _cse_block(M, f) -> str:
    exprs = list(M) + list(f)
    if sum(expression_ops(e) for e in exprs) > 20 * MAX_ENTRY_OPS:
        return (
            "<p>Too long to typeset after cse here; the generated code "
            "holds the same subexpressions.</p>"
        )
    # The cse the row's count after cse is taken on where it counts M and
    # f (count_operations: unsorted, half the canonical order's time).
    repl, reduced = sm.cse(exprs, order="none")
    n, m = M.shape
    lines, size = [], 0
    for sym, e in repl[:MAX_CSE_LINES]:
        line = f"<mtr><mtd>{mrow(mathml(sym), EQ, mathml(e))}</mtd></mtr>"
        if lines and size + len(line) > MATHML_BUDGET:
            break
        lines.append(line)
        size += len(line)
    more = len(repl) - len(lines)
    body = "".join(lines)
    Mr = sm.Matrix(n, m, reduced[: n * m])
    fr = sm.Matrix(reduced[n * m :])
    note = f"<p>{more} further subexpressions not shown.</p>" if more > 0 else ""
    # Printed only where it may fit (a matrix prints every entry).
    too_long = size + shortest_mathml(*reduced) > MATHML_BUDGET
    reduced_eq = "" if too_long else mrow(mathml(Mr), EQ, mathml(fr))
    if too_long or size + len(reduced_eq) > MATHML_BUDGET:
        end = (
            f"<p>M and f in these subexpressions: {n * m + len(fr)} entries, "
            f"not typeset here; {_WHERE_ALL}.</p>"
        )
    else:
        end = "<p>with which M and f read</p>" + math_element(reduced_eq)
    return (
        f"<p>{len(repl)} common subexpressions:</p>"
        + (math_element(f'<mtable columnalign="left">{body}</mtable>') if body else "")
        + note
        + end
    )


def _entries_html(entries) -> str:
    """``(name, expression)`` pairs typeset up to :data:`MATHML_BUDGET`
    characters, the rest counted."""
    parts, size = [], 0
    for k, (name, e) in enumerate(entries):
        part = _entry_html(name, e)
        if parts and size + len(part) > MATHML_BUDGET:
            parts.append(
                f"<p>{len(entries) - k} further entries not typeset here; "
                f"{_WHERE_ALL}.</p>"
            )
            break
        parts.append(part)
        size += len(part)
    return "".join(parts)


def _entry_html(name: str, expr) -> str:
    ops = expression_ops(expr)
    if ops > MAX_ENTRY_OPS:
        return f"<p>{html.escape(name)}: {ops} terms (not typeset).</p>"
    # Printed only where it may fit.
    if shortest_mathml(expr) > MATHML_BUDGET or len(mathml(expr)) > MATHML_BUDGET:
        return f"<p>{html.escape(name)}: {ops} terms (not typeset here).</p>"
    typeset = mathml(expr)
    return math_element(mrow(_PRINTER._print(sm.Symbol(name)).toxml(), EQ, typeset))


def _simplified_html(case: CaseEquations, seen: dict | None = None) -> str:
    """The equations simplified for display only, collapsed and marked
    (:mod:`eomcompare.compare.simplified`); "" where that reads no shorter.  ``seen``
    (simplified form -> the case that showed it) shows a form another
    formulation of the system simplified to already as a link to it."""
    from .simplified import MARK, NOTE, display_form

    d = case.data
    M, f, z = d["mass_matrix"], d["forcing"], d["unknowns"]
    simpler = display_form(M, f)
    if simpler is None:
        return ""
    head = f'<details class="simplified"><summary>{MARK}</summary>'
    key = (tuple(z), tuple(simpler[0]), tuple(simpler[1]))
    first = None if seen is None else seen.setdefault(key, case)
    if first is not None and first is not case:
        return (
            head + f'<p class="note">The same as <a href="#eq-{_slug(first.label)}-'
            f'{_slug(first.formulation)}">{html.escape(first.formulation)}</a>'
            "'s simplified form, entry by entry.</p></details>"
        )
    # Printed only where it may fit.
    fits = shortest_mathml(*simpler[0], *z, *simpler[1]) <= SIMPLIFIED_BUDGET
    typeset = _matrix_equation(simpler[0], z, simpler[1]) if fits else ""
    if not fits or len(typeset) > SIMPLIFIED_BUDGET:
        if seen is not None:
            del seen[key]
        return ""
    return head + f'<p class="note">{html.escape(NOTE)}</p>' + typeset + "</details>"


def equations_html(case: CaseEquations, simplified_seen: dict | None = None) -> str:
    """One case's equations as an HTML fragment (MathML and SVG inside);
    ``simplified_seen`` is shared by the cases of one system, so that a
    form simplified for display is typeset once (:func:`_simplified_html`)."""
    d = case.data
    M, f, z = d["mass_matrix"], d["forcing"], d["unknowns"]
    parts = [
        f'<div class="eqs" id="eq-{_slug(case.label)}-{_slug(case.formulation)}">',
        f"<h5>{html.escape(case.formulation)}</h5>",
        f'<p class="form">{html.escape(_form_text(case))}</p>',
    ]
    if not is_large(case):
        parts.append(_matrix_equation(M, z, f))
        parts.append(_simplified_html(case, simplified_seen))
        kdes = d.get("kinematic_equations", ())
        # Speeds of their own (not q') come with the relations to q'.
        own_speeds = not any(isinstance(s, sm.Derivative) for s in d.get("states", ()))
        if kdes and own_speeds and len(kdes) <= LARGE_ROWS:
            eqs = "".join(
                f"<mtr><mtd>{mrow(mathml(k), EQ, '<mn>0</mn>')}</mtd></mtr>"
                for k in kdes
            )
            parts.append(
                "<details><summary>kinematic differential equations"
                "</summary>"
                + math_element(f'<mtable columnalign="left">{eqs}</mtable>')
                + "</details>"
            )
        parts.append(
            "<details><summary>after common-subexpression elimination"
            "</summary>" + _cse_block(M, f) + "</details>"
        )
    else:
        n, m = M.shape
        nnz = sum(1 for x in M if x != 0)
        ops = [
            f"{fmt_int(case.ops_raw)} operations raw",
            f"{fmt_int(case.ops_cse)} after cse",
        ]
        parts.append(
            '<div class="structure">'
            + _sparsity_svg(M)
            + f"<p>M is {n}×{m} with {nnz} non-zero entries "
            f"({nnz / (n * m):.0%}); f has {len(f)} entries; "
            + ", ".join(ops)
            + ". Unknowns:</p>"
            + math_element(mathml(sm.Matrix(z)), block=False)
            + "</div>"
        )
        parts.append("<p>First entries:</p>")
        parts.append(_entry_html("M_11", M[0, 0]))
        parts.append(_entry_html("f_1", f[0]))
        rest = [
            (f"M_{i + 1}{j + 1}" if max(n, m) < 10 else f"M_{i + 1},{j + 1}", M[i, j])
            for i in range(n)
            for j in range(m)
            if M[i, j] != 0 and (i, j) != (0, 0) and j >= i
        ]
        rest += [(f"f_{i + 1}", f[i]) for i in range(1, len(f))]
        parts.append(
            f"<details><summary>the other {len(rest)} non-zero entries "
            "(M is symmetric where only its upper triangle is shown)"
            "</summary>" + _entries_html(rest) + "</details>"
        )
        parts.append(
            "<details><summary>after common-subexpression elimination"
            "</summary>" + _cse_block(M, f) + "</details>"
        )
    parts.append("</div>")
    return "\n".join(parts)


def same_equations(a: CaseEquations, b: CaseEquations) -> bool:
    """Two formulations derived the very same ``M z = f``: the same unknowns,
    mass matrix and forcing, entry by entry (Lagrange's equations with and
    without Kolev's modification on a system without constraints)."""
    da, db = a.data, b.data
    return (
        tuple(da["unknowns"]) == tuple(db["unknowns"])
        and da["mass_matrix"].shape == db["mass_matrix"].shape
        and len(da["forcing"]) == len(db["forcing"])
        and all(x == y for x, y in zip(da["mass_matrix"], db["mass_matrix"]))
        and all(x == y for x, y in zip(da["forcing"], db["forcing"]))
    )


def same_html(case: CaseEquations, same: CaseEquations) -> str:
    """A case whose equations another formulation's block shows already."""
    return (
        f'<div class="eqs" id="eq-{_slug(case.label)}-{_slug(case.formulation)}">'
        f"<h5>{html.escape(case.formulation)}</h5>"
        f'<p class="form">{html.escape(_form_text(case))}</p>'
        f'<p class="same">The same equations as <a href="#eq-{_slug(same.label)}-'
        f"{_slug(same.formulation)}\">{html.escape(same.formulation)}</a>'s: "
        "the unknowns, M and f are identical entry by entry.</p></div>"
    )


def equations_markdown(case: CaseEquations) -> str:
    """One case's equations in Markdown, LaTeX between ``$$``."""
    d = case.data
    M, f, z = d["mass_matrix"], d["forcing"], d["unknowns"]
    head = f"**{case.formulation}**: {_form_text(case)}"
    if not is_large(case):
        from .simplified import MARK, NOTE, display_form

        simpler = display_form(M, f)
        shown = ""
        if simpler is not None:
            shown = (
                f"\n\n*{MARK[0].upper() + MARK[1:]}*: {NOTE}\n\n$$\n"
                + latex(simpler[0])
                + latex(sm.Matrix(z))
                + " = "
                + latex(simpler[1])
                + "\n$$"
            )
        return (
            head
            + "\n\n$$\n"
            + latex(sm.Matrix(M))
            + latex(sm.Matrix(z))
            + " = "
            + latex(sm.Matrix(f))
            + "\n$$"
            + shown
        )
    n, m = M.shape
    nnz = sum(1 for x in M if x != 0)
    out = [
        head,
        f"M is {n}×{m} with {nnz} non-zero entries; "
        f"{fmt_int(case.ops_raw)} operations raw, "
        f"{fmt_int(case.ops_cse)} after cse; every entry is in "
        "report.html. First entries:",
    ]
    for name, e in (("M_{11}", M[0, 0]), ("f_{1}", f[0])):
        if expression_ops(e) <= MAX_ENTRY_OPS:
            out.append(f"$$\n{name} = {latex(e)}\n$$")
        else:
            out.append(f"{name}: {expression_ops(e)} terms (not typeset).")
    return "\n\n".join(out)


def fmt_int(x) -> str:
    return "—" if x != x else str(int(x))


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in str(text))


# ----------------------------------------------------------------------
# Notebook display
# ----------------------------------------------------------------------
def case_equations(rows, trajectories, untrusted=None) -> list[CaseEquations]:
    """The packed equations of the given rows (those that have them and
    whose signature holds; the others' files are appended to
    ``untrusted`` and named on stderr)."""
    untrusted = [] if untrusted is None else untrusted
    out = []
    for r in rows:
        packed = (trajectories.get(r.case) or {}).get("equations")
        if packed is None:
            continue
        try:
            data = unpack_equations(packed)
        except UntrustedEquations as exc:
            where = getattr(r, "arrays", None)
            where = where if isinstance(where, str) and where else r.case
            print(f"note: equations of {where}: {exc}", file=sys.stderr)
            untrusted.append(where)
            continue
        except Exception:  # an unreadable entry: that case shows no equations
            continue
        out.append(
            CaseEquations(
                r.label, r.formulation, data, float(r.ops_raw), float(r.ops_cse)
            )
        )
    return out
