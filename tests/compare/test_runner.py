"""The comparison harness: rows, failures as rows, time-outs, resume after
an interrupt, the derivation cache, executors and the CLI."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sympy as sm
from helpers import cli_in_process, run_args

from eomcompare.compare import run
from eomcompare.compare.assemble import agreement
from eomcompare.compare.cases import expand_cases
from eomcompare.formulations import FORMULATIONS, Formulation, get_formulation
from eomcompare.formulations.cache import DerivationCache, cache_key
from eomcompare.symbolic.frames import connected_frames
from eomcompare.systems import CATALOGUE, get_system

ROOT = Path(__file__).resolve().parents[2]


def test_small_run_rows_agreement_and_energy(tmp_path):
    res = run(
        ["double_pendulum"],
        ["kane", "sympy_kane"],
        t_final=1.0,
        jobs=1,
        progress=False,
        out=tmp_path,
        use_cache=False,
        n_samples=51,
        # A budget no derivation or solve of this system reaches: every
        # solve is measured solve_samples times, every derivation up to
        # time_samples (fewer once three agree within SETTLED_SPREAD).
        time_budget=60.0,
    )
    f = res.frame.set_index("formulation")
    assert set(f["status"]) == {"ok"}
    assert list(f["integrate_s_k"]) == [3, 3]
    assert f["derive_s_k"].between(3, 5).all()
    # The two derivations are equal, so trajectories agree to the
    # integrator's tolerance over the whole horizon.
    assert f.loc["sympy_kane", "qdd_max_rel_dev"] < 1e-12
    assert f.loc["sympy_kane", "max_rel_dev_q"] < 1e-8
    assert f.loc["sympy_kane", "agreement_horizon"] == pytest.approx(1.0)
    # A conservative system: T + V is constant along the trajectory.
    assert f.loc["kane", "energy_drift"] < 1e-8
    for col in (
        "derive_s",
        "ops_raw",
        "ops_cse",
        "codegen_s",
        "rhs_us",
        "integrate_s",
        "nfev",
        "n_equations",
        "n_unknowns",
    ):
        assert f.loc["kane", col] > 0, col
    traj = res.trajectories["double_pendulum/kane"]
    assert traj["q"].shape == (51, 2) and traj["qd"].shape == (51, 2)
    assert (tmp_path / "results.csv").exists()
    # The canonical counts in the saved table: kane and its peer, the same
    # equations written differently (41 against 48 after cse as derived),
    # count the same once canonical; per evaluation the solve of the two
    # unknowns is added.
    saved = pd.read_csv(tmp_path / "results.csv").set_index("formulation")
    for col in ("ops_canonical", "ops_per_evaluation", "n_unknowns"):
        assert col in saved.columns, col
    assert (
        saved.loc["kane", "ops_canonical"] == saved.loc["sympy_kane", "ops_canonical"]
    )
    assert saved.loc["kane", "n_unknowns"] == 2
    assert saved.loc["kane", "ops_per_evaluation"] > 0
    # Every compared time with its repeats: the fastest (the gate's), the
    # median and the interquartile range of at least three measurements
    # (lambdify's right-hand side three, the cheap derivations and solves
    # up to five, fewer once their spread has settled).
    for col in ("derive_s", "rhs_us", "rhs_lambdify_us", "integrate_s"):
        for form in ("kane", "sympy_kane"):
            r = saved.loc[form]
            assert r[f"{col}_k"] >= 3, (col, form)
            assert 0 < r[col] <= r[f"{col}_median"], (col, form)
            assert r[f"{col}_spread"] >= 0, (col, form)
    assert saved.loc["kane", "rhs_backend"] in ("c", "lambdify")
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert (
        meta["options"]["t_final"] == 1.0
        and meta["versions"]["sympy"] == sm.__version__
    )
    # Measured at both ends of the run, their geometric mean kept.
    a, b = meta["calibration_ends_s"]
    assert a > 0 and b > 0
    assert meta["calibration_s"] == pytest.approx(math.sqrt(a * b))


def test_agreement_horizon_is_first_exceedance():
    t = np.linspace(0, 1, 11)
    ref = np.zeros((11, 1))
    q = ref.copy()
    q[7:] = 1e-3  # departs at t = 0.7
    ag = agreement(t, q, ref, ref, ref, threshold=1e-6)
    assert ag["agreement_horizon"] == pytest.approx(0.7)
    assert ag["max_abs_dev_q"] == pytest.approx(1e-3)


class _Broken(Formulation):
    name = "_broken_for_test"
    handles_holonomic = handles_nonholonomic = True

    def _derive(self, system, stage):
        raise RuntimeError("deliberate failure")


class _Slow(Formulation):
    name = "_slow_for_test"
    handles_holonomic = handles_nonholonomic = True

    def _derive(self, system, stage):
        time.sleep(3600)  # never ends within any timeout the tests give


@pytest.fixture
def extra_formulations():
    FORMULATIONS[_Broken.name] = _Broken
    FORMULATIONS[_Slow.name] = _Slow
    yield
    FORMULATIONS.pop(_Broken.name)
    FORMULATIONS.pop(_Slow.name)


def test_failing_and_hanging_cases_become_rows(extra_formulations, tmp_path):
    # A failing case beside a good one: the good one is measured.
    res = run(
        ["double_pendulum"],
        ["kane", _Broken.name],
        t_final=0.2,
        jobs=1,
        progress=False,
        use_cache=False,
    )
    f = res.frame.set_index("formulation")
    assert f.loc["kane", "status"] == "ok"
    assert f.loc[_Broken.name, "status"] == "error"
    assert "deliberate failure" in f.loc[_Broken.name, "error"]
    # A hanging case is cut at the limit and the run goes on to the next.
    # The hanging case never ends, so any limit cuts it; the failing case
    # ends at once, so a few seconds leave it room on a loaded machine
    # (a good case would need a limit its slowest run fits in).
    res = run(
        ["double_pendulum"],
        [_Slow.name, _Broken.name],
        t_final=0.2,
        jobs=1,
        progress=False,
        use_cache=False,
        timeout=4,
    )
    f = res.frame.set_index("formulation")
    assert f.loc[_Slow.name, "status"] == "timeout"
    assert f.loc[_Broken.name, "status"] == "error"
    assert "deliberate failure" in f.loc[_Broken.name, "error"]


def test_unknown_names_are_refused_with_the_valid_ones():
    with pytest.raises(ValueError, match="valid: .*double_pendulum"):
        expand_cases(["no_such_system"])
    with pytest.raises(ValueError, match="valid: .*kane"):
        expand_cases(["double_pendulum"], ["no_such_formulation"])
    with pytest.raises(ValueError, match="t_final"):
        run(["double_pendulum"], ["kane"], t_final=-1, jobs=1, progress=False)


def test_resume_skips_finished_cases(tmp_path):
    kw = dict(t_final=0.2, jobs=1, progress=False, out=tmp_path, use_cache=False)
    first = run(["double_pendulum"], ["kane", "sympy_kane"], **kw)
    assert first.metadata["resumed_cases"] == 0
    second = run(["double_pendulum"], ["kane", "sympy_kane"], **kw)
    assert second.metadata["resumed_cases"] == 2
    pd.testing.assert_series_equal(first.frame["ops_raw"], second.frame["ops_raw"])
    # Other options do not resume the old rows.
    third = run(["double_pendulum"], ["kane"], **(kw | {"t_final": 0.3}))
    assert third.metadata["resumed_cases"] == 0


def test_rows_of_other_code_are_not_resumed(tmp_path, monkeypatch):
    # A run after a code change must not report rows the old code computed.
    import eomcompare.formulations.cache as cache_module

    kw = dict(t_final=0.2, jobs=1, progress=False, out=tmp_path, use_cache=False)
    run(["double_pendulum"], ["kane"], **kw)
    assert run(["double_pendulum"], ["kane"], **kw).metadata["resumed_cases"] == 1
    monkeypatch.setattr(cache_module, "code_digest", lambda packages=(): "edited")
    assert run(["double_pendulum"], ["kane"], **kw).metadata["resumed_cases"] == 0


def test_code_digest_follows_every_module_of_the_packages(tmp_path, monkeypatch):
    from eomcompare.formulations.cache import code_digest

    pkg = tmp_path / "pkg_for_digest"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "helper.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    first = code_digest(("pkg_for_digest",))
    code_digest.cache_clear()
    (pkg / "sub" / "helper.py").write_text("X = 2\n")
    assert code_digest(("pkg_for_digest",)) != first
    code_digest.cache_clear()


# A `python -m eomcompare` process interrupted, then its six cases resumed:
# out of the quick loop (-m "not slow").
@pytest.mark.slow
def test_interrupted_cli_run_keeps_rows_and_resumes(tmp_path):
    env = dict(os.environ, EOMCOMPARE_CACHE=str(tmp_path / "cache"))
    cmd = [
        sys.executable,
        "-m",
        "eomcompare",
        *run_args(
            tmp_path / "run",
            ["double_pendulum", "n_link_pendulum"],
            ["kane", "sympy_kane", "sympy_lagrange"],
            t_final=0.3,
            extra=["--n", "2"],
        ),
    ]
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    rows = tmp_path / "run" / "rows.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if rows.exists() and rows.read_text().count("\n") >= 1:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    kept = rows.read_text().count("\n")
    assert kept >= 1
    if proc.returncode != 0:  # interrupted before the end, as intended
        assert proc.returncode == 130, err
        assert "resume" in err
    # The same command resumes (in this process: the interrupt was the
    # process's part).
    again = cli_in_process(*cmd[3:], env={"EOMCOMPARE_CACHE": env["EOMCOMPARE_CACHE"]})
    assert again.returncode == 0, again.stderr
    meta = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert meta["resumed_cases"] == kept
    frame = pd.read_csv(tmp_path / "run" / "results.csv")
    assert len(frame) == 6 and set(frame["status"]) == {"ok"}


def test_loading_beside_the_derivation_does_not_compare_along_every_path(
    tmp_path, monkeypatch
):
    """Equations loaded in the process that derived them are equal to, not
    identical with, the objects in sympy's memo.  Building the numeric model
    from them must not compare the two node by node: on the articulated-body
    recursion's shared expressions that is exponential (about 13 million
    node comparisons for a three-joint chain, seconds instead of
    milliseconds)."""
    import sympy as sm

    ms = get_system("spatial_chain", n=3)
    kane = get_formulation("kane_articulated")
    cache = DerivationCache(tmp_path)
    eom, hit = cache.derive(ms, kane)
    assert not hit
    eom.numeric()
    again, hit = DerivationCache(tmp_path).derive(ms, kane)
    assert hit and again is not eom
    calls = 0
    eq = sm.Basic.__eq__

    def counted(self, other):
        nonlocal calls
        calls += 1
        return eq(self, other)

    monkeypatch.setattr(sm.Basic, "__eq__", counted)
    model = again.numeric()
    monkeypatch.undo()
    # The build itself needs some comparisons (cse's sorting, the memo's
    # genuine hits); a walk along every path needs millions.
    assert calls < 200_000, calls
    t0, q, qd = ms.states.random_state(1)
    np.testing.assert_allclose(
        model.coordinate_accelerations(t0, q, qd),
        eom.numeric().coordinate_accelerations(t0, q, qd),
        rtol=1e-13,
    )


def test_cache_round_trip_detects_corruption_and_staleness(tmp_path):
    ms = get_system("four_bar")
    kane = get_formulation("kane")
    cache = DerivationCache(tmp_path)
    eom, hit = cache.derive(ms, kane)
    assert not hit
    # Stored whole and restored tied to the caller's (equal) declaration:
    # the extras come back, their vectors in that declaration's frames.
    other = get_system("four_bar")
    again, hit = DerivationCache(tmp_path).derive(other, kane)
    assert hit and again.system is other
    assert again.mass_matrix == eom.mass_matrix and again.forcing == eom.forcing
    assert again.op_counts == eom.op_counts and again.timings == eom.timings
    assert list(again.extras) == list(eom.extras)
    frames = connected_frames(other.frame)
    seen = 0
    for name, vectors in again.extras["partial_velocities"].items():
        for v, v0 in zip(vectors, eom.extras["partial_velocities"][name]):
            assert all(any(F is G for G in frames) for _, F in v.args)
            assert [F.name for _, F in v.args] == [F.name for _, F in v0.args]
            assert [m for m, _ in v.args] == [m for m, _ in v0.args]
            seen += len(v.args)
    assert seen
    t0, q, qd = ms.states.random_state(2)
    np.testing.assert_allclose(
        again.numeric().coordinate_accelerations(t0, q, qd),
        eom.numeric().coordinate_accelerations(t0, q, qd),
        rtol=1e-14,
    )
    # Corrupt the stored payload: detected, rebuilt, never used.
    path = next(tmp_path.rglob("*.pkl"))
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))
    rebuilt, hit = cache.derive(ms, kane)
    assert not hit and cache.rebuilt and "signature" in cache.rebuilt[-1]
    # Another declaration or formulation version has another key.
    assert cache_key(get_system("four_bar", coordinates="minimal"), kane) != cache_key(
        ms, kane
    )

    class KaneNext(type(kane)):
        version = kane.version + ".next"

    assert cache_key(ms, KaneNext()) != cache_key(ms, kane)


def test_extras_computed_on_first_read_survive_the_cache(tmp_path):
    """kane_composite defers Kane's by-products; a result from the cache
    still yields them on first read, equal to the fresh result's."""
    from eomcompare.formulations.base import LazyExtras

    kane = get_formulation("kane_composite", count_ops=False)  # reads no counts
    eom, _ = DerivationCache(tmp_path).derive(get_system("n_link_pendulum", n=2), kane)
    assert isinstance(eom.extras, LazyExtras)
    again, hit = DerivationCache(tmp_path).derive(
        get_system("n_link_pendulum", n=2), kane
    )
    assert hit and isinstance(again.extras, LazyExtras)
    assert (
        again.extras["generalized_inertia_forces"]
        == eom.extras["generalized_inertia_forces"]
    )


