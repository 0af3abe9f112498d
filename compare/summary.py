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


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    cols = [c for c in PRINTED_COLUMNS if c in frame.columns]
    return frame[cols].rename(columns=HEADINGS)


def print_summary(result) -> None:
    """The table, then the failures and, apart, the peers' limitations."""
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
    failures = result.failures
    if len(failures):
        print(f"\n{len(failures)} case(s) failed:")
        for _, row in failures.iterrows():
            print(f"  {row['case']}: {row['status']}: {row['error']}")
    limitations = result.limitations
    if len(limitations):
        print(f"\n{len(limitations)} declined or peer limitation(s), not failures:")
        for _, row in limitations.iterrows():
            print(f"  {row['case']}: {row['status']}: {row['error']}")
    repairs = result.metadata.get("cache_repairs")
    if repairs:
        print(
            f"\n{repairs} cache entr{'y' if repairs == 1 else 'ies'} rebuilt "
            f"(corrupted or mismatching)"
        )
