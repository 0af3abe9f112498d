"""The command line as a user drives it: resume, exit codes, signals to the
main process, bad options, cache repairs and faults during a run.

Every test runs ``python -m eomcompare`` on the smallest catalogue systems
with short horizons: in a subprocess where the test is about the process
(a signal to it, a worker of it killed, a limit on the files it writes,
how long it takes to give up on a scheduler), else in this process
(:func:`helpers.cli_in_process`: the same entry point and exit status,
without an interpreter started for each command).
"""

from __future__ import annotations

import contextlib
import errno
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
from helpers import cli_in_process, file_size_limit, run_args

# Every test but those of the usage errors refused before computing runs
# the command line on cases (and waits on its workers, signals and
# timeouts): those are out of the quick loop (-m "not slow"), marked
# slow one by one; CI runs them.
slow = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--systems", "double_pendulum", "--formulations", "kane", "sympy_kane"]
#: Cases that must still be running when a test acts on them are solved by
#: solve_ivp's DOP853 (its steps in Python, tens of times slower than the
#: default compiled loop), whose durations these tests were tuned to.
SOLVE_IVP = ["--method", "DOP853"]


_SHARED: dict = {}


@pytest.fixture(scope="module", autouse=True)
def _shared_cache(tmp_path_factory):
    """One derivation cache for the module's runs: the same few equations
    are derived once, not once per test (the cache is keyed by content, so
    sharing it changes no result).  A test about the cache itself passes
    its own."""
    _SHARED["cache"] = tmp_path_factory.mktemp("cache")
    yield
    _SHARED.clear()


def _env(cache=None):
    return dict(
        os.environ,
        EOMCOMPARE_CACHE=str(cache or _SHARED["cache"]),
        PYTHONPATH=str(ROOT),
    )


def cli(tmp_path, *args, cache=None):
    """``python -m eomcompare ARGS`` in this process, with the module's
    derivation cache (or ``cache``)."""
    return cli_in_process(*args, env={"EOMCOMPARE_CACHE": cache or _SHARED["cache"]})


def cli_process(tmp_path, *args, timeout=300, cache=None):
    """``python -m eomcompare ARGS`` in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "eomcompare", *map(str, args)],
        cwd=ROOT,
        env=_env(cache),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def popen(tmp_path, *args):
    return subprocess.Popen(
        [sys.executable, "-m", "eomcompare", *map(str, args)],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def rows_of(out: Path) -> list[dict]:
    path = out / "rows.jsonl"
    return (
        [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
    )


def _case_workers(pid: int) -> list[int]:
    """:func:`children_of` ``pid`` that have not exited: a case that has
    sent its result and ended waits, a zombie, until the run reaps it after
    forking the next one, and killing it crashes nothing."""

    def running(child: int) -> bool:
        try:
            with open(f"/proc/{child}/stat") as fh:
                return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
        except (FileNotFoundError, IndexError):
            return False

    return [p for p in children_of(pid) if running(p)]


def children_of(pid: int) -> list[int]:
    """The run's case workers: the children forked from it, which carry its
    command name; a compiler the run starts itself (its probe of the
    processor's flags, before the cases fork) is not one."""
    out = subprocess.run(
        ["ps", "-o", "pid=,comm=", "--ppid", str(pid)], capture_output=True, text=True
    ).stdout
    try:
        with open(f"/proc/{pid}/comm") as fh:
            name = fh.read().strip()
    except FileNotFoundError:
        return []
    rows = [line.split(None, 1) for line in out.splitlines() if line.strip()]
    return [int(p) for p, *comm in rows if comm and comm[0].strip() == name]


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"waited {seconds} s for {what}")


def one_line_error(res):
    lines = res.stderr.strip().splitlines()
    assert "Traceback" not in res.stderr, res.stderr
    assert len(lines) == 1, res.stderr
    return lines[0]


