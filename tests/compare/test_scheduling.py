"""How a run spends its time: one numeric backend per system variant,
chosen by its size, and the longest cases started first."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import cli_in_process

from eomcompare.compare.case_run import LAMBDIFY_REPEATS, run_case
from eomcompare.compare.cases import COMPILE_FROM, Case, RunOptions, _longest_first
from eomcompare.numeric.compiled import CompiledBackendError, find_compiler

ROOT = Path(__file__).resolve().parents[2]


def _compiler_found() -> bool:
    try:
        find_compiler()
        return True
    except CompiledBackendError:
        return False


def test_unknown_backend_names_the_choices():
    with pytest.raises(ValueError, match=r"\['auto', 'sized', 'lambdify', 'c'\]"):
        RunOptions(backend="fortran")


def test_sized_backend_is_one_per_variant_and_agrees_with_lambdify():
    opts = RunOptions(t_final=0.05, n_states=3, use_cache=False, backend="sized")
    plain = RunOptions(t_final=0.05, n_states=3, use_cache=False, backend="lambdify")
    big = [
        run_case(Case("kolev_manipulator", (), f), opts) for f in ("kane", "lagrange")
    ]
    small = run_case(Case("double_pendulum", (), "kane"), opts)
    rows = [r["row"] for r in big]
    assert all(r["status"] == "ok" for r in rows + [small["row"]]), rows
    assert all(r["n_coordinates"] >= COMPILE_FROM for r in rows)
    # Every formulation of the variant is evaluated by the same backend.
    expected = "c" if _compiler_found() else "lambdify"
    assert [r["backend"] for r in rows] == [expected, expected]
    assert small["row"]["n_coordinates"] < COMPILE_FROM
    assert small["row"]["backend"] == "lambdify"
    # Integrated through lambdify, it is timed through lambdify (compiling
    # every small case costs the main job more than it ranks); the
    # compiled variants are timed compiled, with lambdify's beside them.
    assert small["row"]["rhs_backend"] == "lambdify"
    assert small["row"]["rhs_lambdify_us"] == small["row"]["rhs_us"]
    assert [r["rhs_backend"] for r in rows] == [expected, expected]
    assert all(r["rhs_lambdify_us"] > 0 for r in rows)
    # --backend auto, the default, compiles the small system too, lambdify's
    # time beside: every system's right-hand side is timed compiled.
    auto = RunOptions(t_final=0.05, n_states=3, use_cache=False)
    assert auto.backend == "auto"
    compiled_small = run_case(Case("double_pendulum", (), "kane"), auto)["row"]
    assert compiled_small["rhs_backend"] == expected
    assert compiled_small["backend"] == expected
    assert compiled_small["rhs_lambdify_us"] > 0
    if expected == "c":
        # The compiled time, which Findings rank, is repeated rhs_repeats
        # times; lambdify's, only shown beside it, LAMBDIFY_REPEATS times.
        assert compiled_small["rhs_us_k"] == auto.rhs_repeats == 11
        assert compiled_small["rhs_lambdify_us_k"] == LAMBDIFY_REPEATS == 3

    # The compiled q'' are lambdify's to rounding.
    ref = run_case(Case("kolev_manipulator", (), "kane"), plain)
    assert ref["row"]["backend"] == "lambdify"
    a, b = big[0]["arrays"]["qdd"], ref["arrays"]["qdd"]
    assert np.allclose(a, b, rtol=1e-10, atol=1e-10 * np.abs(b).max())


def test_longest_cases_start_first(tmp_path):
    cases = [
        Case("double_pendulum", (), "kane"),
        Case("n_link_pendulum", (("n", 2),), "kane"),
        Case("n_link_pendulum", (("n", 5),), "kane"),
        Case("four_bar", (), "kane"),
    ]
    # Without an earlier run: the larger n first, then the run's order.
    assert [c.id for c in _longest_first(cases, tmp_path, prior=None)] == [
        "n_link_pendulum[n=5]/kane",
        "n_link_pendulum[n=2]/kane",
        "double_pendulum/kane",
        "four_bar/kane",
    ]
    # With one: its seconds decide; cases it lacks come after.
    pd.DataFrame(
        {
            "case": ["four_bar/kane", "double_pendulum/kane"],
            "derive_s": [3.0, 0.5],
            "codegen_s": [0.1, 0.1],
            "integrate_s": [1.0, 9.0],
        }
    ).to_csv(tmp_path / "results.csv", index=False)
    assert [c.id for c in _longest_first(cases, tmp_path)] == [
        "double_pendulum/kane",
        "four_bar/kane",
        "n_link_pendulum[n=5]/kane",
        "n_link_pendulum[n=2]/kane",
    ]


def test_a_worker_starts_the_next_case_before_the_last_result_is_saved(
    tmp_path, monkeypatch
):
    """A case that has sent its result gives its worker to the next case
    at once: the next case is forked before the result is read and saved
    (and before its process has exited), so no worker waits on that."""
    import eomcompare.compare.runner as runner
    from eomcompare.compare import run

    events = []

    class Logged(runner.Child):
        def __init__(self, fn, case, *args, **kwargs):
            events.append(("start", case.formulation))
            super().__init__(fn, case, *args, **kwargs)

    real_save = runner._save_case

    def save(out, row, arrays):
        events.append(("save", row["formulation"]))
        real_save(out, row, arrays)

    monkeypatch.setattr(runner, "Child", Logged)
    monkeypatch.setattr(runner, "_save_case", save)
    res = run(
        ["double_pendulum"],
        ["kane", "lagrange", "gibbs_appell"],
        t_final=0.05,
        jobs=1,
        progress=False,
        out=tmp_path,
        use_cache=False,
        backend="lambdify",
    )
    assert set(res.frame["status"]) == {"ok"}
    order = [f for _, f in events if _ == "start"]
    assert len(order) == 3
    assert events == [
        ("start", order[0]),
        ("start", order[1]),
        ("save", order[0]),
        ("start", order[2]),
        ("save", order[1]),
        ("save", order[2]),
    ]


def test_a_case_derives_with_its_heap_as_it_is_and_solves_it_frozen(monkeypatch):
    """A case's derivations are timed with the heap its process holds, as
    a derivation runs anywhere; the collections of the rest (its counts,
    code generation, solves) leave that heap alone; the case's process
    gets it back at the end."""
    import gc

    import eomcompare.compare.case_run as case_run
    from eomcompare.formulations.base import Formulation

    seen = {"derive": [], "solve": [], "counts": []}
    real_derive, real_integrate = Formulation.derive, case_run.integrate
    real_counts = Formulation._counts

    def derive(self, *args, **kwargs):
        seen["derive"].append(gc.get_freeze_count())
        return real_derive(self, *args, **kwargs)

    def counts(*args, **kwargs):
        seen["counts"].append(gc.get_freeze_count())
        return real_counts(*args, **kwargs)

    def integrate(*args, **kwargs):
        seen["solve"].append(gc.get_freeze_count())
        return real_integrate(*args, **kwargs)

    monkeypatch.setattr(Formulation, "derive", derive)
    monkeypatch.setattr(Formulation, "_counts", staticmethod(counts))
    monkeypatch.setattr(case_run, "integrate", integrate)
    opts = RunOptions(t_final=0.05, n_states=2, use_cache=False, backend="lambdify")
    row = run_case(Case("double_pendulum", (), "kane"), opts)["row"]
    assert row["status"] == "ok" and row["derive_s_k"] == len(seen["derive"]) > 1
    assert set(seen["derive"]) == {0}
    assert len(seen["counts"]) == 1 and seen["counts"][0] > 0
    assert seen["solve"] and min(seen["solve"]) > 0
    assert gc.get_freeze_count() == 0


def test_first_run_is_ordered_by_a_prior_run(tmp_path):
    # A new output directory: the prior run's seconds decide, a time-out
    # counting as its time limit.
    cases = [
        Case("double_pendulum", (), "kane"),
        Case("four_bar", (), "sympy_lagrange"),
        Case("n_link_pendulum", (("n", 5),), "kane"),
    ]
    prior = tmp_path / "prior"
    prior.mkdir()
    pd.DataFrame(
        {
            "case": ["double_pendulum/kane", "four_bar/sympy_lagrange"],
            "status": ["ok", "timeout"],
            "derive_s": [2.0, None],
            "codegen_s": [0.1, None],
            "integrate_s": [0.5, None],
            "timeout_s": [None, 60.0],
        }
    ).to_csv(prior / "results.csv", index=False)
    new = tmp_path / "new"
    new.mkdir()
    assert [c.id for c in _longest_first(cases, new, prior=prior)] == [
        "four_bar/sympy_lagrange",
        "double_pendulum/kane",
        "n_link_pendulum[n=5]/kane",
    ]
    # An earlier run in the output directory itself: its seconds replace the
    # prior's for the cases it holds; the prior still orders the others,
    # which are what a run stopped half-way has left to do.
    pd.DataFrame({"case": ["four_bar/sympy_lagrange"], "derive_s": [0.1]}).to_csv(
        new / "results.csv", index=False
    )
    assert [c.id for c in _longest_first(cases, new, prior=prior)] == [
        "double_pendulum/kane",
        "four_bar/sympy_lagrange",
        "n_link_pendulum[n=5]/kane",
    ]
    left = [c for c in cases if c.id != "four_bar/sympy_lagrange"]
    assert [c.id for c in _longest_first(left, new, prior=prior)] == [
        "double_pendulum/kane",
        "n_link_pendulum[n=5]/kane",
    ]


def test_a_first_run_reads_no_results_but_its_own(tmp_path, monkeypatch):
    # A run into a new directory is ordered by the sizes alone: it reads
    # the results of its own directory and of no other (the repository's
    # reports/ included, where a checkout has them).
    from eomcompare.compare import cases as case_module

    read = []
    expected_seconds = case_module._expected_seconds
    monkeypatch.setattr(
        case_module,
        "_expected_seconds",
        lambda path: read.append(Path(path)) or expected_seconds(path),
    )
    cases = [
        Case("double_pendulum", (), "kane"),
        Case("n_link_pendulum", (("n", 2),), "kane"),
        Case("n_link_pendulum", (("n", 5),), "kane"),
    ]
    assert [c.id for c in _longest_first(cases, tmp_path)] == [
        "n_link_pendulum[n=5]/kane",
        "n_link_pendulum[n=2]/kane",
        "double_pendulum/kane",
    ]
    assert read == [tmp_path]


def test_the_variant_is_prepared_whole_before_its_cases_fork():
    """The run's process builds what every case of a variant evaluates: its
    states and, for a system conserving energy, the energy function the
    cases evaluate along their trajectories (inherited by each fork instead
    of lambdified again)."""
    from eomcompare.compare.case_run import prepare_variant
    from eomcompare.compare.prepared import PREPARED

    opts = RunOptions(n_states=2, use_cache=False)
    case = Case("double_pendulum", (), "kane")
    PREPARED.clear()
    ms, states, _, _ = prepare_variant(case, opts)
    assert ms.energy_conserved and len(states) == 2
    assert "_energy_function" in vars(ms.states)
    assert prepare_variant(Case("double_pendulum", (), "lagrange"), opts)[0] is ms
    # The function prepared gives the declaration's energy: T at the
    # run's first random state as sympy's own bodies compute it from their
    # velocities.
    t0, q, qd = states[0]
    T, _ = ms.states.energy(t0, q, qd)
    u = ms.states.speeds_from_rates(t0, q, qd)
    sub = dict(ms.parameters) | dict(zip(ms.speeds, u)) | dict(zip(ms.coordinates, q))
    expected = sum(b.kinetic_energy(ms.frame) for b in ms.bodies)
    assert T > 0
    assert T == pytest.approx(float(expected.xreplace(sub)), rel=1e-12)


def test_a_constrained_variant_is_prepared_with_its_projection(monkeypatch):
    """The run's process builds the constraint functions with which every
    case of a constrained variant projects its states: a case projects
    without lambdifying anything."""
    import sympy

    from eomcompare.compare.case_run import prepare_variant
    from eomcompare.compare.prepared import PREPARED
    from eomcompare.compare.user_systems import build_system
    from eomcompare.numeric.integrate import project_state

    opts = RunOptions(n_states=2, use_cache=False)
    options = (("coordinates", "redundant"),)
    PREPARED.clear()
    ms, states, _, _ = prepare_variant(Case("four_bar", options, "kane"), opts)
    fresh = build_system("four_bar", options)
    t0, q, qd = states[1]
    drifted = np.asarray(q) + 1e-4

    def refused(*args, **kwargs):
        raise AssertionError("lambdified in the case")

    monkeypatch.setattr(sympy, "lambdify", refused)
    q2, _ = project_state(ms, t0, drifted, qd)
    assert np.max(np.abs(ms.states.holonomic_residual(t0, q2))) < 1e-10
    # The same declaration built anew has no functions yet.
    with pytest.raises(AssertionError, match="lambdified in the case"):
        project_state(fresh, t0, drifted, qd)


_CASE_IMPORTS = """
import sys
from eomcompare.compare.case_run import (
    _import_what_cases_use, _prepare_quietly, run_case,
)
from eomcompare.compare.cases import Case, RunOptions
opts = RunOptions(use_cache=True)
_import_what_cases_use(opts)
case = Case("double_pendulum", (), "kane")
_prepare_quietly(case, opts)
before = set(sys.modules)
row = run_case(case, opts)["row"]
assert row["status"] == "ok", row
print(" ".join(sorted(set(sys.modules) - before)))
"""


def test_a_forked_case_imports_nothing(tmp_path):
    """What a case imports on first use is imported by the run's process
    before it forks the cases (each fork would import it again)."""
    env = os.environ | {
        "EOMCOMPARE_CACHE": str(tmp_path / "cache"),
        "EOMCOMPARE_KEY": str(tmp_path / "key"),
    }
    res = subprocess.run(
        [sys.executable, "-c", _CASE_IMPORTS],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.split() == []


def test_published_checks_read_the_prepared_variant(monkeypatch):
    """The report evaluates the published equations at the run's own
    states, from the declaration the run prepared: nothing is built or
    solved again, and the equations hold with the run's accelerations."""
    from eomcompare import systems
    from eomcompare.compare.case_run import prepare_variant
    from eomcompare.compare.equations_section import published_checks
    from eomcompare.compare.prepared import PREPARED
    from eomcompare.formulations import get_formulation

    opts = RunOptions(n_states=3, use_cache=False)
    PREPARED.clear()
    ms, states, _, _ = prepare_variant(Case("rotating_tube", (), "kane"), opts)
    model = (
        get_formulation("kane", count_ops=False).derive(ms).numeric(backend="lambdify")
    )
    qdd = np.array([model.coordinate_accelerations(*s) for s in states])

    def no_build(*args, **kwargs):
        raise AssertionError("the prepared declaration was built again")

    monkeypatch.setattr(systems, "get_system", no_build)
    checks = published_checks("rotating_tube", {}, {"kane": qdd}, 3)
    assert [c.equation.number for c in checks] == ["(2-38)", "(2-39)"]
    for c in checks:
        _, holds = c.residuals["kane"]
        assert holds < 1e-10, (c.equation.number, holds)
    # Accelerations of other states do not satisfy them: the check reads
    # the prepared states, in the run's order.
    checks = published_checks("rotating_tube", {}, {"kane": qdd[::-1]}, 3)
    assert max(c.residuals["kane"][1] for c in checks) > 1e-6


