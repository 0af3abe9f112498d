"""The IFToMM table's times measured again in one run
(compare/precision_remeasure.py, ``precision --remeasure K``): the
round-robin order, the tie rule on synthetic timings, and a real
re-measure of a short pendulum sweep's chosen cells."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from eomcompare.compare.cli import main
from eomcompare.compare.precision import PrecisionSettings, sweep
from eomcompare.compare.precision_figures import OPENSIM_CPU_S, iftomm_table
from eomcompare.compare.precision_remeasure import (
    _split_label,
    candidate_cells,
    rank_within_spread,
    remeasure,
    round_robin,
)

TOLS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)


def test_round_robin_solves_each_cell_once_per_round_after_an_untimed_one():
    calls = []

    def solver(name, nfev, fail_at=None):
        def solve():
            calls.append(name)
            if fail_at is not None and calls.count(name) == fail_at:
                raise RuntimeError("diverged")
            return 0.1 * len(calls), nfev

        return solve

    times, nfev, failed = round_robin(
        {"a": solver("a", 10), "b": solver("b", 20), "c": solver("c", 30, 3)}, 3
    )
    # Warm-up a b c, then rounds; c fails at its third solve (the second
    # round) and is left out from then on.
    assert calls == ["a", "b", "c", "a", "b", "c", "a", "b", "c", "a", "b"]
    assert nfev == {"a": 10, "b": 20, "c": 30}
    assert failed == {"c": "RuntimeError: diverged"}
    assert len(times["a"]) == len(times["b"]) == 3 and len(times["c"]) == 1
    # Interleaved: a's times are its calls 4, 7 and 10.
    assert times["a"] == pytest.approx([0.4, 0.7, 1.0])


def _timed(system, formulation, median, q1, q3, k=5, opensim=np.nan):
    return {
        "system": system,
        "formulation": formulation,
        "cpu_s_median": median,
        "cpu_s_q1": q1,
        "cpu_s_q3": q3,
        "cpu_s_k": k,
        "opensim_cpu_s": opensim,
    }


def test_a_best_is_named_only_beyond_the_spread_else_a_tie():
    table = pd.DataFrame(
        [
            # 0.08 apart with IQRs 0.1 and 0.2: a tie; c 1.0 slower with
            # IQR 0.1: out of it.
            _timed("A03", "a", 1.0, 0.95, 1.05, opensim=0.384),
            _timed("A03", "b", 1.08, 1.0, 1.2, opensim=0.384),
            _timed("A03", "c", 2.0, 1.95, 2.05, opensim=0.384),
            # 0.5 apart, larger IQR 0.2: b is the best.
            _timed("A04", "a", 1.5, 1.4, 1.6),
            _timed("A04", "b", 1.0, 0.95, 1.05),
            # Fewer than three times each: no spread known, no ranking.
            _timed("A05", "a", 1.0, 1.0, 1.0, k=2),
            _timed("A05", "b", 3.0, 3.0, 3.0, k=2),
            # No time: out of the ranking.
            _timed("A05", "c", np.nan, np.nan, np.nan, k=np.nan),
        ]
    )
    ranked = rank_within_spread(table).set_index(["system", "formulation"])
    assert list(ranked["best"]) == ["tie", "tie", "no", "no", "yes", "tie", "tie", "no"]
    assert ranked.loc[("A03", "a"), "opensim_over_best"] == pytest.approx(0.384)
    assert ranked.loc[("A03", "b"), "opensim_over_best"] == pytest.approx(0.384 / 1.08)
    assert np.isnan(ranked.loc[("A03", "c"), "opensim_over_best"])
    # A04 has no OpenSim time in this table.
    assert np.isnan(ranked.loc[("A04", "b"), "opensim_over_best"])


def test_the_candidates_are_each_formulations_cheapest_cells_at_the_level():
    def row(formulation, integrator, tol, error, cpu_s, t_final=10.0, status="ok"):
        return {
            "system": "bricard",
            "formulation": formulation,
            "integrator": integrator,
            "treatment": "none",
            "tolerance": tol,
            "error": error,
            "cpu_s": cpu_s,
            "nfev": 100,
            "status": status,
            "t_final": t_final,
            "output_steps": 200,
            "backend": "c",
        }

    frame = pd.DataFrame(
        [
            row("kane", "DOP853", 1e-4, 2e-3, 0.01),  # above the level
            row("kane", "DOP853", 1e-5, 5e-4, 0.04),
            row("kane", "odeint", 1e-6, 1e-4, 0.02),
            row("kane", "RK45", 1e-6, 1e-4, 0.03),
            row("kane", "LSODA", 1e-6, 1e-4, 0.001, t_final=5.0),  # other horizon
            row("kane", "BDF", 1e-6, np.nan, np.nan, status="capped"),
            row("lagrange", "DOP853", 1e-5, 5e-4, 0.05),
        ]
    )
    table = pd.DataFrame(
        [
            {"system": "bricard", "formulation": f, "t_final": 10.0}
            | {"outcome": "reached"}
            for f in ("kane", "lagrange")
        ]
    )
    cells = candidate_cells(frame, table, 1e-3, 2)
    assert list(zip(cells["formulation"], cells["integrator"])) == [
        ("kane", "odeint"),
        ("kane", "RK45"),
        ("lagrange", "DOP853"),
    ]
    with pytest.raises(ValueError, match="positive integer"):
        candidate_cells(frame, table, 1e-3, 0)


def test_a_variant_label_gives_back_the_builder_options():
    assert _split_label("n_four_bar[n=2]") == ("n_four_bar", (("n", 2),))
    assert _split_label("flyball_governor[shaft=driven]") == (
        "flyball_governor",
        (("shaft", "driven"),),
    )
    assert _split_label("bricard") == ("bricard", ())


@pytest.fixture(scope="module")
def pendulum_sweep(tmp_path_factory):
    """A01 over its first 2 s: kane and lagrange, DOP853 and odeint, as a
    sweep writes it."""
    out = tmp_path_factory.mktemp("sweep")
    settings = PrecisionSettings(tolerances=TOLS, t_final=2.0, output_steps=40)
    frame = sweep(
        ["iftomm_pendulum"],
        ["kane", "lagrange"],
        integrators=["DOP853", "odeint"],
        treatments=["none"],
        out=out,
        jobs=1,
        progress=False,
        settings=settings,
    )
    return out, frame


def test_remeasure_times_each_chosen_cell_again_and_ranks_by_the_spread(
    pendulum_sweep,
):
    _, frame = pendulum_sweep
    table = iftomm_table(frame)
    assert list(table["outcome"]) == ["reached", "reached"]
    again, info = remeasure(table, 5)
    assert info.k == 5 and info.cells == 2 and len(info.load_before) == 3
    assert list(again["cpu_s_k"]) == [5, 5]
    # The same computation as the sweep's chosen solve: the same number of
    # right-hand-side evaluations.
    assert list(again["nfev_remeasured"]) == list(table["nfev"])
    assert list(again["remeasure_note"]) == ["", ""]
    assert (again["cpu_s_q1"] > 0).all()
    assert (again["cpu_s_q1"] <= again["cpu_s_median"]).all()
    assert (again["cpu_s_median"] <= again["cpu_s_q3"]).all()
    # The sweep's time is kept under its own name.
    assert list(again["sweep_cpu_s"]) == list(table["cpu_s"])
    marks = sorted(again["best"])
    assert marks in (["no", "yes"], ["tie", "tie"])
    best = again[again["best"] != "no"]
    assert best["opensim_over_best"].to_numpy() == pytest.approx(
        OPENSIM_CPU_S["A01"] / best["cpu_s_median"].to_numpy()
    )
    with pytest.raises(ValueError, match="at least 3"):
        remeasure(table, 2)


def test_remeasure_keeps_the_candidate_with_the_smallest_median(pendulum_sweep):
    _, frame = pendulum_sweep
    table = iftomm_table(frame)
    cells = candidate_cells(frame, table, 1e-3, 3)
    assert len(cells) == 6
    # Each formulation's first candidate is the table's own cell.
    firsts = cells.groupby("formulation").head(1).set_index("formulation")
    for _, r in table.iterrows():
        assert firsts.loc[r["formulation"], "tolerance"] == r["tolerance"]
        assert firsts.loc[r["formulation"], "integrator"] == r["integrator"]
    again, info = remeasure(table, 3, candidates=cells)
    assert info.cells == 6 and info.per_row == 3
    assert list(again["cells_timed"]) == [3, 3]
    for _, r in again.iterrows():
        # The kept cell is one of the formulation's candidates, and the
        # solve timed made the sweep's evaluations of that cell.
        mine = cells[cells["formulation"] == r["formulation"]]
        hit = mine[
            (mine["integrator"] == r["integrator"])
            & (mine["tolerance"] == r["tolerance"])
        ]
        assert len(hit) == 1
        assert r["nfev_remeasured"] == hit["nfev"].iloc[0] == r["nfev"]
        assert r["sweep_cpu_s"] == hit["cpu_s"].iloc[0]
        assert r["error"] <= 1e-3


def test_the_command_remeasures_the_table_it_writes(pendulum_sweep, tmp_path, capsys):
    out, _ = pendulum_sweep
    args = ["precision", "--no-run", "--out", str(out), "--table", str(tmp_path)]
    assert main([*args, "--remeasure", "2"]) == 2
    assert "K >= 3" in capsys.readouterr().err
    assert main([*args, "--remeasure", "3", "--quiet"]) == 0
    csv = pd.read_csv(tmp_path / "iftomm.csv")
    assert list(csv["cpu_s_k"]) == [3, 3]
    assert {"cpu_s_q1", "cpu_s_q3", "sweep_cpu_s"} <= set(csv.columns)
    text = (tmp_path / "iftomm.md").read_text()
    assert "round-robin" in text and "Load average (1, 5, 15 min) before" in text
    assert "| IQR (q1-q3) |" in text