def test_dask_local_cluster_executor():
    # dask.distributed is a test dependency: the cluster path is always run.
    import distributed

    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as lc,
        distributed.Client(lc) as client,
    ):
        res = run(
            ["double_pendulum"],
            ["kane", "sympy_kane"],
            t_final=0.2,
            executor=client.get_executor(),
            progress=False,
            use_cache=False,
        )
    assert set(res.frame["status"]) == {"ok"}
    assert (
        res.frame.set_index("formulation").loc["sympy_kane", "qdd_max_rel_dev"] < 1e-12
    )


def test_cli_list_help_and_bad_names():
    # What the commands print and return, in this process (the entry point
    # as a process: tests/compare/test_cli_faults.py).
    out = cli_in_process("list")
    assert out.returncode == 0
    for name in ("double_pendulum", "kane", "sympy_lagrange"):
        assert name in out.stdout
    for sub in ("run", "report", "regress"):
        helped = cli_in_process(sub, "--help")
        assert helped.returncode == 0 and "usage:" in helped.stdout
    bad = cli_in_process("run", "--systems", "nope", "--quiet")
    assert bad.returncode == 2 and "valid" in bad.stderr


def test_systems_help_names_what_the_default_runs():
    """The --systems help lists the systems a run without --systems
    compares (read from the cases it expands) and the ones 'all' adds."""
    from eomcompare.compare.cli import _systems_help

    text = " ".join(_systems_help().split())
    default_part, _, all_part = text.partition("'all' adds")
    ran = {c.system for c in expand_cases()}
    listed = set(re.findall(r"[a-z][a-z0-9_]+", default_part.split("default:")[1]))
    assert ran <= listed and not (listed & set(CATALOGUE)) - ran
    added = set(re.findall(r"[a-z][a-z0-9_]+", all_part)) & set(CATALOGUE)
    assert added == set(CATALOGUE) - ran
    assert "ur5" in added and "whipple_bicycle" in added


