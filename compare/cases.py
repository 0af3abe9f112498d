"""The cases of a comparison run and its options: one system variant with
one formulation (:class:`Case`), the options every case of a run shares
(:class:`RunOptions`), the expansion of a request into cases, the
declarations of users' own systems that key their resumption, and the
order in which cases are run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from eomcompare.formulations import (
    FORMULATIONS,
    REFERENCE,
    formulation_names,
    get_formulation,
    split_formulation_spec,
)
from eomcompare.numeric.dae import DAE_METHOD, dae_available
from eomcompare.systems import CATALOGUE, system_facts

from .prepared import CODE_PACKAGES
from .variants import variant_label

#: Integrators a run accepts: ``"dop853"`` (the default: solve_ivp's DOP853,
#: the same steps, with its loop in compiled code on compiled models,
#: :mod:`eomcompare.numeric.dop853`), the compiled LSODA driver
#: ``"odeint"``, ``scipy.integrate.solve_ivp``'s methods, and ``"IDA"``:
#: SUNDIALS' IDA on the multiplier form (:mod:`eomcompare.numeric.dae`), for the
#: formulations with multipliers; the others are refused (``unsupported``).
SOLVERS = (
    "dop853",
    "odeint",
    "RK45",
    "RK23",
    "DOP853",
    "Radau",
    "BDF",
    "LSODA",
    DAE_METHOD,
)


#: Numeric backends a run accepts (``numeric.backends``, and "sized").
BACKEND_CHOICES = ("auto", "sized", "lambdify", "c")


#: Under ``backend="sized"``, variants with at least this many coordinates
#: are integrated compiled, those below through lambdify (their compiled
#: right-hand side is still built, for its time).
COMPILE_FROM = 4


@dataclass(frozen=True)
class Case:
    """One system variant with one formulation."""

    system: str
    options: tuple[tuple[str, Any], ...]
    formulation: str

    @property
    def variant(self) -> str:
        return variant_label(self.options)

    @property
    def label(self) -> str:
        return f"{self.system}[{self.variant}]" if self.options else self.system

    @property
    def id(self) -> str:
        return f"{self.label}/{self.formulation}"

    @property
    def slug(self) -> str:
        return "".join(c if c.isalnum() or c in "-_" else "_" for c in self.id)


@dataclass(frozen=True)
class RunOptions:
    """Options of a comparison run (all recorded in the metadata).

    Parameters
    ----------
    t_final : float
        Simulated horizon in seconds.
    method, rtol, atol : integrator settings (:data:`SOLVERS`; the
        default ``"dop853"`` steps as solve_ivp's ``"DOP853"`` does, in
        compiled code where the case's model is compiled), or ``method="IDA"``: the multiplier form as a DAE
        (:func:`eomcompare.numeric.dae.integrate_dae`, ``stabilization`` unused), for
        formulations with multipliers, the reference among them.
    n_samples : int
        Points of the common time grid.
    n_states : int
        Random consistent states at which q'' is compared.
    threshold : float
        Deviation (relative to the reference's scale) that ends the horizon
        of agreement.
    reference : str
        Formulation the others are compared with.
    stabilization : {"projection", None}
    timeout : float
        Seconds a case may take before it becomes a time-out row.
    rhs_calls : int
        Right-hand-side calls per timing repeat.
    rhs_repeats : int
        Timing repeats of the right-hand side (each of ``rhs_calls``
        calls): microseconds each, cheap to repeat.
    time_repeats : int
        Derivations per case at least, however long they take; the
        regression gate repeats them so (noise only ever adds time).
    time_samples : int
        Measurements of a case's derivation to aim for (see
        ``time_budget``); every time is reported as its fastest (the column
        the regression gate judges), median and interquartile range.
    solve_samples : int
        Measurements of a case's solve to aim for (see ``time_budget``):
        three, the fewest with an interquartile range.  A solve is the
        same computation every time (a deterministic integration of
        compiled or numpy code), whose repeated measurements spread by a
        few per cent, where a derivation's, sympy's work timed on the wall
        clock, spread by tens.
    time_budget : float
        Seconds a case may spend on each of its derivation and its solve
        to reach ``time_samples`` and ``solve_samples`` measurements: a
        measurement is repeated while the sum so far and one more of the
        median stay within it, so the cheap ones, among which the fastest
        is decided, are measured that many times and a derivation of
        seconds once.
    cache_dir : str or None
        Derivation cache directory (None: the default location).
    use_cache : bool
    backend : {"auto", "sized", "lambdify", "c"}
        Numeric backend the case integrates with (``eom.numeric(backend=
        ...)``), the same for every formulation of a system variant, so
        that solve times compare formulations, not backends.  ``"auto"``
        (the default) compiles each case's equations where a compiler is
        found, else uses lambdify; ``"c"`` always compiles.  ``"sized"`` is
        ``"auto"`` for variants of at least :data:`COMPILE_FROM`
        coordinates and lambdify below.  The right-hand side is timed
        compiled (``rhs_us``, ``rhs_backend`` "c") wherever the case
        compiles, and through lambdify (``rhs_lambdify_us``) beside it, so
        that with the default every system's time is the equations' cost
        and not lambdify's call overhead of several microseconds.
        Compiling the small systems too costs the main job about 0.07 s of
        processor time per case (a plain C library, no Python headers),
        less than their solves through lambdify cost more than compiled
        ones, which is why it is the default rather than ``"sized"``.
    """

    t_final: float = 10.0
    method: str = "dop853"
    rtol: float = 1e-10
    atol: float = 1e-10
    n_samples: int = 201
    n_states: int = 20
    threshold: float = 1e-6
    reference: str = REFERENCE
    stabilization: str | None = "projection"
    timeout: float = 600.0
    rhs_calls: int = 200
    rhs_repeats: int = 11
    time_repeats: int = 1
    time_samples: int = 5
    solve_samples: int = 3
    time_budget: float = 0.15
    cache_dir: str | None = None
    use_cache: bool = True
    backend: str = "auto"

    def __post_init__(self) -> None:
        for name in ("t_final", "rtol", "atol", "threshold", "timeout", "time_budget"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name} must be a number, not {type(value).__name__}")
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a positive number, not {value!r}")
        for name, least in (
            ("n_samples", 2),
            ("n_states", 1),
            ("rhs_calls", 1),
            ("rhs_repeats", 1),
            ("time_repeats", 1),
            ("time_samples", 1),
            ("solve_samples", 1),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(
                    f"{name} must be an integer, not {type(value).__name__}"
                )
            if value < least:
                raise ValueError(f"{name} must be at least {least}, not {value!r}")
        if self.method not in SOLVERS:
            raise ValueError(
                f"method must be one of {list(SOLVERS)}, not {self.method!r}"
            )
        if self.method == DAE_METHOD and not dae_available():
            raise ValueError(
                f"method {DAE_METHOD!r} needs SUNDIALS' IDA through "
                f"scikit-sundae: pip install -e '.[dae]'"
            )
        try:
            get_formulation(self.reference)
        except (ValueError, TypeError) as exc:
            raise ValueError(
                f"reference must be one of {sorted(FORMULATIONS)} (options "
                f"as NAME:KEY=VALUE), not {self.reference!r}: {exc}"
            ) from None
        if self.method == DAE_METHOD:
            ref = get_formulation(self.reference)
            if not ref.uses_multipliers:
                raise ValueError(
                    f"method {DAE_METHOD!r} integrates only formulations with "
                    f"multipliers, so the reference must have them too: "
                    f"reference {self.reference!r} eliminates the "
                    f"constraints (--reference lagrange)"
                )
        if self.backend not in BACKEND_CHOICES:
            raise ValueError(
                f"backend must be one of {list(BACKEND_CHOICES)}, not {self.backend!r}"
            )
        if self.stabilization not in ("projection", None):
            raise ValueError("stabilization must be one of ['projection', None]")

    def digest(self) -> str:
        """Hash of the options that change results and of the code that
        computes them (the resume key: rows of older code are not reused)."""
        import scipy
        import sympy

        from eomcompare.formulations.cache import code_digest

        d = dataclasses.asdict(self)
        # The time limit decides only whether a case finishes (time-out rows
        # are checked against it on resume), the cache only where
        # equations are read from, and the repeats how often times are
        # measured.
        for k in (
            "timeout",
            "cache_dir",
            "use_cache",
            "time_repeats",
            "time_samples",
            "solve_samples",
            "time_budget",
            "rhs_repeats",
        ):
            d.pop(k)
        d["code"] = code_digest(CODE_PACKAGES)
        d["versions"] = [sympy.__version__, np.__version__, scipy.__version__]
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:12]


def expand_cases(
    systems: Sequence[str] | None = None,
    formulations: Sequence[str] | None = None,
    n: Sequence[int] | None = None,
    variants: Mapping[str, list[dict[str, Any]]] | None = None,
) -> list[Case]:
    """Every (system variant, formulation) pair to run: by default every
    registered formulation of the default comparison
    (``in_default_comparison``).

    Raises
    ------
    ValueError
        Naming an unknown system or formulation and the valid ones.
    """
    systems = selected_systems(systems)
    # A name given twice is one case, not two runs of it.
    formulations = list(
        dict.fromkeys(formulations or formulation_names(default_only=True))
    )
    bad = [s for s in systems if s not in CATALOGUE]
    if bad:
        raise ValueError(f"unknown systems {bad}; valid: {sorted(CATALOGUE)}")
    bad = [f for f in formulations if split_formulation_spec(f)[0] not in FORMULATIONS]
    if bad:
        raise ValueError(f"unknown formulations {bad}; valid: {sorted(FORMULATIONS)}")
    for f in formulations:
        # Options named on the command line, checked before any case runs.
        try:
            get_formulation(f)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"formulation {f!r}: {exc}") from None
    n = list(n) if n else []
    for k in n:
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"--n takes positive integers, not {k!r}")
    cases = []
    for s in systems:
        facts = system_facts(s)
        opts_list = list(facts.variants) if variants is None else variants.get(s, [{}])
        if facts.scalable:
            # Every size of the run with each variant's other options; a
            # variant naming its own size keeps it.
            opts_list = [
                o if "n" in o else {**o, "n": k}
                for o in opts_list
                for k in (n or facts.sizes)
            ]
            opts_list = list({tuple(sorted(o.items())): o for o in opts_list}.values())
        for opts in opts_list:
            for f in formulations:
                cases.append(Case(s, tuple(sorted(opts.items())), f))
    return cases


def selected_systems(systems: Sequence[str] | None = None) -> list[str]:
    """The systems a run of ``systems`` covers, each once: the catalogue
    less its heavy systems when none are named, every system for ``"all"``."""
    if not systems:
        return [s for s in CATALOGUE if not system_facts(s).heavy]
    if systems == "all" or list(systems) == ["all"]:
        return list(CATALOGUE)
    return list(dict.fromkeys(systems))


def declaration_key(ms: Any, fingerprint: str | None = None) -> str:
    """The declaration's fingerprint (the derivation cache's key,
    ``fingerprint`` when the caller has it) with what it leaves out and a
    case's results depend on: the initial state and the spread of the
    random states."""
    parts = [
        fingerprint or ms.fingerprint(),
        sorted((str(k), v) for k, v in ms.initial_state.items()),
        repr(ms.random_spread),
        ms.speed_scale,
        ms.energy_conserved,
    ]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16]


def _expected_seconds(path: Path) -> dict[str, float]:
    """Case id -> seconds it took in the run saved at ``path``
    (derivation, code generation and integration; a time-out its time
    limit); empty when there is none or it cannot be read."""
    try:
        prev = pd.read_csv(path / "results.csv")
    except (OSError, ValueError, pd.errors.ParserError):
        return {}
    cols = [c for c in ("derive_s", "codegen_s", "integrate_s") if c in prev.columns]
    if "case" not in prev.columns or not cols:
        return {}
    cost = prev[cols].apply(pd.to_numeric, errors="coerce").fillna(0).sum(axis=1)
    if "status" in prev.columns and "timeout_s" in prev.columns:
        limit = pd.to_numeric(prev["timeout_s"], errors="coerce")
        timed_out = (prev["status"] == "timeout") & limit.notna()
        cost = cost.where(~timed_out, limit)
    return dict(zip(prev["case"], cost))


def _longest_first(
    todo: list[Case], out: Path | None, prior: Path | None = None
) -> list[Case]:
    """``todo`` with the cases expected to take longest first, so that the
    last case to finish is a short one (two workers are not left waiting
    for one long case at the end).

    Expected seconds come from an earlier run's ``results.csv`` in ``out``
    and, for the cases it lacks, from the one in ``prior`` when given (the
    directory of another run); a case neither holds is ranked by the size
    ``n`` of a scalable system, then in run order.  Nothing else is read:
    the package reads no results of its own at run time (an installed
    package has none).
    """
    known = _expected_seconds(prior) if prior is not None else {}
    if out is not None:
        known |= _expected_seconds(out)

    def key(item: tuple[int, Case]) -> tuple[float, int, int]:
        i, c = item
        n = dict(c.options).get("n", 0)
        n = n if isinstance(n, int) else 0
        return (-known.get(c.id, -1.0), -n, i)

    return [c for _, c in sorted(enumerate(todo), key=key)]
