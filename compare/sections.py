"""The report's optional tables as data of the run.

Two sections of the report show tables that a run's cases do not hold:
the published-against-computed benchmarks
(:func:`eomcompare.references.published.published_vs_computed`, long: it
derives the bicycle) and Kolev's motivation
(:func:`eomcompare.compare.kolev_costs.kolev_cost_table`, seconds).  The
command that writes a report computes them (:func:`compute_sections`) and
keeps them beside the run in ``sections/<name>.csv`` with the sentence
saying where their numbers come from (``sections/<name>.json``); the
report only renders what it is given, so writing it again derives
nothing.

>>> import pandas as pd, tempfile
>>> out = tempfile.mkdtemp()
>>> save_sections(out, {"kolev": SectionTable(pd.DataFrame({"a": [1]}), "made here")})
>>> load_sections(out)["kolev"].note
'made here'
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

__all__ = [
    "SECTIONS",
    "SectionTable",
    "compute_sections",
    "kolev_section",
    "benchmark_section",
    "save_sections",
    "load_sections",
]

#: The optional sections, by the name their files carry.
SECTIONS = ("benchmarks", "kolev")


@dataclass(frozen=True)
class SectionTable:
    """A table of an optional section and where its numbers come from."""

    frame: pd.DataFrame
    note: str

    def __post_init__(self):
        if not isinstance(self.frame, pd.DataFrame):
            raise TypeError(
                f"a section's table must be a pandas DataFrame, not "
                f"{type(self.frame).__name__}"
            )


def benchmark_section(formulations: Sequence[str] | None = None) -> SectionTable:
    """The published-against-computed table for ``formulations`` (every
    registered one by default); derives the benchmark systems that the
    derivation cache does not hold (minutes for the bicycle)."""
    from eomcompare.references.published import published_vs_computed

    kwargs = {"formulations": list(formulations)} if formulations else {}
    return SectionTable(
        published_vs_computed(**kwargs),
        "from references.published.published_vs_computed()",
    )


def kolev_section(
    cache_dir: str | None = None, use_cache: bool = False
) -> SectionTable:
    """Kolev's cost table, read from the run's derivation cache where it
    holds the derivations (with the seconds they took) and derived now
    otherwise."""
    from .kolev_costs import kolev_cost_table

    if use_cache:
        from eomcompare.formulations.cache import DerivationCache

        return SectionTable(
            kolev_cost_table(cache=DerivationCache(cache_dir)),
            "from kolev_cost_table(), the derivations read from the run's "
            "cache where it holds them (with the seconds they took) and "
            "measured once the run's cases had finished otherwise",
        )
    return SectionTable(
        kolev_cost_table(),
        "measured by kolev_cost_table() once the run's cases had finished",
    )


def compute_sections(
    result, *, benchmarks: bool = False, kolev: bool = True
) -> dict[str, SectionTable]:
    """The optional tables of ``result``'s report: Kolev's (``kolev``) and
    the published benchmarks for the run's formulations (``benchmarks``).
    An exception in either is a bug in what it derives, and propagates."""
    options = result.metadata.get("options", {})
    tables = {}
    if kolev:
        tables["kolev"] = kolev_section(
            options.get("cache_dir"), bool(options.get("use_cache", False))
        )
    if benchmarks:
        # The run's formulations only: the others were left out on purpose.
        frame = result.frame
        forms = sorted(frame["formulation"].unique()) if len(frame) else None
        tables["benchmarks"] = benchmark_section(forms)
    return tables


def _paths(out: Path, name: str) -> tuple[Path, Path]:
    return out / "sections" / f"{name}.csv", out / "sections" / f"{name}.json"


def save_sections(out, tables: Mapping[str, SectionTable]) -> None:
    """Keep ``tables`` beside the run in ``out/sections`` (each file
    written whole or not at all)."""
    from .store import _atomic_write

    out = Path(out)
    for name, table in tables.items():
        if name not in SECTIONS:
            raise ValueError(f"unknown section {name!r}; known: {', '.join(SECTIONS)}")
        csv, meta = _paths(out, name)
        csv.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(csv, table.frame.to_csv(index=False).encode("utf-8"))
        _atomic_write(meta, json.dumps({"note": table.note}).encode("utf-8"))


def load_sections(out) -> dict[str, SectionTable]:
    """The tables kept in ``out/sections``; a section whose files are
    missing or damaged is left out (the report says it was not computed)."""
    out = Path(out)
    tables = {}
    for name in SECTIONS:
        csv, meta = _paths(out, name)
        try:
            note = json.loads(meta.read_text(encoding="utf-8"))["note"]
            frame = pd.read_csv(csv, keep_default_na=True)
        except (OSError, ValueError, KeyError, TypeError, pd.errors.ParserError):
            continue
        if "error" in frame.columns:  # empty reasons read back as NaN
            frame["error"] = [e if isinstance(e, str) else "" for e in frame["error"]]
        if isinstance(note, str):
            tables[name] = SectionTable(frame, note)
    return tables
