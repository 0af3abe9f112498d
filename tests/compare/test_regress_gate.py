"""The regression gate from the command line: baselines it cannot fully
check, cases on one side only, the time gate, and the committed baseline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from helpers import cli_in_process, run_args

ROOT = Path(__file__).resolve().parents[2]

# A fresh base run with repeated timings, and the committed baseline
# against the main job: out of the quick loop (-m "not slow"); CI runs
# them.
pytestmark = pytest.mark.slow


def cli(env, *args):
    """``python -m eomcompare ARGS`` with ``env``'s derivation cache, in
    this process: the gate's checks are of what the command compares and
    prints, not of the process (tests/compare/test_cli_faults.py starts
    them)."""
    return cli_in_process(*args, env=env)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return {"EOMCOMPARE_CACHE": str(tmp_path_factory.mktemp("cache"))}


@pytest.fixture(scope="module")
def base(tmp_path_factory, env):
    """A small run, derived afresh with repeated timings."""
    out = tmp_path_factory.mktemp("base")
    res = cli(
        env,
        *run_args(
            out,
            ["double_pendulum"],
            ("kane", "sympy_kane"),
            t_final=0.2,
            extra=("--time-repeats", "3", "--no-cache", "--fresh"),
        ),
    )
    assert res.returncode == 0, res.stderr
    return out


def copy_run(src: Path, dst: Path, edit=None) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    for name in ("results.csv", "metadata.json"):
        shutil.copyfile(src / name, dst / name)
    if edit is not None:
        frame = pd.read_csv(dst / "results.csv")
        frame = edit(frame)
        frame.to_csv(dst / "results.csv", index=False)
    return dst


def _text_ops(f):
    f["ops_cse"] = f["ops_cse"].astype(object)
    f.loc[0, "ops_cse"] = "many"
    return f


def _infinite_ops(f):
    f["ops_cse"] = f["ops_cse"].astype(float)
    f.loc[0, "ops_cse"] = float("inf")
    return f


@pytest.mark.parametrize(
    "edit, needle",
    [
        (lambda f: f.iloc[:0], "holds no cases"),
        (lambda f: f.drop(columns=["ops_cse"]), "lacks the column(s) ['ops_cse']"),
        (_text_ops, "ops_cse is 'many', not an operation count"),
        (lambda f: f.drop(columns=["case"]), "lacks the column(s) ['case']"),
        (lambda f: f.drop(columns=["rhs_us"]), "lacks the time column(s) ['rhs_us']"),
        (_infinite_ops, "ops_cse is inf, not an operation count"),
    ],
)
def test_a_baseline_the_gate_cannot_fully_check_is_refused(
    tmp_path, env, base, edit, needle
):
    bad = copy_run(base, tmp_path / "bad", edit)
    res = cli(env, "regress", "--baseline", bad, "--run", base)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    problems = [x for x in res.stderr.splitlines() if needle in x]
    assert len(problems) == 1, res.stderr
    assert str(bad) in problems[0]


@pytest.mark.parametrize(
    "key, value, needle",
    [
        ("t_final", "1", "t_final must be a number, not str"),
        ("n_samples", 201.0, "n_samples must be an integer, not float"),
    ],
)
def test_a_baseline_whose_options_cannot_be_run_is_refused(
    tmp_path, env, base, key, value, needle
):
    bad = copy_run(base, tmp_path / "bad")
    meta = json.loads((bad / "metadata.json").read_text())
    meta["options"][key] = value
    (bad / "metadata.json").write_text(json.dumps(meta))
    res = cli(env, "regress", "--baseline", bad, "--quiet", "--out", tmp_path / "new")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    problems = [x for x in res.stderr.splitlines() if needle in x]
    assert len(problems) == 1 and str(bad) in problems[0], res.stderr
    assert not (tmp_path / "new" / "results.csv").exists()


def test_an_out_that_is_the_baseline_is_refused(tmp_path, env, base):
    kept = copy_run(base, tmp_path / "kept")
    before = (kept / "results.csv").read_bytes()
    # The same directory spelled another way, and the baseline's results.csv.
    for baseline in (kept, kept / "results.csv"):
        res = cli(
            env,
            "regress",
            "--baseline",
            baseline,
            "--quiet",
            "--out",
            tmp_path / "kept" / ".." / "kept",
        )
        assert res.returncode == 2, res.stdout + res.stderr
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and "--out" in lines[0], res.stderr
        assert "baseline" in lines[0]
    assert (kept / "results.csv").read_bytes() == before
    assert not (kept / "rows.jsonl").exists()


def test_cases_on_one_side_only_are_regressions(tmp_path, env, base):
    drop_kane = lambda f: f[f["formulation"] != "kane"]
    thin_base = copy_run(base, tmp_path / "thin_base", drop_kane)
    res = cli(env, "regress", "--baseline", thin_base, "--run", base, "--ignore-times")
    assert res.returncode == 1
    assert "double_pendulum/kane: extra:" in res.stdout
    thin_run = copy_run(base, tmp_path / "thin_run", drop_kane)
    res = cli(env, "regress", "--baseline", base, "--run", thin_run, "--ignore-times")
    assert res.returncode == 1
    assert "double_pendulum/kane: missing:" in res.stdout
    same = cli(env, "regress", "--baseline", base, "--run", base)
    assert same.returncode == 0, same.stdout


def test_other_run_options_are_a_regression(tmp_path, env, base):
    other = copy_run(base, tmp_path / "other")
    meta = json.loads((other / "metadata.json").read_text())
    meta["options"]["t_final"] = 0.1
    (other / "metadata.json").write_text(json.dumps(meta))
    res = cli(env, "regress", "--baseline", base, "--run", other, "--ignore-times")
    assert res.returncode == 1
    assert "options: t_final is 0.1, the baseline's 0.2" in res.stdout


def with_calibration(src: Path, dst: Path, factor: float, times: float = 1.0):
    """A copy of the run ``src`` whose calibrations took ``factor`` times as
    long (in every row and the run's own) and whose times ``times`` as long."""

    def edit(f):
        f["calibration_s"] = f["calibration_s"] * factor
        f["calibration_cpu_s"] = f["calibration_cpu_s"] * factor
        f["derive_s"] = f["derive_s"] * times
        f["rhs_us"] = f["rhs_us"] * times
        f["rhs_lambdify_us"] = f["rhs_lambdify_us"] * times
        return f

    run = copy_run(src, dst, edit)
    meta = json.loads((run / "metadata.json").read_text())
    meta["calibration_s"] *= factor
    (run / "metadata.json").write_text(json.dumps(meta))
    return run


@pytest.mark.parametrize("factor", [2.5, 0.4])
def test_a_calibration_moved_by_other_jobs_gives_no_time_finding(
    tmp_path, env, base, factor
):
    # Other jobs slowed the baseline's calibration (or, at 0.4, the new
    # run's), not the measured times: relative to the calibration every
    # time grew 2.5x, as measured not at all.
    if factor > 1:
        baseline, new = with_calibration(base, tmp_path / "loaded", factor), base
    else:
        baseline, new = base, with_calibration(base, tmp_path / "loaded", factor)
    res = cli(env, "regress", "--baseline", baseline, "--run", new)
    assert res.returncode == 0, res.stdout + res.stderr
    assert ": time:" not in res.stdout


def test_a_rerun_of_the_same_code_gives_no_time_finding(tmp_path, env, base):
    # The same code measured again, against a baseline measured on a
    # machine three times slower whose calibrations other jobs slowed ten
    # times further: relative to the calibration every time of the new run
    # looks about ten times slower, as measured a third, and the gate lets
    # it pass.  Only a machine loaded more than 4.5 times as much as when
    # the base run was measured, in every one of the gate's measurements,
    # could make a time look slower as measured too.
    loaded = with_calibration(base, tmp_path / "loaded", 30.0, times=3.0)
    res = cli(
        env,
        "regress",
        "--baseline",
        loaded,
        "--quiet",
        "--jobs",
        "1",
        "--out",
        tmp_path / "new",
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert ": time:" not in res.stdout


@pytest.mark.parametrize("calibration", [1.0, 2.0])
def test_a_real_slowdown_is_a_time_regression(tmp_path, env, base, calibration):
    # A run four times slower than the baseline as measured, and two or
    # four times relative to a calibration that slowed too, or not.  The
    # baseline keeps its measured times, so they stay above the floors
    # under which times are too short to judge.
    slow = with_calibration(base, tmp_path / "slow", calibration, times=4.0)
    res = cli(env, "regress", "--baseline", base, "--run", slow)
    assert res.returncode == 1
    # The compiled right-hand side of a double pendulum is under the floor
    # of times judged; its lambdify time is not.
    assert "double_pendulum/kane: time: rhs_lambdify_us grew 4.00x" in res.stdout
    ignored = cli(env, "regress", "--baseline", base, "--run", slow, "--ignore-times")
    assert ignored.returncode == 0, ignored.stdout


def test_the_committed_baseline_regresses_clean(tmp_path, main_job):
    """reports/baseline is the code's: same operation counts, agreement
    (times ignored).  Regenerate it with ``python -m eomcompare baseline``.

    The new run is the session's main job: ``baseline`` runs the same
    default comparison with the same options (a case or an option of one
    side only is a regression too), so the gate judges it as it would a
    rerun of the baseline's cases."""
    res = cli(
        {},
        "regress",
        "--baseline",
        ROOT / "reports" / "baseline",
        "--run",
        main_job,
        "--ignore-times",
    )
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "0 regression(s)" in res.stdout, res.stdout[-4000:]
