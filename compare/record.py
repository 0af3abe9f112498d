"""One case's record: what a worker measures, typed, and the row it becomes.

A case (one formulation on one system variant) is measured in a worker
process, which fills a :class:`CaseRecord` field by field and returns it as
a row (:meth:`CaseRecord.to_row`): one line of ``rows.jsonl``, one row of
``results.csv``.  A field a case never reached (no oracle for the system, a
derivation that failed) stays ``None`` and is left out of the row, which
the result frame shows as empty.

Each timed quantity ``X`` is four fields (:meth:`CaseRecord.record_time`):
``X`` the fastest measurement (what the regression gate judges), and
``X_median``, ``X_spread`` (interquartile range) and ``X_k`` (how many).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from .timing import spread

__all__ = ["CaseRecord", "TIMED"]

#: The timed quantities of a case, each recorded as four fields.
TIMED = ("derive_s", "rhs_us", "rhs_lambdify_us", "integrate_s")


@dataclass
class CaseRecord:
    """The measurements of one case.

    Identity and outcome: ``case`` (``label/formulation``), ``system``,
    ``variant``, ``label``, ``formulation``, ``options_digest`` (the run's
    options), ``status`` (``ok``, ``error``, ``unsupported``, ``timeout``,
    ``crashed``, ``integration_failed``, ``oracle_disagrees``), ``error``,
    ``peer_limitation`` (the failure is a sympy peer's own).
    """

    case: str
    system: str
    variant: str
    label: str
    formulation: str
    options_digest: str
    status: str = "ok"
    error: str = ""
    peer_limitation: bool = False
    traceback: str | None = None
    timeout_s: float | None = None
    # The derivation.
    declaration: str | None = None
    from_cache: bool | None = None
    cache_repair: str | None = None
    system_class: str | None = None
    derive_s: float | None = None
    derive_s_median: float | None = None
    derive_s_spread: float | None = None
    derive_s_k: int | None = None
    stage_s: str | None = None
    # Operation counts: as derived, after cse, canonical, per evaluation.
    ops_raw: int | None = None
    ops_cse: int | None = None
    ops_by_kind: str | None = None
    ops_canonical: int | None = None
    ops_per_evaluation: int | None = None
    ops_per_evaluation_detail: str | None = None
    trigsimp: str | None = None
    # The equations' sizes.
    n_equations: int | None = None
    n_unknowns: int | None = None
    n_multipliers: int | None = None
    n_coordinates: int | None = None
    coordinates: str | None = None
    dof: int | None = None
    # The numeric model and its right-hand side.
    backend: str | None = None
    codegen_s: float | None = None
    oracle: str | None = None
    oracle_qdd_max_rel_dev: float | None = None
    oracle_unavailable: str | None = None
    rhs_backend: str | None = None
    rhs_us: float | None = None
    rhs_us_median: float | None = None
    rhs_us_spread: float | None = None
    rhs_us_k: int | None = None
    rhs_lambdify_us: float | None = None
    rhs_lambdify_us_median: float | None = None
    rhs_lambdify_us_spread: float | None = None
    rhs_lambdify_us_k: int | None = None
    calibration_cpu_s: float | None = None
    calibration_s: float | None = None
    #: Seconds since the calibration was measured (0: by the case itself;
    #: ``case_run.CALIBRATION_MAX_AGE``).
    calibration_age_s: float | None = None
    # The integration.
    integrate_s: float | None = None
    integrate_s_median: float | None = None
    integrate_s_spread: float | None = None
    integrate_s_k: int | None = None
    nfev: int | None = None
    success: bool | None = None
    message: str | None = None
    max_position_residual: float | None = None
    max_velocity_residual: float | None = None
    energy_drift: float | None = None

    def record_time(self, column: str, samples: Sequence[float]) -> None:
        """``column`` (the fastest measurement: noise only ever adds time,
        and the regression gate judges it), ``column_median``,
        ``column_spread`` (the interquartile range, NaN below
        ``timing.MIN_SAMPLES`` measurements) and ``column_k``.

        Examples
        --------
        >>> r = CaseRecord("a/kane", "a", "", "a", "kane", "d")
        >>> r.record_time("rhs_us", [3.0, 1.0, 2.0])
        >>> r.rhs_us, r.rhs_us_median, r.rhs_us_k
        (1.0, 2.0, 3)
        """
        if column not in TIMED:
            raise ValueError(f"{column!r} is not a timed quantity; those are {TIMED}")
        s = spread(samples)
        finite = [x for x in samples if math.isfinite(x)]
        setattr(self, column, float(min(finite)) if finite else float("nan"))
        setattr(self, f"{column}_median", s.median)
        setattr(self, f"{column}_spread", s.iqr)
        setattr(self, f"{column}_k", s.k)

    def to_row(self) -> dict[str, Any]:
        """The row: every field the case reached, in declaration order.

        Examples
        --------
        >>> row = CaseRecord("a/kane", "a", "", "a", "kane", "d").to_row()
        >>> row["status"], "ops_raw" in row
        ('ok', False)
        """
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Every column a row can have."""
        return tuple(f.name for f in fields(cls))
