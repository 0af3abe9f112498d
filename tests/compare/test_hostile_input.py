"""The harness under hostile input (issue #26): files planted in shared
directories, malicious URDF files, injected markup, concurrent runs and
signals.  Each case drives the command line as a user would."""

from __future__ import annotations

import errno
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from helpers import cli_in_process, run_args

ROOT = Path(__file__).resolve().parents[2]


def env_for(tmp_path) -> dict:
    """The environment of a run whose caches and key are in ``tmp_path``."""
    return dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        EOMCOMPARE_CACHE=str(tmp_path / "cache"),
        EOMCOMPARE_KEY=str(tmp_path / "key" / "cache.key"),
        MPLBACKEND="Agg",
    )


def cli(tmp_path, *args):
    """``python -m eomcompare ARGS`` with the caches and key of
    ``tmp_path``, in this process (:func:`helpers.cli_in_process`); the
    tests about the process itself (its signals, a compiler or
    a file it must not block on, two runs at once) start one."""
    env = env_for(tmp_path)
    return cli_in_process(
        *args,
        env={k: env[k] for k in ("EOMCOMPARE_CACHE", "EOMCOMPARE_KEY", "MPLBACKEND")},
    )


def read_rows(out: Path) -> list[dict]:
    return [json.loads(ln) for ln in (out / "rows.jsonl").read_text().splitlines()]


# ----------------------------------------------------------------------
# Equations kept beside the trajectories are signed; a planted pickle is
# never unpickled
# ----------------------------------------------------------------------
class _Plant:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "ran"))