# ----------------------------------------------------------------------
# A dask scheduler lost mid-run
# ----------------------------------------------------------------------
def _start(*args, log):
    """A process of this Python, importing this checkout, in a session of
    its own (killed as a group)."""
    return subprocess.Popen(
        [sys.executable, *args],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"waited {seconds} s for {what}")


@pytest.mark.slow
def test_a_scheduler_lost_mid_run_is_one_line_and_its_cases_are_not_run(tmp_path):
    # A real scheduler and worker on the loopback interface; the scheduler
    # is killed once the first case is saved, with five still to run.
    address_file = tmp_path / "scheduler.json"
    log = open(tmp_path / "cluster.log", "w")
    scheduler = _start(
        "-m",
        "distributed.cli.dask_scheduler",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--no-dashboard",
        "--scheduler-file",
        str(address_file),
        log=log,
    )
    worker = None
    try:
        _wait_for(address_file.exists, 120, "the scheduler")
        _wait_for(lambda: address_file.read_text().strip(), 10, "its address")
        address = json.loads(address_file.read_text())["address"]
        worker = _start(
            "-m",
            "distributed.cli.dask_worker",
            address,
            "--nworkers",
            "1",
            "--nthreads",
            "1",
            # One process, not a nanny starting the worker: the scheduler
            # is what is lost.
            "--no-nanny",
            "--host",
            "127.0.0.1",
            "--no-dashboard",
            log=log,
        )
        out = tmp_path / "run"
        args = [
            "run",
            "--systems",
            "double_pendulum",
            "rotating_tube",
            "solar_panels",
            "--formulations",
            "kane",
            "sympy_kane",
            "--t-final",
            "0.3",
            "--quiet",
            "--no-report",
            "--out",
            str(out),
        ]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.Popen(
            [sys.executable, "-m", "eomcompare", *args, "--scheduler", address],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        rows = out / "rows.jsonl"
        try:
            _wait_for(lambda: rows.exists() and rows.read_text(), 300, "a first row")
            os.killpg(scheduler.pid, signal.SIGKILL)
            stdout, err = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
    finally:
        for p in (worker, scheduler):
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        log.close()
    assert proc.returncode == 3, stdout + err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err  # no tracebacks of the client's reconnections
    assert address in lines[0] and "not run" in lines[0]
    saved = [json.loads(x) for x in rows.read_text().splitlines()]
    assert 1 <= len(saved) < 6 and {r["status"] for r in saved} == {"ok"}
    assert f"{6 - len(saved)} case(s) not run" in lines[0]
    assert "crashed" not in stdout + err
    # Without the cluster, the same command runs the cases not run (in
    # this process: the lost scheduler was the process's part).
    again = cli_in_process(*args)
    assert again.returncode == 0, again.stdout + again.stderr
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["resumed_cases"] == len(saved)
    assert len(pd.read_csv(out / "results.csv")) == 6