# A run, the gate's rerun and a comparison: out of the quick loop
# (-m "not slow").
@pytest.mark.slow
def test_regress_passes_on_same_derivations_and_fails_on_changed_counts(tmp_path):
    base = tmp_path / "base"
    env = {"EOMCOMPARE_CACHE": str(tmp_path / "cache")}
    common = [
        "--systems",
        "double_pendulum",
        "--formulations",
        "kane",
        "sympy_kane",
        "--t-final",
        "0.3",
        "--jobs",
        "1",
        "--quiet",
    ]
    ran = cli_in_process("run", *common, "--no-report", "--out", base, env=env)
    assert ran.returncode == 0, ran.stderr
    ok = cli_in_process(
        "regress",
        "--baseline",
        base,
        "--ignore-times",
        "--quiet",
        "--out",
        tmp_path / "new",
        env=env,
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    frame = pd.read_csv(base / "results.csv")
    frame.loc[frame["formulation"] == "kane", "ops_cse"] += 1
    frame.to_csv(base / "results.csv", index=False)
    bad = cli_in_process(
        "regress",
        "--baseline",
        base / "results.csv",
        "--ignore-times",
        "--run",
        tmp_path / "new",
        env=env,
    )
    assert bad.returncode == 1
    assert "double_pendulum/kane: ops: ops_cse changed" in bad.stdout


def test_a_singular_case_is_an_error_row_without_numpy_warnings(tmp_path):
    # sympy's KanesMethod leaves 0/0 in the wheelbarrow at heading 0: the
    # row says so, and numpy's divide/invalid warnings do not repeat it.
    import warnings

    from eomcompare.compare.case_run import run_case
    from eomcompare.compare.cases import RunOptions

    (case,) = expand_cases(["wheelbarrow"], ["sympy_kane"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        row = run_case(case, RunOptions(t_final=0.2, cache_dir=tmp_path))["row"]
    assert row["status"] == "error" and "not finite" in row["error"]
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


def test_code_digest_reads_the_project_packages_by_their_import_names():
    # The default packages are found under the one import name: a digest of
    # nothing would key every version of the code alike.
    from eomcompare.compare.prepared import CODE_PACKAGES, declared_outside
    from eomcompare.formulations.cache import code_digest

    with pytest.raises(ModuleNotFoundError):
        code_digest(("no_such_package_for_digest",))
    code_digest.cache_clear()
    assert code_digest(CODE_PACKAGES) != code_digest(CODE_PACKAGES[:1])
    code_digest.cache_clear()
    # A catalogue system is the project's own; a user's is not.
    assert not declared_outside("double_pendulum")
