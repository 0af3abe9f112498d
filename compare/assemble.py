"""The table of a run from its rows: each case's agreement with the
reference formulation's trajectory and accelerations on the same grid.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .cases import Case, RunOptions
from .store import Arrays, Row
from .summary import REPORT_COLUMNS

if TYPE_CHECKING:
    from eomcompare.symbolic.types import ArrayLike, FloatArray


def agreement(
    t: FloatArray,
    q: FloatArray,
    qd: FloatArray,
    q_ref: FloatArray,
    qd_ref: FloatArray,
    threshold: float,
) -> dict[str, Any]:
    """Deviation of a trajectory from the reference's on the same grid.

    Returns a dict: max abs/rel deviations of q and q' (relative to the
    reference's largest magnitude, at least 1) and the horizon of agreement,
    the first time the relative deviation exceeds ``threshold`` (the end of
    the grid when it never does).
    """
    n = min(len(t), len(q_ref))
    dq = np.abs(q[:n] - q_ref[:n])
    dqd = np.abs(qd[:n] - qd_ref[:n])
    sq = max(float(np.max(np.abs(q_ref[:n]))) if n else 1.0, 1.0)
    sqd = max(float(np.max(np.abs(qd_ref[:n]))) if n else 1.0, 1.0)
    rel = np.maximum(np.max(dq, axis=1) / sq, np.max(dqd, axis=1) / sqd)
    beyond = np.nonzero(rel > threshold)[0]
    horizon = float(t[beyond[0]] - t[0]) if len(beyond) else float(t[n - 1] - t[0])
    return {
        "max_abs_dev_q": float(dq.max()),
        "max_rel_dev_q": float(dq.max() / sq),
        "max_abs_dev_qd": float(dqd.max()),
        "max_rel_dev_qd": float(dqd.max() / sqd),
        "agreement_horizon": horizon,
        "deviation": rel,
    }


def _max_rel_dev(qdd: ArrayLike, ref: ArrayLike) -> float:
    """Largest deviation of q'' from ``ref`` over the states, each relative
    to the largest magnitude of ``ref`` there (at least 1)."""
    d = np.abs(np.asarray(qdd) - np.asarray(ref))
    scale = np.maximum(np.max(np.abs(ref), axis=1), 1.0)
    return float(np.max(np.max(d, axis=1) / scale))


def _assemble(
    cases: Sequence[Case],
    rows: Mapping[str, Row],
    arrays: Mapping[str, Arrays],
    opts: RunOptions,
) -> pd.DataFrame:
    ref_by_label: dict[str, Arrays] = {}
    for c in cases:
        # A reference that disagrees with the oracle still ran to the end:
        # the others' agreement with it tells whether they disagree too.
        if c.formulation == opts.reference and rows.get(c.id, {}).get("status") in (
            "ok",
            "oracle_disagrees",
        ):
            ref_by_label[c.label] = arrays.get(c.id, {})
    out = []
    for c in cases:
        row = dict(rows.get(c.id, {}))
        if not row:
            continue
        row.pop("traceback", None)
        arr = arrays.get(c.id, {})
        ref = ref_by_label.get(c.label)
        if ref and "qdd" in arr and "qdd" in ref and len(arr["qdd"]) == len(ref["qdd"]):
            row["qdd_max_rel_dev"] = _max_rel_dev(arr["qdd"], ref["qdd"])
        if ref and "q" in arr and "q" in ref and len(arr["t"]):
            ag = agreement(
                arr["t"], arr["q"], arr["qd"], ref["q"], ref["qd"], opts.threshold
            )
            arr["deviation"] = ag.pop("deviation")
            row.update(ag)
        out.append(row)
    frame = pd.DataFrame(out)
    # Case, then the columns the report's tables show (in their order),
    # then the other measurements.
    front = [
        "system",
        "variant",
        *REPORT_COLUMNS,
        "oracle_qdd_max_rel_dev",
        "codegen_s",
        "success",
        "error",
    ]
    cols = [c for c in front if c in frame.columns] + [
        c for c in frame.columns if c not in front
    ]
    return frame[cols] if len(frame) else frame
