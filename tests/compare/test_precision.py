"""The work-precision sweep (compare/precision.py, precision_figures.py,
precision_cli.py): its error measure against the IFToMM pendulum's closed
form, the CSV schema and resume, what A02's singular position does to a
curve, costs read off at equal accuracy, the command line's usage errors,
and the report section."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import ellipj, ellipk

from eomcompare.compare.cli import main
from eomcompare.compare.precision import (
    COLUMNS,
    INTEGRATORS,
    Curve,
    PrecisionSettings,
    max_abs_error,
    reference_solution,
    run_curve,
    sweep,
)
from eomcompare.compare.precision_figures import (
    OPENSIM_CPU_S,
    cost_at_error,
    iftomm_table,
    write_iftomm_table,
    write_precision_summary,
)

G, L = 9.81, 1.0
TOLS = (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9)


def _timed_once(**kwargs) -> PrecisionSettings:
    """The sweeps' settings of these tests: TOLS, each solve timed once.
    They read a sweep's errors, statuses, evaluations and rows, not the
    spread of its times (``time_samples`` repeats a solve that is already
    done, and is left out of the settings' digest; the repeats are
    tests/compare/test_precision_remeasure.py's)."""
    return PrecisionSettings(tolerances=TOLS, time_samples=1, **kwargs)


def _pendulum_closed_form(t):
    """IFToMM A01 released from the horizontal: with phi the angle from
    the downward vertical, sin(phi/2) = k sn(K - w t | m), k = sin(pi/4),
    m = k^2 = 1/2, w = sqrt(g/L) (Jacobi's elliptic sine); P1 = L (sin
    phi, -cos phi)."""
    m = 0.5
    sn, _, _, _ = ellipj(ellipk(m) - np.sqrt(G / L) * np.asarray(t), m)
    phi = 2 * np.arcsin(np.sqrt(m) * sn)
    return np.column_stack([L * np.sin(phi), -L * np.cos(phi)])


def test_the_pendulum_reference_and_error_measure_match_the_closed_form(tmp_path):
    """The reference at 1e-12 is the closed form to 1e-9; the error a
    curve reports at tolerance 1e-6 is the largest distance of P1 from the
    closed form over the output steps, measured independently here."""
    settings = _timed_once(t_final=5.0, output_steps=100)
    ref = reference_solution("iftomm_pendulum", (), settings)
    assert ref["status"] == "ok" and ref["names"] == ["x_P1", "y_P1"]
    exact = _pendulum_closed_form(ref["t"])
    assert len(ref["t"]) == 101
    assert max_abs_error(ref["values"], exact) < 1e-9
    rows = run_curve(
        Curve("iftomm_pendulum", (), "lagrange", "RK45", "projection"), settings, ref
    )
    assert [r["tolerance"] for r in rows] == sorted(TOLS, reverse=True)
    row = next(r for r in rows if r["tolerance"] == 1e-6)
    from conftest import cached_eom

    res = INTEGRATORS["RK45"](
        cached_eom("lagrange", "iftomm_pendulum").numeric(),
        5.0,
        rtol=1e-6,
        atol=1e-6,
        t_eval=ref["t"],
    )
    theta = res.q[:, 0]
    by_hand = np.max(np.abs(np.column_stack([np.cos(theta), np.sin(theta)]) - exact))
    assert row["status"] == "ok" and by_hand > 1e-8
    assert row["error"] == pytest.approx(by_hand, abs=1e-9)
    # Energy is conserved by the motion: the drift is the solve's, in J.
    assert 0 < row["energy_drift"] < 1e-3


def test_max_abs_error_is_nan_for_a_solution_that_missed_output_steps():
    assert max_abs_error(np.zeros((3, 2)), np.ones((3, 2))) == 1.0
    assert np.isnan(max_abs_error(np.zeros((2, 2)), np.ones((3, 2))))


def test_the_sweep_writes_the_csv_schema_and_resumes(tmp_path):
    settings = _timed_once(t_final=1.0, output_steps=20)
    kwargs = dict(
        integrators=["DOP853", "Radau"],
        out=tmp_path,
        jobs=1,
        progress=False,
        settings=settings,
    )
    frame = sweep(["double_pendulum"], ["kane", "lagrange"], **kwargs)
    header = (tmp_path / "precision.csv").read_text().splitlines()[0].split(",")
    assert header[:9] == [
        "system",
        "formulation",
        "integrator",
        "treatment",
        "tolerance",
        "error",
        "cpu_s",
        "nfev",
        "status",
    ]
    assert header == list(COLUMNS)
    assert len(frame) == 2 * 2 * 6
    assert set(frame["status"]) == {"ok"}
    assert set(frame["treatment"]) == {"projection"}
    assert (frame["cpu_s"] > 0).all() and (frame["nfev"] > 0).all()
    # Tighter tolerances cost more evaluations on every curve.
    for _, g in frame.groupby(["formulation", "integrator"]):
        assert g.sort_values("tolerance")["nfev"].is_monotonic_decreasing
    lines = (tmp_path / "precision.jsonl").read_text().splitlines()
    again = sweep(["double_pendulum"], ["kane", "lagrange"], **kwargs)
    assert (tmp_path / "precision.jsonl").read_text().splitlines() == lines
    pd.testing.assert_frame_equal(again, frame)


def test_a_finished_sweep_leaves_no_worker_and_no_thread_behind(tmp_path):
    # Its pool's workers have exited, and the pool's thread with them,
    # before the run forks its report's workers beside it.
    import multiprocessing as mp
    import threading

    before = threading.active_count()
    settings = _timed_once(t_final=0.5, output_steps=10)
    frame = sweep(
        ["double_pendulum"],
        ["kane", "lagrange"],
        integrators=["DOP853"],
        out=tmp_path,
        jobs=2,
        progress=False,
        settings=settings,
    )
    assert set(frame["status"]) == {"ok"}
    assert threading.active_count() == before
    assert mp.active_children() == []


def test_baumgarte_is_refused_where_it_does_not_apply(tmp_path):
    settings = _timed_once(t_final=0.5, output_steps=10)
    frame = sweep(
        ["four_bar"],
        ["kane", "lagrange"],
        treatments=["baumgarte", "none"],
        variants={"four_bar": [{"coordinates": "redundant"}]},
        out=tmp_path,
        jobs=1,
        progress=False,
        settings=settings,
    )
    kane = frame[(frame["formulation"] == "kane") & (frame["treatment"] == "baumgarte")]
    assert set(kane["status"]) == {"refused"}
    assert kane["message"].str.contains("lagrange's equations only").all()
    assert kane["error"].isna().all()
    lag = frame[
        (frame["formulation"] == "lagrange") & (frame["treatment"] == "baumgarte")
    ]
    assert set(lag["status"]) == {"ok"}
    assert set(frame[frame["treatment"] == "none"]["status"]) == {"ok"}


def test_a_treatment_without_constraints_to_treat_is_refused_with_its_reason(
    tmp_path,
):
    """The double pendulum in its two joint angles has no holonomic
    constraint: Baumgarte's terms have nothing to stabilize, so every
    tolerance of lagrange's curve is refused with that reason, not run,
    while the same curve without a treatment runs."""
    settings = _timed_once(t_final=0.5, output_steps=10)
    frame = sweep(
        ["double_pendulum"],
        ["lagrange"],
        treatments=["baumgarte", "none"],
        out=tmp_path,
        jobs=1,
        progress=False,
        settings=settings,
    )
    baum = frame[frame["treatment"] == "baumgarte"]
    assert len(baum) == len(TOLS) and set(baum["status"]) == {"refused"}
    assert (baum["message"] == "no holonomic constraints to stabilize").all()
    assert baum["error"].isna().all() and baum["cpu_s"].isna().all()
    plain = frame[frame["treatment"] == "none"]
    assert set(plain["status"]) == {"ok"}, plain["message"].tolist()
    # The CSV, which the table and figures read, keeps the reason.
    csv = pd.read_csv(tmp_path / "precision.csv")
    kept = csv[csv["treatment"] == "baumgarte"]
    assert (kept["message"] == "no holonomic constraints to stabilize").all()


def test_ida_sweeps_the_multiplier_form_and_refuses_the_rest(tmp_path):
    # IDA on lagrange's multiplier form converges to the reference solution
    # (kane and lagrange at 1e-12, integrated by DOP853); kane has no
    # multiplier form, and IDA's treatment goes with IDA alone.
    settings = _timed_once(t_final=0.5, output_steps=10)
    frame = sweep(
        ["four_bar"],
        ["kane", "lagrange"],
        integrators=["IDA", "DOP853"],
        treatments=["ida-ggl", "projection"],
        variants={"four_bar": [{"coordinates": "redundant"}]},
        out=tmp_path,
        jobs=1,
        progress=False,
        settings=settings,
    )

    def rows(formulation, integrator, treatment):
        return frame[
            (frame["formulation"] == formulation)
            & (frame["integrator"] == integrator)
            & (frame["treatment"] == treatment)
        ].sort_values("tolerance")

    ida = rows("lagrange", "IDA", "ida-ggl")
    assert set(ida["status"]) == {"ok"}, ida["message"].tolist()
    assert ida["error"].iloc[0] < 1e-6 < ida["error"].iloc[-1] * 1e3
    assert ida["error"].iloc[0] < ida["error"].iloc[-1]
    kane = rows("kane", "IDA", "ida-ggl")
    assert set(kane["status"]) == {"refused"} and len(kane) == len(TOLS)
    for mixed in (
        rows("lagrange", "IDA", "projection"),
        rows("kane", "DOP853", "ida-ggl"),
    ):
        assert set(mixed["status"]) == {"refused"}
        assert mixed["message"].str.contains("only IDA takes that treatment").all()
    assert set(rows("lagrange", "DOP853", "projection")["status"]) == {"ok"}


@pytest.mark.slow
def test_a02_curves_stop_at_the_singular_position_or_pass_it(tmp_path):
    """kane integrates the dependent coordinates: the curve stops at its
    first tolerance with the singular position and its time named, and
    reports no error; modified_lagrange passes on the parallelogram
    branch and reaches the high accuracy level."""
    settings = _timed_once(t_final=4.0, output_steps=80)
    ref = reference_solution("n_four_bar", (("n", 2),), settings)
    assert ref["status"] == "ok", ref["message"]
    # modified_lagrange agrees with the parallelogram branch's closed form.
    assert ref["formulations"] == ["modified_lagrange", "parallelogram branch"]
    assert ref["agreement"] < 1e-8
    # kane integrates the dependent coordinates: each solve either stops
    # at the singular position, naming it and the time, and the curve's
    # tighter tolerances are not run; or its steps carry it over the
    # position and it must then still be on the branch (the error measure
    # would show a change of branch: metres).
    kane = run_curve(
        Curve("n_four_bar", (("n", 2),), "kane", "DOP853", "projection"), settings, ref
    )
    for i, row in enumerate(kane):
        if row["status"] == "singular":
            assert "singular position at t=" in row["message"]
            assert np.isnan(row["error"])
            assert {r["status"] for r in kane[i + 1 :]} <= {"skipped"}
            break
        assert row["status"] == "ok" and row["error"] < 1e-2
    mod = run_curve(
        Curve("n_four_bar", (("n", 2),), "modified_lagrange", "DOP853", "projection"),
        settings,
        ref,
    )
    assert {r["status"] for r in mod} == {"ok"}
    assert min(r["error"] for r in mod) < 1e-3


def test_odeint_sweeps_the_pendulum_and_the_watched_equations(tmp_path):
    """The compiled LSODA driver: on A01 (over 5 s) its errors against the
    closed-form reference fall with the tolerance to below 1e-6 m, as
    DOP853's do; on the redundant four-bar lagrange integrates the
    dependent coordinates under the watch for singular positions (none on
    this motion) and converges as modified_lagrange (which does not
    integrate them) does."""
    settings = _timed_once(t_final=5.0, output_steps=50)
    frame = sweep(
        ["iftomm_pendulum", "four_bar"],
        ["lagrange", "modified_lagrange"],
        integrators=["odeint", "DOP853"],
        variants={"four_bar": [{"coordinates": "redundant"}]},
        out=tmp_path,
        jobs=1,
        progress=False,
        settings=settings,
    )
    pend = frame[
        (frame["system"] == "iftomm_pendulum") & (frame["formulation"] == "lagrange")
    ]
    for integrator in ("odeint", "DOP853"):
        rows = pend[pend["integrator"] == integrator].sort_values("tolerance")
        assert set(rows["status"]) == {"ok"}, rows["message"].tolist()
        assert rows["error"].iloc[0] < 1e-6 < rows["error"].iloc[-1]
    bar = frame[
        frame["system"].str.startswith("four_bar") & (frame["integrator"] == "odeint")
    ]
    for formulation in ("lagrange", "modified_lagrange"):
        ran = bar[bar["formulation"] == formulation].sort_values("tolerance")
        assert set(ran["status"]) == {"ok"}, ran["message"].tolist()
        assert ran["error"].iloc[0] < 1e-6 < ran["error"].iloc[-1] * 1e3


def _synthetic():
    """Two curves on A01 by hand: one reaches 1e-3 at its second tolerance,
    the other never does."""
    rows = []
    for tol, err, cpu in ((1e-4, 5e-3, 0.1), (1e-6, 5e-4, 0.3), (1e-8, 1e-6, 0.9)):
        rows.append(
            (
                "iftomm_pendulum",
                "kane",
                "DOP853",
                "projection",
                tol,
                err,
                cpu,
                10,
                "ok",
                "",
            )
        )
    rows.append(
        (
            "iftomm_pendulum",
            "lagrange",
            "RK45",
            "projection",
            1e-4,
            2e-2,
            0.05,
            10,
            "ok",
            "",
        )
    )
    rows.append(
        (
            "iftomm_pendulum",
            "lagrange",
            "RK45",
            "projection",
            1e-6,
            np.nan,
            np.nan,
            None,
            "capped",
            "stopped after 60 s",
        )
    )
    cols = [
        "system",
        "formulation",
        "integrator",
        "treatment",
        "tolerance",
        "error",
        "cpu_s",
        "nfev",
        "status",
        "message",
    ]
    return pd.DataFrame(rows, columns=cols)


def test_costs_are_read_at_an_error_reached_never_at_a_tolerance(tmp_path):
    costs = cost_at_error(_synthetic(), 1e-3).set_index("formulation")
    assert costs.loc["kane", "cpu_s"] == 0.3 and costs.loc["kane", "error"] == 5e-4
    assert np.isnan(costs.loc["lagrange", "cpu_s"])
    assert costs.loc["lagrange", "best_error"] == 2e-2
    assert costs.loc["lagrange", "status"].startswith("capped")
    table = iftomm_table(_synthetic()).set_index("formulation")
    assert table.loc["kane", "opensim_over_best"] == pytest.approx(
        OPENSIM_CPU_S["A01"] / 0.3
    )
    assert "capped" in table.loc["lagrange", "outcome"]
    paths = write_iftomm_table(
        _synthetic(), tmp_path, command="python -m eomcompare precision x"
    )
    assert "python -m eomcompare precision x" in paths["markdown"].read_text()
    assert list(pd.read_csv(paths["csv"])["problem"]) == ["A01", "A01"]


def test_opensims_a02_time_stands_beside_the_variant_the_port_ran():
    """OpenSim ran A02 with N = 2 over 10 s: its time is compared with that
    variant's best, not with N = 40 over 20 s; each row carries the spread
    of its timed solves."""
    base = _synthetic().iloc[:3]
    frames = []
    for label, t_final, cpu in (
        ("n_four_bar[n=2]", 10.0, 0.1),
        ("n_four_bar[n=40]", 20.0, 2.0),
    ):
        frames.append(
            base.assign(
                system=label,
                t_final=t_final,
                cpu_s=base["cpu_s"] * cpu,
                cpu_s_median=base["cpu_s"] * cpu * 1.5,
                cpu_s_k=3,
            )
        )
    table = iftomm_table(pd.concat(frames, ignore_index=True)).set_index("system")
    small, large = table.loc["n_four_bar[n=2]"], table.loc["n_four_bar[n=40]"]
    assert small["best"] and large["best"]
    assert small["opensim_over_best"] == pytest.approx(OPENSIM_CPU_S["A02"] / 0.03)
    assert np.isnan(large["opensim_cpu_s"]) and np.isnan(large["opensim_over_best"])
    assert large["t_final"] == 20.0 and large["cpu_s"] == pytest.approx(0.6)
    assert large["cpu_s_median"] == pytest.approx(0.9) and large["cpu_s_k"] == 3


@pytest.mark.parametrize(
    "args,message",
    [
        (["--systems", "no_such_system"], "unknown systems"),
        (["--integrators", "Euler"], "unknown integrators ['Euler']"),
        (["--treatments", "penalty"], "unknown treatments ['penalty']"),
        (["--tolerances", "1e-3", "1e-4"], "at least six"),
        (["--tolerances", "1e-3", "1e-4", "1e-5", "1e-6", "1e-7", "2"], "(0, 1)"),
        (["--jobs", "0"], "--jobs must be a positive integer"),
        (["--solve-cap", "-1"], "solve_cap must be a positive number"),
        (["--time-samples", "0"], "--time-samples must be a positive integer"),
        (["--time-budget", "nan"], "--time-budget must be a non-negative number"),
        (["--t-final", "nan"], "t_final must be a positive number"),
        (["--formulations", "newton"], "unknown formulations"),
    ],
)
def test_the_command_refuses_bad_input_before_running(tmp_path, capsys, args, message):
    status = main(["precision", "--out", str(tmp_path), "--quiet", *args])
    assert status == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "precision.csv").exists()


