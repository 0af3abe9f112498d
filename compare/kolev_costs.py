"""Kolev's motivation as data: operation counts and derivation times of
Kolev's modified Lagrange equations beside the approaches the paper
improves on (Lagrange's equations in minimal coordinates, and with
multipliers).  The main job computes the table once per run, from the
run's derivation cache, and the report shows it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from eomcompare.formulations import (
    Formulation,
    UnsupportedSystemError,
    get_formulation,
)
from eomcompare.formulations.minimal_coordinates import LagrangeMinimalCoordinates
from eomcompare.formulations.modified_lagrange import explicit_solutions
from eomcompare.systems import get_system

__all__ = ["kolev_cost_table", "as_default"]

_COST_SYSTEMS = ("four_bar", "crank_slider", "kolev_manipulator")
# The measurements of a row; a row whose variant fails has them NaN.
_COST_MEASURES = (
    "seconds",
    "ops_raw",
    "ops_cse",
    "n_equations",
    "n_unknowns",
    "n_multipliers",
)
_COST_COLUMNS = ("system", "variant", "formulation", *_COST_MEASURES, "error")
# (row, formulation, options): registered formulations by name, the
# minimal-coordinate equations by the class here.
_COST_VARIANTS = (
    ("modified", "modified_lagrange", {"dependent": "explicit"}),
    ("modified_implicit", "modified_lagrange", {"dependent": "implicit"}),
    ("substituted", LagrangeMinimalCoordinates, {}),
    ("multipliers", "lagrange", {}),
)


def as_default(formulation: Formulation, system) -> Formulation:
    """Kolev's equations (``modified_lagrange``) with ``dependent="auto"``
    where that derives the same equations of ``system``, node for node
    (``dependent`` chooses nothing there: ``"explicit"`` where every
    dependent coordinate has a declared solution, ``"implicit"`` where
    one lacks it or there are none), else ``formulation`` itself: a
    derivation cache keyed by the options then reads the default's
    entry for it."""
    dependent = formulation.options.get("dependent", "auto")
    if formulation.name != "modified_lagrange" or dependent == "auto":
        return formulation
    sols, _ = explicit_solutions(system)  # None: one is missing
    if dependent == "explicit":
        same = sols is not None
    else:
        same = not system.q_dep or sols is None
    if not same:
        return formulation
    options = formulation.options | {"dependent": "auto"}
    return get_formulation("modified_lagrange", **options)


def kolev_cost_table(systems: Sequence[str] = _COST_SYSTEMS, *, cache=None):
    """Operation counts and derivation times, measured now, of Kolev's
    modified equations against the two approaches the paper improves on.

    Rows per system:

    ``modified``
        Kolev's equations with the declared explicit solutions f_r.
    ``modified_implicit``
        Kolev's equations with df_r/dq_j from the implicit function theorem
        (dependent coordinates kept in the state).
    ``substituted``
        Lagrange's equations in minimal coordinates, f_r substituted in T
        (:class:`LagrangeMinimalCoordinates`, formulation
        ``lagrange_minimal_coordinates``).
    ``multipliers``
        Lagrange's equations with multipliers (the ``"lagrange"``
        formulation), where it is registered.

    A variant that refuses a system (or a formulation that is not
    registered) gives a row with ``error`` set and no numbers.

    Parameters
    ----------
    systems : sequence of str
        Catalogue names; by default the paper's kind of system:
        ``("four_bar", "crank_slider", "kolev_manipulator")``.
    cache : eomcompare.formulations.cache.DerivationCache, optional
        Derive through it: equations already derived (by a comparison run,
        say) are read back with the seconds their derivation took, and the
        others are stored.  Kolev's equations with options that derive on
        a system what the default options derive there
        (:func:`as_default`: ``"modified"`` on the default systems) are
        read from the default's entry.  Default: derive every row now.

    Returns
    -------
    pandas.DataFrame
        Columns ``system, variant, formulation, seconds, ops_raw, ops_cse,
        n_equations, n_unknowns, n_multipliers, error``.

    Examples
    --------
    >>> df = kolev_cost_table(["crank_slider"])
    >>> sorted(df["variant"])
    ['modified', 'modified_implicit', 'multipliers', 'substituted']
    """
    import pandas as pd

    if isinstance(systems, str):
        raise TypeError(
            "systems must be a sequence of catalogue names, not a single string"
        )
    rows = []
    for name in systems:
        ms = get_system(name)
        for label, form, opts in _COST_VARIANTS:
            row = (
                {
                    "system": name,
                    "variant": label,
                    "formulation": getattr(form, "name", form),
                }
                | dict.fromkeys(_COST_MEASURES, np.nan)
                | {"error": ""}
            )
            try:
                f = get_formulation(form, **opts)
                if cache is None:
                    eom = f.derive(ms)
                else:
                    # The run derived Kolev's equations with the default
                    # options, which are the explicit ones on these
                    # systems: read back, not derived again.
                    eom = cache.derive(ms, as_default(f, ms))[0]
            except (UnsupportedSystemError, ValueError) as exc:
                row["error"] = f"{type(exc).__name__}: {exc}"
                rows.append(row)
                continue
            row.update(
                seconds=float(eom.timings["total"]),
                ops_raw=eom.op_counts.get("raw", np.nan),
                ops_cse=eom.op_counts.get("cse", np.nan),
                n_equations=eom.n_equations,
                n_unknowns=eom.n_unknowns,
                n_multipliers=eom.n_multipliers,
            )
            rows.append(row)
    return pd.DataFrame(rows, columns=list(_COST_COLUMNS))