# ----------------------------------------------------------------------
# Resume
# ----------------------------------------------------------------------
@slow
def test_resume_never_pairs_a_row_with_another_runs_trajectory(tmp_path):
    out = tmp_path / "run"
    common = [*SMALL, "--jobs", "1", "--quiet", "--no-report", "--out", out]
    assert cli(tmp_path, *common, "--t-final", "0.4").returncode == 0
    # Another horizon into the same directory, one formulation only: it
    # must not replace the trajectory the first run's rows stand on.
    other = cli(
        tmp_path,
        *run_args(out, ["double_pendulum"], t_final=0.2),
    )
    assert other.returncode == 0, other.stderr
    again = cli(tmp_path, *common, "--t-final", "0.4")
    assert again.returncode == 0, again.stderr
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["resumed_cases"] == 2
    frame = pd.read_csv(out / "results.csv").set_index("formulation")
    # Both resumed rows stand on 0.4 s trajectories, which agree.
    assert frame.loc["sympy_kane", "max_rel_dev_q"] < 1e-8
    assert frame.loc["sympy_kane", "agreement_horizon"] == pytest.approx(0.4)
    for form in ("kane", "sympy_kane"):
        with np.load(out / frame.loc[form, "arrays"]) as data:
            assert data["t"][-1] == pytest.approx(0.4)


# ----------------------------------------------------------------------
# Exit status
# ----------------------------------------------------------------------
@slow
def test_an_own_formulation_timing_out_fails_the_run(tmp_path):
    # A thousand seconds of the chaotic double pendulum at 1e-10 stepped
    # by solve_ivp's Python take far longer than the one second allowed
    # (the compiled loop, the default, takes a twentieth of a second).
    res = cli(
        tmp_path,
        "run",
        "--systems",
        "double_pendulum",
        "--formulations",
        "kane",
        *SOLVE_IVP,
        "--t-final",
        "1000",
        "--timeout",
        "1",
        "--jobs",
        "1",
        "--quiet",
        "--no-report",
        "--out",
        tmp_path / "run",
    )
    assert res.returncode == 1, res.stdout + res.stderr
    assert "double_pendulum/kane: timeout" in res.stdout
    (row,) = rows_of(tmp_path / "run")
    assert row["status"] == "timeout"