def test_the_command_refuses_an_out_that_is_a_file(tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("")
    assert main(["precision", "--out", str(target), "--quiet"]) == 2
    assert "is a file" in capsys.readouterr().err


def test_the_report_draws_the_work_precision_section(tmp_path):
    from eomcompare.compare.precision_figures import report_section
    from eomcompare.compare.report import (
        Figure,
        Report,
        Table,
        _compute_parts,
        pyplot,
    )

    _synthetic().to_csv(tmp_path / "precision.csv", index=False)
    frame = _synthetic()
    for c in COLUMNS:
        if c not in frame:
            frame[c] = np.nan
    frame[list(COLUMNS)].to_csv(tmp_path / "precision.csv", index=False)
    rep = Report(tmp_path)
    report_section(rep, tmp_path, plt=pyplot())
    _compute_parts(rep, jobs=1)
    (figure,) = [b for b in rep.blocks if isinstance(b, Figure)]
    assert figure.path.name == "precision_iftomm_pendulum.png" and figure.path.exists()
    (table,) = [b for b in rep.blocks if isinstance(b, Table)]
    row = table.frame.iloc[0]
    assert row["cheapest"].startswith("kane") and row["cpu_s"] == 0.3
    assert np.isnan(row["lagrange x"])


def test_a_report_without_a_sweep_says_so(tmp_path):
    from eomcompare.compare.precision_figures import report_section
    from eomcompare.compare.report import Para, Report

    rep = Report(tmp_path)
    report_section(rep, tmp_path)
    assert "not available" in rep.blocks[0].text
    assert isinstance(rep.blocks[0], Para)


def test_the_jsonl_keeps_whole_lines_and_the_settings_digest(tmp_path):
    settings = _timed_once(t_final=0.5, output_steps=10)
    sweep(
        ["double_pendulum"],
        ["kane"],
        out=tmp_path,
        jobs=1,
        progress=False,
        settings=settings,
    )
    rows = [
        json.loads(x) for x in (tmp_path / "precision.jsonl").read_text().splitlines()
    ]
    assert {r["settings_digest"] for r in rows} == {settings.digest()}
    assert {r["curve"] for r in rows} == {"double_pendulum/kane/DOP853/projection"}


def test_no_run_needs_a_table_and_a_precision_csv(tmp_path, capsys):
    assert main(["precision", "--out", str(tmp_path), "--no-run"]) == 2
    assert "--table" in capsys.readouterr().err
    args = ["precision", "--out", str(tmp_path), "--no-run", "--table", str(tmp_path)]
    assert main(args) == 2
    assert "precision.csv" in capsys.readouterr().err
    frame = _synthetic()
    for c in COLUMNS:
        if c not in frame:
            frame[c] = np.nan
    frame[list(COLUMNS)].to_csv(tmp_path / "precision.csv", index=False)
    assert main(args) == 0
    assert (tmp_path / "iftomm.md").exists()
    # Two sweeps' files read together: both rows of each.
    other = tmp_path / "other"
    other.mkdir()
    frame[list(COLUMNS)].assign(system="n_four_bar[n=2]").to_csv(
        other / "precision.csv", index=False
    )
    table = tmp_path / "table"
    both = ["precision", "--no-run", "--from", str(tmp_path), str(other)]
    assert main([*both, "--table", str(table)]) == 0
    problems = pd.read_csv(table / "iftomm.csv")["problem"]
    assert sorted(problems) == ["A01", "A01", "A02", "A02"]
    assert main(["precision", "--from", str(other), "--out", str(tmp_path)]) == 2
    assert "use it with --no-run" in capsys.readouterr().err


def test_the_summary_reads_each_formulation_at_both_levels(tmp_path):
    """From the hand-made curves: at 1e-1 kane's cheapest solve is its
    loosest (error 5e-3, 0.1 s) and lagrange's its only one (2e-2, 0.05 s);
    at 1e-3 kane needs its second tolerance (0.3 s) and lagrange, capped
    after its first, never gets there and the summary says how close it
    came; one figure per treatment."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frame = _synthetic().assign(cpu_s_median=lambda f: f["cpu_s"], cpu_s_k=1)
    paths = write_precision_summary(frame, tmp_path, command="x", plt=plt)
    costs = pd.read_csv(paths["csv"]).set_index(["formulation", "level"])
    assert costs.loc[("kane", 0.1), "cpu_s"] == 0.1
    assert costs.loc[("lagrange", 0.1), "cpu_s"] == 0.05
    assert costs.loc[("kane", 0.001), "cpu_s"] == 0.3
    assert np.isnan(costs.loc[("lagrange", 0.001), "cpu_s"])
    text = paths["markdown"].read_text()
    kane = next(line for line in text.splitlines() if line.startswith("| kane"))
    assert "| 0.1 (0.1, 1) | DOP853, projection, tol 0.0001, error 0.005 |" in kane
    assert "| 0.3 (0.3, 1) | DOP853, projection, tol 1e-06, error 0.0005 |" in kane
    lag = next(line for line in text.splitlines() if line.startswith("| lagrange"))
    assert lag.endswith("| not reached | best error 0.02 |")
    assert "Rows: 1 capped, 4 ok." in text
    assert [p.name for _, p in paths["figures"]["iftomm_pendulum"]] == [
        "iftomm_pendulum_projection.png"
    ]
    assert (tmp_path / "precision_figures" / "iftomm_pendulum_projection.png").exists()


def test_a_later_sweeps_curve_replaces_the_same_curve_of_an_earlier_one(tmp_path):
    """Two sweeps read together: kane's DOP853 curve, run again and slower
    (0.4 s at 1e-3 instead of 0.3 s), is taken from the later directory
    only (not the cheaper of the two), while lagrange's curve, in the
    earlier one alone, is kept."""
    frame = _synthetic()
    for c in COLUMNS:
        if c not in frame:
            frame[c] = np.nan
    first, second, table = tmp_path / "a", tmp_path / "b", tmp_path / "t"
    first.mkdir()
    second.mkdir()
    frame[list(COLUMNS)].to_csv(first / "precision.csv", index=False)
    again = frame[frame["formulation"] == "kane"].copy()
    again["cpu_s"] = [0.35, 0.4, 0.45]
    again[list(COLUMNS)].to_csv(second / "precision.csv", index=False)
    argv = ["precision", "--no-run", "--from", str(first), str(second)]
    assert main([*argv, "--table", str(table)]) == 0
    costs = pd.read_csv(table / "precision_costs.csv")
    kane = costs[(costs["formulation"] == "kane") & (costs["level"] == 1e-3)]
    assert kane["cpu_s"].tolist() == [0.4]
    assert set(costs["formulation"]) == {"kane", "lagrange"}


@pytest.mark.slow
def test_the_andrews_reference_ends_at_the_test_sets_published_angles():
    """A03's reference (kane and lagrange by Radau at 1e-12) reaches the
    IVP test set's reference angles at t = 0.03 (Hairer and Wanner), its
    point F = rr (cos beta, sin beta) included."""
    from eomcompare.references.published import ANDREWS_REFERENCE

    settings = PrecisionSettings(tolerances=TOLS, output_steps=6)
    ref = reference_solution("andrews_squeezer", (), settings)
    assert ref["status"] == "ok" and ref["names"] == ["x_F", "y_F"]
    assert ref["t"][-1] == pytest.approx(0.03)
    assert ref["agreement"] < 1e-12
    from eomcompare.references.published import ANDREWS_ANGLES

    assert ANDREWS_ANGLES[0] == "beta"
    beta = ANDREWS_REFERENCE[0]
    np.testing.assert_allclose(
        ref["values"][-1], [0.007 * np.cos(beta), 0.007 * np.sin(beta)], atol=1e-10
    )


@pytest.mark.slow
def test_the_default_comparison_runs_the_quick_sweep_into_its_report(
    tmp_path, monkeypatch, main_job
):
    """--precision quick (the default comparison's default) sweeps the
    quick systems into the run's directory and the report draws them; a
    run naming its systems does not sweep unless asked.

    The sweep and its section are read from the session's main job (the
    default comparison itself); the run naming its systems shows what it
    leaves out, and that ``--precision quick`` asks for the same sweep."""
    import eomcompare.compare.kolev_costs as kc
    import eomcompare.compare.precision as precision
    from eomcompare.compare.precision import QUICK_SYSTEMS, QUICK_TOLERANCES

    frame = pd.read_csv(main_job / "precision.csv")
    assert {s.split("[")[0] for s in frame["system"]} == set(QUICK_SYSTEMS)
    assert sorted(frame["tolerance"].unique()) == sorted(QUICK_TOLERANCES)
    assert set(frame["status"]) == {"ok"}
    # Solved on the backend the cases were integrated with (the main job's
    # default compiles; the sweep loads the cases' libraries).
    cases = pd.read_csv(main_job / "results.csv")
    assert set(frame["backend"]) == set(cases["backend"].dropna())
    md = (main_job / "report.md").read_text()
    assert "read off the curves at an error of 0.001" in md
    for system in QUICK_SYSTEMS:
        assert list((main_job / "figures").glob(f"precision_{system}*.png")), system

    # The runs' reports compute Kolev's table in a forked child, which
    # inherits this stand-in: the test reads their precision sections, and
    # the table derived from the run's cache is the main job's (read in
    # tests/compare/test_report.py), not seconds of derivations again here.
    kolev = pd.DataFrame({"system": ["four_bar"], "variant": ["modified"]})
    monkeypatch.setattr(kc, "kolev_cost_table", lambda *a, **k: kolev)
    base = ["run", "--systems", "double_pendulum", "--formulations", "kane"]
    base += ["--t-final", "0.2", "--jobs", "1", "--quiet", "--no-cache"]
    plain = tmp_path / "plain"
    assert main([*base, "--out", str(plain)]) == 0
    assert not (plain / "precision.csv").exists()
    assert (
        "Section not available: no precision.csv" in (plain / "report.md").read_text()
    )

    # Asked for, the same run sweeps into its directory (its case resumed;
    # the sweep, which the main job ran, stops the command where it is
    # called, before a second report).
    class Swept(Exception):
        pass

    def quick_sweep(out, **kwargs):
        raise Swept(out, kwargs.get("backend"))

    monkeypatch.setattr(precision, "quick_sweep", quick_sweep)
    with pytest.raises(Swept) as swept:
        main([*base, "--out", str(plain), "--precision", "quick"])
    assert swept.value.args == (plain, "auto")
    with pytest.raises(Swept) as swept:
        main([*base, "--out", str(plain), "--precision", "quick", "--backend", "sized"])
    assert swept.value.args == (plain, "sized")


def test_an_interrupt_keeps_the_finished_curves_and_the_same_call_resumes(
    tmp_path, monkeypatch
):
    """SIGINT while the first curve runs (here, jobs=1): that curve is
    saved, the second is not run, RunInterrupted counts one curve kept;
    the same call then runs only the second."""
    import os
    import signal

    import eomcompare.compare.precision as precision
    from eomcompare.compare.runner import RunInterrupted

    settings = _timed_once(t_final=0.2, output_steps=5)
    ran = []
    real = precision.run_curve

    def interrupted(curve, *args):
        ran.append(curve.formulation)
        if len(ran) == 1:
            os.kill(os.getpid(), signal.SIGINT)
        return real(curve, *args)

    monkeypatch.setattr(precision, "run_curve", interrupted)
    kwargs = dict(out=tmp_path, jobs=1, progress=False, settings=settings)
    with pytest.raises(RunInterrupted) as err:
        sweep(["double_pendulum"], ["kane", "lagrange"], **kwargs)
    assert err.value.saved == 1 and ran == ["kane"]
    assert set(pd.read_csv(tmp_path / "precision.csv")["formulation"]) == {"kane"}
    frame = sweep(["double_pendulum"], ["kane", "lagrange"], **kwargs)
    assert ran == ["kane", "lagrange"]
    assert len(frame) == 12 and set(frame["status"]) == {"ok"}


def test_curves_over_two_horizons_stay_apart_and_the_table_takes_the_longer():
    """The same curve swept over the catalogue's 10 s and the problem's
    20 s: two curves; the IFToMM table reads the 20 s one, though the 10 s
    one is cheaper."""
    short = _synthetic()
    short["t_final"] = 10.0
    long_ = short.copy()
    long_["t_final"] = 20.0
    long_["cpu_s"] = long_["cpu_s"] * 2
    both = pd.concat([short, long_], ignore_index=True)
    costs = cost_at_error(both, 1e-3)
    kane = costs[costs["formulation"] == "kane"]
    assert sorted(kane["t_final"]) == [10.0, 20.0]
    assert sorted(kane["cpu_s"]) == [0.3, 0.6]
    table = iftomm_table(both, 1e-3)
    row = table[table["formulation"] == "kane"].iloc[0]
    assert row["t_final"] == 20.0 and row["cpu_s"] == 0.6


def test_a_sweep_solves_the_declarations_its_process_prepared(tmp_path, monkeypatch):
    """Forked from the main job's run, the quick sweep solves the
    declarations the run prepared (built and validated once) instead of
    building them again; a process that prepared none builds them."""
    import eomcompare.compare.user_systems as user_systems
    from eomcompare.compare import precision_problems
    from eomcompare.compare.case_run import prepare_variant
    from eomcompare.compare.cases import Case, RunOptions
    from eomcompare.compare.prepared import PREPARED

    PREPARED.clear()
    precision_problems._build.cache_clear()
    precision_problems._model_memo.cache_clear()
    built = []
    real = user_systems.build_system

    def counted(name, options=None):
        built.append(name)
        return real(name, options)

    monkeypatch.setattr(user_systems, "build_system", counted)
    ms = prepare_variant(
        Case("double_pendulum", (), "kane"), RunOptions(n_states=2, use_cache=False)
    )[0]
    settings = PrecisionSettings(
        tolerances=TOLS, t_final=0.2, output_steps=5, use_cache=False
    )
    frame = sweep(
        ["double_pendulum", "iftomm_pendulum"],
        ["kane"],
        out=tmp_path,
        jobs=1,
        progress=False,
        settings=settings,
    )
    assert set(frame["status"]) == {"ok"}
    assert precision_problems._build("double_pendulum", ()) is ms
    assert built == ["iftomm_pendulum"]
    PREPARED.clear()
    precision_problems._build.cache_clear()
    precision_problems._model_memo.cache_clear()
