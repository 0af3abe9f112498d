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


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    cols = [c for c in PRINTED_COLUMNS if c in frame.columns]
    return frame[cols].rename(columns=HEADINGS)


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
    repairs = result.metadata.get("cache_repairs")
    if repairs:
        print(
            f"\n{repairs} cache entr{'y' if repairs == 1 else 'ies'} rebuilt "
            f"(corrupted or mismatching)"
        )
