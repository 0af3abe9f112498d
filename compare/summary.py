"""The table printed after a run."""
from __future__ import annotations

import pandas as pd

COLUMNS = {
    "label": "system",
    "formulation": "formulation",
    "status": "status",
    "derive_s": "derive s",
    "ops_raw": "ops raw",
    "ops_cse": "ops cse",
    "n_equations": "eqs",
    "n_unknowns": "unknowns",
    "qdd_max_rel_dev": "qdd rel dev",
    "agreement_horizon": "agree until s",
    "rhs_us": "rhs us",
    "integrate_s": "solve s",
}


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    cols = [c for c in COLUMNS if c in frame.columns]
    table = frame[cols].rename(columns=COLUMNS)
    return table


def print_summary(result) -> None:
    table = summary_table(result.frame)
    with pd.option_context("display.max_rows", None, "display.width", 200,
                           "display.float_format", "{:.3g}".format):
        print(table.to_string(index=False))
    failures = result.failures
    if len(failures):
        print(f"\n{len(failures)} case(s) failed:")
        for _, row in failures.iterrows():
            print(f"  {row['case']}: {row['status']}: {row['error']}")
