"""The table printed after a run, and the headings every table uses."""

from __future__ import annotations

import pandas as pd

#: Frame column -> heading, for the printed summary and the report alike.
HEADINGS = {
    "label": "system",
    "formulation": "formulation",
    "status": "status",
    "derive_s": "derive s",
    "ops_raw": "ops raw",
    "ops_cse": "ops cse",
    "ops_canonical": "ops canonical",
    "ops_per_evaluation": "ops per evaluation",
    "n_equations": "eqs",
    "n_unknowns": "unknowns",
    "n_multipliers": "mult.",
    "qdd_max_rel_dev": "q'' rel. dev.",
    "max_rel_dev_q": "q rel. dev.",
    "agreement_horizon": "agrees until s",
    "energy_drift": "energy drift",
    "max_position_residual": "pos. residual",
    "max_velocity_residual": "vel. residual",
    "rhs_us": "rhs µs",
    "rhs_lambdify_us": "rhs lambdify µs",
    "integrate_s": "solve s",
    "nfev": "nfev",
}
#: Columns of the table printed after a run (one line per case).
PRINTED_COLUMNS = (
    "label",
    "formulation",
    "status",
    "derive_s",
    "ops_raw",
    "ops_cse",
    "ops_per_evaluation",
    "n_equations",
    "n_unknowns",
    "qdd_max_rel_dev",
    "agreement_horizon",
    "rhs_us",
    "rhs_lambdify_us",
    "integrate_s",
)
#: Columns of the report's per-system tables (the system is the heading).
REPORT_COLUMNS = tuple(c for c in HEADINGS if c != "label")


def oracle_unavailable(frame: pd.DataFrame) -> dict[str, str]:
    """System label -> why its oracle could not judge it (a file the
    oracle cannot read), for the systems that have an oracle column."""
    if "oracle_unavailable" not in frame.columns:
        return {}
    return {
        label: why.splitlines()[0] if why.strip() else why
        for label, why in zip(frame["label"], frame["oracle_unavailable"])
        if isinstance(why, str) and why
    }


#: Time columns printed as the median of their measurements.
PRINTED_MEDIANS = ("derive_s", "rhs_us", "rhs_lambdify_us", "integrate_s")


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The printed table: times are the medians of their measurements where
    the run has them (headed "median"), the fastest otherwise."""
    cols = [c for c in PRINTED_COLUMNS if c in frame.columns]
    table = frame[cols].copy()
    headings = dict(HEADINGS)
    for col in PRINTED_MEDIANS:
        median = f"{col}_median"
        if col in table.columns and median in frame.columns:
            values = pd.to_numeric(frame[median], errors="coerce")
            if values.notna().any():
                table[col] = values
                headings[col] = f"{HEADINGS[col]} (median)"
    return table.rename(columns=headings)


def repetitions_line(frame: pd.DataFrame) -> str:
    """How many measurements each printed median is, as ranges over the
    cases ("derive 1-5, rhs 11, ..."); "" for a run without them."""
    parts = []
    for col in PRINTED_MEDIANS:
        k = pd.to_numeric(
            frame.get(f"{col}_k", pd.Series(dtype=float)), errors="coerce"
        )
        k = k.dropna()
        if len(k):
            lo, hi = int(k.min()), int(k.max())
            parts.append(f"{HEADINGS[col]} {lo}" + (f"-{hi}" if hi != lo else ""))
    if not parts:
        return ""
    return (
        "Times are medians; measurements per case: "
        + ", ".join(parts)
        + " (interquartile ranges in results.csv and the report)."
    )


def print_summary(result) -> None:
    """The table, then the cases counted by kind and those that failed, the
    peers' limitations and the refusals, each apart."""
    table = summary_table(result.frame)
    with pd.option_context(
        "display.max_rows",
        None,
        "display.width",
        200,
        "display.float_format",
        "{:.3g}".format,
    ):
        print(table.to_string(index=False))
    line = repetitions_line(result.frame)
    if line:
        print(line)
    from .findings import case_kinds, kind_counts

    frame = result.frame
    if len(frame):
        # The report's vocabulary: failed, peer limitation, refused.
        print(f"\n{kind_counts(frame)}.")
        kinds = case_kinds(frame)
        for kind, what in (
            ("failed", "Failed ({})"),
            ("peer limitation", "Peer limitations ({}; not failures)"),
            ("refused", "Refused ({}; a formulation declines the system)"),
        ):
            rows = frame[kinds == kind]
            if len(rows):
                print("\n" + what.format(len(rows)) + ":")
                for _, row in rows.iterrows():
                    print(f"  {row['case']}: {row['status']}: {row['error']}")
    missing = oracle_unavailable(result.frame)
    if missing:
        print()
        for label, why in missing.items():
            print(f"{label}: oracle: unavailable ({why})")
    note = compiled_backend_note(result)
    if note:
        print("\n" + note)
    repairs = result.metadata.get("cache_repairs")
    if repairs:
        print(
            f"\n{repairs} cache entr{'y' if repairs == 1 else 'ies'} rebuilt "
            f"(corrupted or mismatching)"
        )


def compiled_backend_note(result) -> str | None:
    """A line for a run whose ``backend="auto"`` found no compiled backend
    (no cffi, no C compiler): its cases were solved and their right-hand
    sides timed through lambdify, whose Python overhead hides the
    equations' cost, and say so."""
    frame = result.frame
    options = result.metadata.get("options", {})
    if options.get("backend") != "auto" or "backend" not in frame:
        return None
    if not (frame["backend"] == "lambdify").any():
        return None
    from eomcompare.numeric.backends import compiled_unavailable

    why = compiled_unavailable()
    if why is None:
        return None
    return (
        f"No compiled backend: {why}.  The cases were solved and their "
        "right-hand sides timed through lambdify (its Python overhead, about "
        "10 µs a call, hides the equations' cost; the solves step in "
        "solve_ivp's Python)."
    )