@pytest.mark.slow  # a run and its report
def test_a_planted_equations_pickle_in_the_output_is_not_run(tmp_path):
    import pandas as pd

    from eomcompare.compare.sections import SectionTable, save_sections

    out = tmp_path / "out"
    proc = cli(tmp_path, *run_args(out, ["double_pendulum"], t_final=0.1))
    assert proc.returncode == 0, proc.stderr
    # Kolev's table kept beside the run, as a run with its report keeps it:
    # the report command derives nothing of its own (half a minute), and
    # reads the run's equations as before.
    kolev = pd.DataFrame({"system": ["four_bar"], "variant": ["modified"]})
    save_sections(out, {"kolev": SectionTable(kolev, "from a stand-in")})
    (row,) = read_rows(out)
    npz = out / row["arrays"]
    with np.load(npz) as data:
        arrays = {k: data[k] for k in data.files}
    marker = tmp_path / "marker"
    # Someone else with write access to the directory replaces the
    # equations by a pickle that runs code when loaded.
    planted = pickle.dumps({"formulation": _Plant(marker)})
    arrays["equations"] = np.frombuffer(planted, dtype=np.uint8)
    np.savez_compressed(npz, **arrays)
    with zipfile.ZipFile(npz) as z:  # the planted file is where it was
        assert "equations.npy" in z.namelist()
    proc = cli(tmp_path, "report", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    line = f"note: equations of {row['arrays']}: not signed with this user's key"
    assert line in proc.stderr
    page = (out / "report.html").read_text()
    assert "Equations not shown, their files not signed" in page


# ----------------------------------------------------------------------
# A compiled cache nothing can be written in: the C cases still run
# ----------------------------------------------------------------------
def unwritable_cache(base: Path) -> Path:
    """A cache root whose ``compiled`` directory exists, is private and
    passes every check, but in which no file can be created, for root too:
    its path is so long that a file's path in a build directory below it
    passes the system's limit (ENAMETOOLONG, as ENOSPC on a full disk)."""
    limit = os.pathconf("/", "PC_PATH_MAX")
    root = str(base)
    while len(root) + len("/compiled") < limit - 30 - 255:
        root += "/" + "c" * 250
    root += "/" + "c" * (limit - 30 - len(root) - len("/compiled") - 1)
    os.makedirs(root + "/compiled", mode=0o700)
    return Path(root)


@pytest.mark.slow  # compiles the C backend: over ten seconds
def test_the_c_cases_run_uncached_when_the_compiled_cache_cannot_be_written(
    tmp_path,
):
    root = unwritable_cache(tmp_path / "cache")
    out = tmp_path / "out"
    env = dict(env_for(tmp_path), EOMCOMPARE_CACHE=str(root))
    args = run_args(out, ["double_pendulum"], t_final=0.1, extra=["--backend", "c"])
    proc = subprocess.run(
        [sys.executable, "-m", "eomcompare", *args, "--no-cache"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (row,) = read_rows(out)
    assert row["status"] == "ok", row["error"]
    assert row["backend"] == "c"
    note = f"compiled cache {root / 'compiled'} cannot be written ("
    assert note in proc.stderr
    assert proc.stderr.count(note) == 1
    assert not any((root / "compiled").iterdir())


# ----------------------------------------------------------------------
# The regression gate reruns a scalable system's variant whole
# ----------------------------------------------------------------------
@pytest.mark.slow  # a run and its rerun
def test_a_baseline_of_a_scalable_system_with_an_option_regresses_clean(tmp_path):
    base, new = tmp_path / "base", tmp_path / "new"
    option = ["--system-option", "n_link_pendulum:angles=absolute", "--n", "2"]
    proc = cli(
        tmp_path, *run_args(base, ["n_link_pendulum"], t_final=0.1, extra=option)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (row,) = read_rows(base)
    assert "angles=absolute" in row["variant"]
    gate = cli(
        tmp_path,
        "regress",
        "--baseline",
        base,
        "--out",
        new,
        "--ignore-times",
        "--quiet",
    )
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "0 regression(s)" in gate.stdout
    assert [r["case"] for r in read_rows(new)] == [row["case"]]


# ----------------------------------------------------------------------
# Signals
# ----------------------------------------------------------------------
def start(tmp_path, *args) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "eomcompare", *map(str, args)],
        cwd=ROOT,
        env=env_for(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(path: Path, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline and proc.poll() is None, proc.poll()
        time.sleep(0.05)


def hanging_builder(tmp_path) -> tuple[Path, Path]:
    """A user's module whose builder ``slow`` touches a marker, then hangs."""
    marker, path = tmp_path / "building", tmp_path / "slow.py"
    path.write_text(
        "import pathlib, time\n\n\ndef slow():\n"
        f"    pathlib.Path({str(marker)!r}).touch()\n"
        "    time.sleep(600)\n"
    )
    return path, marker


@pytest.mark.slow  # a run, then one interrupted
def test_ctrl_c_during_the_builder_check_counts_the_rows_kept_truthfully(tmp_path):
    out = tmp_path / "out"
    proc = cli(tmp_path, *run_args(out, ["double_pendulum"], t_final=0.1))
    assert proc.returncode == 0, proc.stderr
    before = (out / "rows.jsonl").read_text()
    path, marker = hanging_builder(tmp_path)
    proc = start(tmp_path, *run_args(out, [f"{path}:slow"], t_final=0.1))
    try:
        wait_for(marker, proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted by SIGINT: 1 finished case(s) kept" in err
    assert (out / "rows.jsonl").read_text() == before


# ----------------------------------------------------------------------
# An oracle that cannot judge is said so, and the gate sees it
# ----------------------------------------------------------------------
def arm_urdf(joint: str) -> str:
    """A one-link arm; ``joint`` "revolute" has no ``<limit>`` (the URDF
    specification requires one: yourdfpy reads it, Pinocchio's parser not)."""
    return (
        '<robot name="arm"><link name="base"/><link name="rod"><inertial>'
        '<origin xyz="0 0 -0.3"/><mass value="1"/><inertia ixx="0.01" '
        'iyy="0.01" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        f'<joint name="hinge" type="{joint}"><parent link="base"/>'
        '<child link="rod"/><axis xyz="1 0 0"/></joint></robot>'
    )


def run_arm(
    tmp_path, name: str, joint: str
) -> tuple[subprocess.CompletedProcess, Path]:
    module = tmp_path / name / "robot.py"
    module.parent.mkdir()
    module.write_text(
        "from eomcompare.systems import from_urdf\n\n\ndef arm():\n"
        f"    return from_urdf({arm_urdf(joint)!r}, name='arm')\n"
    )
    out = tmp_path / name / "out"
    proc = cli(tmp_path, *run_args(out, [f"{module}:arm"], t_final=0.1))
    return proc, out


@pytest.mark.slow  # two runs and the gate
def test_an_unavailable_oracle_is_shown_and_judged_by_the_gate(tmp_path):
    from eomcompare.compare.report import write_report
    from eomcompare.compare.store import load

    proc, good = run_arm(tmp_path, "good", "continuous")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "oracle: unavailable" not in proc.stdout
    proc, bad = run_arm(tmp_path, "bad", "revolute")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (line,) = [ln for ln in proc.stdout.splitlines() if "oracle: unavailable" in ln]
    assert line.startswith("arm: oracle: unavailable (Pinocchio cannot read the URDF")
    paths = write_report(load(bad), bad, figures=False)
    assert "oracle: unavailable (Pinocchio cannot read the URDF" in (
        paths["html"].read_text()
    )
    # A baseline the oracle judged, a new run it cannot: a regression.
    gate = cli(tmp_path, "regress", "--baseline", good, "--run", bad, "--ignore-times")
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert (
        "[REGRESSION] arm/kane: oracle: q'' agreement with the oracle could "
        "not be computed: Pinocchio cannot read the URDF"
    ) in gate.stdout


@pytest.mark.slow  # a run with its report
def test_the_report_does_not_run_a_users_builder_in_the_main_process(
    tmp_path, monkeypatch
):
    import pandas as pd

    import eomcompare.compare.kolev_costs as kc

    # The builder passes the check before the run, then fails in every
    # case (which so store neither coordinates nor classes); each call
    # records its process.
    calls, path = tmp_path / "calls", tmp_path / "flaky.py"
    path.write_text(
        "import os, pathlib\n\nfrom eomcompare.systems import get_system\n\n\ndef flaky():\n"
        f"    calls = pathlib.Path({str(calls)!r})\n"
        "    first = not calls.exists()\n"
        "    with calls.open('a') as fh:\n"
        "        fh.write(f'{os.getpid()}\\n')\n"
        "    if not first:\n"
        "        raise RuntimeError('fails in the cases')\n"
        "    return get_system('n_link_pendulum', n=1)\n"
    )
    out = tmp_path / "out"
    args = [
        a for a in run_args(out, [f"{path}:flaky"], t_final=0.1) if a != "--no-report"
    ]
    # The run in this process, which is then the main process whose pid
    # the builder must not record; the report's Kolev table (derived in a
    # forked child, which inherits this stand-in) is not what is read.
    kolev = pd.DataFrame({"system": ["four_bar"], "variant": ["modified"]})
    monkeypatch.setattr(kc, "kolev_cost_table", lambda *a, **k: kolev)
    proc = cli(tmp_path, *args)
    assert proc.returncode == 1, proc.stderr
    assert (out / "report.html").exists()
    pids = calls.read_text().split()
    assert len(pids) == 2  # the check, the one case
    assert str(os.getpid()) not in pids


@pytest.mark.slow  # a run signalled while its case works
def test_sighup_to_a_run_leaves_no_worker_behind(tmp_path):
    # The builder returns at the check, then hangs in the case's worker,
    # which names itself in a marker.
    marker, path = tmp_path / "worker", tmp_path / "hang.py"
    path.write_text(
        "import os, pathlib, time\n\nfrom eomcompare.systems import get_system\n\n\n"
        "def hang():\n"
        f"    seen = pathlib.Path({str(tmp_path / 'seen')!r})\n"
        "    if seen.exists():\n"
        f"        pathlib.Path({str(marker)!r}).write_text(str(os.getpid()))\n"
        "        time.sleep(600)\n"
        "    seen.touch()\n"
        "    return get_system('n_link_pendulum', n=1)\n"
    )
    proc = start(tmp_path, *run_args(tmp_path / "out", [f"{path}:hang"], t_final=0.1))
    try:
        wait_for(marker, proc)
        worker = int(marker.read_text())
        assert worker != proc.pid
        proc.send_signal(signal.SIGHUP)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGHUP

    def running(pid: int) -> bool:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return False
        return stat.rpartition(")")[2].split()[0] != "Z"

    deadline = time.monotonic() + 10
    while running(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = running(worker)
    if alive:
        os.kill(worker, signal.SIGKILL)
    assert not alive, f"worker {worker} outlived its run"


# ----------------------------------------------------------------------
# Malicious URDF and MJCF files
# ----------------------------------------------------------------------
LINK = (
    '<link name="rod"><inertial><origin xyz="0 0 -0.3"/><mass value="1"/>'
    '<inertia ixx="0.01" iyy="0.01" izz="0.002" ixy="0" ixz="0" iyz="0"/>'
    "</inertial>{geometry}</link>"
    '<joint name="hinge" type="continuous"><parent link="base"/>'
    '<child link="rod"/><axis xyz="1 0 0"/></joint>'
)


def billion_laughs(root: str) -> str:
    levels = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)
    ]
    return f'<?xml version="1.0"?><!DOCTYPE {root} [{"".join(levels)}]>'


SECRET = "the secret of a file the model names"


def external_entity(tmp_path, root: str) -> str:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    return (
        f'<?xml version="1.0"?><!DOCTYPE {root} '
        f'[<!ENTITY xxe SYSTEM "file://{secret}">]>'
    )


def test_an_xml_bomb_and_an_external_entity_in_a_urdf_are_refused(tmp_path):
    from eomcompare.systems import DeclarationError, from_urdf

    bomb = billion_laughs("robot") + '<robot name="&lol9;"><link name="base"/>'
    bomb += LINK.format(geometry="") + "</robot>"
    start = time.monotonic()
    with pytest.raises(DeclarationError, match="cannot read the URDF") as refused:
        from_urdf(bomb)
    assert time.monotonic() - start < 30
    assert "lollol" not in str(refused.value)
    xxe = external_entity(tmp_path, "robot") + '<robot name="&xxe;">'
    xxe += '<link name="base"/>' + LINK.format(geometry="") + "</robot>"
    with pytest.raises(DeclarationError, match="external entity") as refused:
        from_urdf(xxe)
    assert SECRET not in str(refused.value)


def test_mjcf_read_through_mujoco_expands_no_entity(tmp_path):
    from eomcompare.systems import from_mjcf

    body = (
        '<worldbody><body name="rod"><joint name="j" type="hinge" axis="1 0 0"/>'
        '<geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02" mass="1"/>'
        "</body></worldbody></mujoco>"
    )
    # MuJoCo's parser reads an entity reference as the text it is.
    ms = from_mjcf(
        external_entity(tmp_path, "mujoco") + '<mujoco model="&xxe;">' + body
    )
    assert ms.name == "&xxe;"
    ms = from_mjcf(billion_laughs("mujoco") + '<mujoco model="&lol9;">' + body)
    assert ms.name == "&lol9;"


def test_the_meshes_a_urdf_names_are_never_opened(tmp_path):
    # Opening the FIFO would block the build for ever; the missing file
    # would raise.
    fifo = tmp_path / "mesh.stl"
    os.mkfifo(fifo)
    geometry = (
        f'<visual><geometry><mesh filename="{fifo}"/></geometry></visual>'
        f'<collision><geometry><mesh filename="file://{tmp_path / "nothing.dae"}"/>'
        "</geometry></collision>"
    )
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(
        '<robot name="arm"><link name="base"/>'
        + LINK.format(geometry=geometry)
        + "</robot>"
    )
    code = (
        "from eomcompare.systems import from_urdf\n"
        f"ms = from_urdf({str(urdf)!r})\n"
        "print(len(ms.coordinates))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env_for(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1"]


# ----------------------------------------------------------------------
# Markup in a user's options, concurrent runs, a name the catalogue has
# ----------------------------------------------------------------------
def test_markup_in_a_builder_option_is_escaped_in_the_report(tmp_path):
    from eomcompare.compare.report import write_report
    from eomcompare.compare.store import load

    path = tmp_path / "mine.py"
    path.write_text(
        "from eomcompare.systems import get_system\n\n\ndef mine(tag=''):\n"
        "    return get_system('n_link_pendulum', n=1)\n"
    )
    out = tmp_path / "out"
    script = "<script>alert(1)</script>"
    option = ["--system-option", f"mine:tag={script}"]
    proc = cli(tmp_path, *run_args(out, [f"{path}:mine"], t_final=0.1, extra=option))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (row,) = read_rows(out)
    assert script in row["label"]
    page = write_report(load(out), out, figures=False)["html"].read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert" not in page


@pytest.mark.slow  # two runs at once
def test_two_runs_into_one_output_directory_corrupt_nothing(tmp_path):
    out = tmp_path / "out"
    runs = [
        start(tmp_path, *run_args(out, [system], ("kane", "lagrange"), t_final=0.2))
        for system in ("double_pendulum", "n_link_pendulum")
    ]
    for proc in runs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    cases = [row["case"] for row in read_rows(out)]  # every line parses
    assert len(cases) == len(set(cases)) == 2 + 2 * 3  # n_link_pendulum: n=2,3,5
    import pandas as pd

    frame = pd.read_csv(out / "results.csv")
    assert frame["case"].is_unique and set(frame["case"]) <= set(cases)
    assert frame["status"].eq("ok").all()


def test_a_users_system_named_as_a_catalogue_system_is_refused(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(
        "from eomcompare.systems import get_system\n\n\ndef double_pendulum():\n"
        "    return get_system('n_link_pendulum', n=1)\n"
    )
    out = tmp_path / "out"
    proc = cli(tmp_path, *run_args(out, [f"{path}:double_pendulum"], t_final=0.1))
    assert proc.returncode == 2
    assert (
        proc.stderr.strip() == "error: system 'double_pendulum' is registered already"
    )
    assert not (out / "rows.jsonl").exists()


@pytest.mark.slow  # compiles the C backend: over ten seconds
def test_the_c_cases_run_uncached_when_the_compiler_finds_the_cache_full(tmp_path):
    # The compiler, as on a full disk under the cache: the link fails with
    # the system's message for ENOSPC when it writes there, not elsewhere.
    compiled = tmp_path / "cache" / "compiled"
    compiler = tmp_path / "fullcc"
    compiler.write_text(
        "#!/bin/sh\n"
        f'case "$PWD" in "{compiled}"*)\n'
        f'    echo "ld: final link failed: {os.strerror(errno.ENOSPC)}" >&2\n'
        "    exit 1;;\n"
        "esac\n"
        f'exec {shutil.which("cc") or shutil.which("gcc")} "$@"\n'
    )
    compiler.chmod(0o700)
    out = tmp_path / "out"
    args = run_args(out, ["double_pendulum"], t_final=0.1, extra=["--backend", "c"])
    proc = subprocess.run(
        [sys.executable, "-m", "eomcompare", *args, "--no-cache"],
        cwd=ROOT,
        env=dict(env_for(tmp_path), CC=str(compiler)),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (row,) = read_rows(out)
    assert row["status"] == "ok" and row["backend"] == "c", row["error"]
    note = f"compiled cache {compiled} cannot be written (No space left on device)"
    assert note in proc.stderr