@slow
def test_a_peers_non_finite_equations_are_listed_but_do_not_fail(tmp_path):
    # sympy's KanesMethod leaves 0/0 in the wheelbarrow at heading 0.
    res = cli(
        tmp_path,
        "run",
        "--systems",
        "wheelbarrow",
        "--formulations",
        "kane",
        "sympy_kane",
        "--t-final",
        "0.1",
        "--jobs",
        "2",
        "--quiet",
        "--no-report",
        "--out",
        tmp_path / "run",
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "not failures" in res.stdout
    assert "wheelbarrow/sympy_kane: error" in res.stdout
    frame = pd.read_csv(tmp_path / "run" / "results.csv").set_index("formulation")
    assert frame.loc["kane", "status"] == "ok"


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--method", "Foo"], "method must be one of"),
        (["--formulations", "Foo"], "unknown formulations ['Foo']"),
        (
            ["--formulations", "kane:forward=articulated_body"],
            "kane has no option 'forward'; its options: count_ops",
        ),
        (
            ["--formulations", "modified_lagrange:dependent=bogus"],
            "`dependent` must be one of",
        ),
        (["--formulations", "kane:forward"], "options are written NAME:KEY=VALUE"),
        (["--timeout", "-5"], "timeout must be a positive number"),
        (["--rtol", "-1"], "rtol must be a positive number"),
        (["--jobs", "0"], "--jobs must be a positive integer"),
        (
            ["--formulations", "lagrange:baumgarte=(1e999,1.0)"],
            "gains must be finite and non-negative",
        ),
        (
            ["--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "-1"],
            "--connect-timeout must be a positive number of seconds, not -1.0",
        ),
        (
            ["--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "nan"],
            "--connect-timeout must be a positive number of seconds, not nan",
        ),
    ],
)
def test_bad_options_are_refused_up_front_in_one_line(tmp_path, args, needle):
    out = tmp_path / "run"
    res = cli(
        tmp_path, "run", "--systems", "double_pendulum", *args, "--quiet", "--out", out
    )
    assert res.returncode == 2
    assert needle in one_line_error(res)
    assert not (out / "rows.jsonl").exists()


def test_an_output_that_cannot_be_written_is_refused_before_computing(tmp_path):
    # Outputs no user, root included, can create: a file, a directory
    # under a file, a name longer than the file system takes.  "Before
    # computing" is observed, not timed: a cache of its own receives no
    # entry, so nothing was derived.
    afile = tmp_path / "afile"
    afile.write_text("x")
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    for out, needle in (
        (afile, "is a file"),
        (afile / "run", "cannot be written"),
        (tmp_path / ("x" * 300) / "run", "cannot be written"),
    ):
        res = cli(tmp_path, "run", *SMALL, "--quiet", "--out", out, cache=cache)
        assert res.returncode == 2, res.stderr
        assert needle in one_line_error(res)
        # (its empty directories may be made; no entry is written)
        written = [p for p in cache.rglob("*") if p.is_file()]
        assert not written, written


@slow
def test_an_unreachable_scheduler_fails_within_seconds(tmp_path):
    start = time.monotonic()
    res = cli_process(
        tmp_path,
        "run",
        *SMALL,
        "--quiet",
        "--scheduler",
        "tcp://127.0.0.1:9",
        "--connect-timeout",
        "2",
        "--out",
        tmp_path / "run",
    )
    assert time.monotonic() - start < 30
    assert res.returncode == 2
    assert "tcp://127.0.0.1:9" in one_line_error(res)
    assert not (tmp_path / "run" / "rows.jsonl").exists()


# ----------------------------------------------------------------------
# Signals to the main process alone
# ----------------------------------------------------------------------
@slow
@pytest.mark.parametrize("sig, rc", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_to_the_main_process_stops_it_and_its_workers(tmp_path, sig, rc):
    out = tmp_path / "run"
    proc = popen(
        tmp_path,
        "run",
        *SMALL,
        *SOLVE_IVP,
        "--t-final",
        "1000",
        "--jobs",
        "2",
        "--quiet",
        "--no-report",
        "--out",
        out,
    )
    try:
        wait_for(lambda: len(_case_workers(proc.pid)) == 2, 120, "two workers")
        workers = children_of(proc.pid)
        time.sleep(0.5)
        sent = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        # Stopped, not waited out: a thousand seconds of the chaotic
        # pendulum take many minutes, so no case finished.  The bound on
        # the wall time leaves room for a machine loaded by other jobs
        # (stopping takes well under a second on a quiet one).
        assert time.monotonic() - sent < 30
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == rc, err
    assert "resume" in err and "Traceback" not in err
    assert rows_of(out) == []
    wait_for(lambda: not any(alive(w) for w in workers), 10, "the workers to end")


@slow
def test_cases_finished_in_workers_when_the_signal_comes_are_kept(tmp_path):
    out = tmp_path / "run"
    args = [
        "run",
        *SMALL,
        "--t-final",
        "0.3",
        "--jobs",
        "2",
        "--quiet",
        "--no-report",
        "--out",
        out,
    ]
    assert cli(tmp_path, *args, "--fresh").returncode == 0  # warm the cache
    proc = popen(tmp_path, *args, "--fresh")
    try:
        wait_for(lambda: len(children_of(proc.pid)) == 2, 120, "two workers")
        workers = children_of(proc.pid)
        # The main process sleeps while both workers finish their cases.
        proc.send_signal(signal.SIGSTOP)
        wait_for(
            lambda: not any(alive(w) for w in workers), 120, "the workers to finish"
        )
        proc.send_signal(signal.SIGTERM)
        proc.send_signal(signal.SIGCONT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode in (0, 143), err
    assert sorted(r["formulation"] for r in rows_of(out)) == ["kane", "sympy_kane"]
    again = cli(tmp_path, *args)
    assert again.returncode == 0, again.stderr
    assert json.loads((out / "metadata.json").read_text())["resumed_cases"] == 2


# ----------------------------------------------------------------------
# Cache repairs
# ----------------------------------------------------------------------
@slow
def test_a_cache_repair_is_reported_and_counted(tmp_path):
    args = run_args(
        tmp_path / "run", ["double_pendulum"], t_final=0.1, extra=("--fresh",)
    )
    cache = tmp_path / "cache"
    first = cli(tmp_path, *args, cache=cache)
    assert first.returncode == 0 and "cache:" not in first.stderr
    (entry,) = cache.rglob("*.pkl")
    data = bytearray(entry.read_bytes())
    data[-10] ^= 0xFF
    entry.write_bytes(bytes(data))
    second = cli(tmp_path, *args, cache=cache)
    assert second.returncode == 0, second.stderr
    lines = [x for x in second.stderr.splitlines() if x.startswith("cache:")]
    assert len(lines) == 1
    assert entry.name in lines[0] and "signature" in lines[0]
    meta = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert meta["cache_repairs"] == 1
    third = cli(tmp_path, *args, cache=cache)
    assert "cache:" not in third.stderr
    assert (
        json.loads((tmp_path / "run" / "metadata.json").read_text())["cache_repairs"]
        == 0
    )


# ----------------------------------------------------------------------
# Faults during a whole run
# ----------------------------------------------------------------------
def _assert_unique_complete(out: Path, n: int):
    frame = pd.read_csv(out / "results.csv")
    assert len(frame) == n and frame["case"].is_unique
    assert set(frame["status"]) == {"ok"}


@slow
def test_a_worker_killed_mid_case_is_a_row_and_runs_again(tmp_path):
    out = tmp_path / "run"
    # Cases of about a second (300 s of the double pendulum stepped by
    # solve_ivp; the derivations and libraries are in the session's cache
    # already), so that the worker seen is still running its case when it
    # is killed.
    args = run_args(
        out, ["double_pendulum", "rotating_tube"], t_final=300, extra=SOLVE_IVP
    )
    proc = popen(tmp_path, *args)
    workers = []
    wait_for(
        lambda: workers.extend(_case_workers(proc.pid)) or workers, 120, "a worker"
    )
    # One case runs at a time (--jobs 1), but the run forks the next case
    # as soon as the last one has sent its result, before reaping it: the
    # children seen may be a finished case and a running one.  Killing
    # both crashes the running case alone.
    for pid in {*workers, *children_of(proc.pid)}:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    stdout, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, stdout + err
    assert "crashed" in stdout and "SIGKILL" in stdout
    statuses = sorted(r["status"] for r in rows_of(out))
    assert statuses == ["crashed", "ok"]
    again = cli(tmp_path, *args)
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads((out / "metadata.json").read_text())["resumed_cases"] == 1
    _assert_unique_complete(out, 2)


@slow
def test_a_cut_last_line_of_rows_is_dropped_and_its_case_runs_again(tmp_path):
    out = tmp_path / "run"
    args = run_args(out, ["double_pendulum", "rotating_tube"], t_final=0.2)
    assert cli(tmp_path, *args).returncode == 0
    path = out / "rows.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0] + lines[1][: len(lines[1]) // 2])  # no newline
    again = cli(tmp_path, *args)
    assert again.returncode == 0, again.stderr
    assert "dropped 1 unreadable line" in again.stderr
    assert json.loads((out / "metadata.json").read_text())["resumed_cases"] == 1
    rows = rows_of(out)  # every line parses, one per case
    assert sorted(r["case"] for r in rows) == sorted({r["case"] for r in rows})
    _assert_unique_complete(out, 2)


@slow
def test_a_full_disk_stops_the_run_clearly_and_resume_completes_it(tmp_path):
    out = tmp_path / "run"
    first = run_args(out, ["double_pendulum"], t_final=0.3)
    assert cli(tmp_path, *first).returncode == 0
    kept = rows_of(out)
    # The disk fills before the next case's trajectory (about 10 kB) is
    # saved: a file-size limit, inherited by the workers, makes every
    # write beyond 4 kB fail as a full disk does.
    args = run_args(out, ["double_pendulum", "rotating_tube"], t_final=0.3)
    proc = subprocess.run(
        [sys.executable, "-m", "eomcompare", *map(str, args)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=file_size_limit(4096),
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    # The run says what it took from the earlier one, warns that the
    # compiled cache cannot be written (it compiles uncached), and fails in
    # one line naming the full disk.
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("resumed 1 of 2 cases"), proc.stderr
    assert all("CacheWarning" in x or x.startswith("  ") for x in lines[1:-1]), (
        proc.stderr
    )
    err = lines[-1]
    assert err.startswith("error: cannot save case") and "resume" in err
    assert os.strerror(errno.EFBIG) in err or "disk full" in err, err
    assert rows_of(out) == kept
    assert not [p for p in out.rglob("*") if ".tmp" in p.name]
    again = cli(tmp_path, *args)
    assert again.returncode == 0, again.stderr
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["resumed_cases"] == len(kept) == 1
    _assert_unique_complete(out, 2)


@slow
def test_fresh_removes_only_the_trajectories_of_its_own_cases(tmp_path):
    out = tmp_path / "run"
    assert (
        cli(tmp_path, *run_args(out, ["double_pendulum"], t_final=0.2)).returncode == 0
    )
    tdir = out / "trajectories"
    older = sorted(tdir.glob("*.npz"))
    assert [p.name.split(".")[0] for p in older] == ["double_pendulum_kane"]
    (tdir / "notes.npz").write_bytes(b"a user's own file")
    res = cli(
        tmp_path,
        *run_args(out, ["double_pendulum"], t_final=0.3, extra=("--fresh",)),
    )
    assert res.returncode == 0, res.stderr
    assert (tdir / "notes.npz").read_bytes() == b"a user's own file"
    now = sorted(p for p in tdir.glob("*.npz") if p.name != "notes.npz")
    # The case's trajectory of the earlier options is gone, its new one there.
    assert len(now) == 1 and now[0] not in older
    assert [r["arrays"] for r in rows_of(out)] == [f"trajectories/{now[0].name}"]


@slow
def test_formulations_with_options_are_compared_as_formulations_of_their_own(
    tmp_path,
):
    # The articulated-body recursion (a formulation the default run leaves
    # out, named here) and Lagrange's with Baumgarte's stabilization beside
    # kane: each its own row, the options applied (other operation counts),
    # the accelerations the same; where a method does not apply, the row
    # says why.
    out = tmp_path / "run"
    forms = ["kane", "kane_articulated", "lagrange:baumgarte=(5.0,5.0)"]
    res = cli(
        tmp_path,
        "--systems",
        "spatial_chain",
        "double_pendulum",
        "--n",
        "2",
        "--formulations",
        *forms,
        "--jobs",
        "1",
        "--quiet",
        "--no-report",
        "--out",
        out,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    frame = pd.read_csv(out / "results.csv")
    chain = frame[frame["system"] == "spatial_chain"].set_index("formulation")
    assert sorted(chain.index) == sorted(forms)
    assert (chain["status"] == "ok").all()
    assert chain["qdd_max_rel_dev"].max() < 1e-10
    assert chain.loc["kane_articulated", "ops_cse"] != chain.loc["kane", "ops_cse"]
    loop = frame[frame["system"] == "double_pendulum"].set_index("formulation")
    refused = loop.loc["kane_articulated"]
    assert refused["status"] == "unsupported"
    assert "needs a tree of one-coordinate joints" in refused["error"]
    assert loop.loc["lagrange:baumgarte=(5.0,5.0)", "status"] == "ok"
