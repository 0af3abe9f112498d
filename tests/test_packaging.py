"""The installed project is one import name: a wheel built from this tree,
installed (not editable) into a fresh virtual environment, adds
``eomcompare`` and its dist-info to site-packages and nothing else, and
imports without the repository on the path."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest
from test_layout import PACKAGES as SUBPACKAGES

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (found,) = out.glob("eomcompare-*.whl")
    return found


def test_the_wheel_holds_one_top_level_name(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"eomcompare", wheel.name.split("-py3")[0] + ".dist-info"}
    # The subpackages are there as files (the links of the checkout are
    # followed), with their modules.
    for pkg in SUBPACKAGES:
        assert f"eomcompare/{pkg}/__init__.py" in names
    assert "eomcompare/formulations/kane.py" in names
    assert "eomcompare/__main__.py" in names
    # The compiled backend's C runtime, which the modules read as files.
    runtime = {p.name for p in (ROOT / "numeric" / "c").iterdir()}
    assert runtime >= {"eom_solve.c", "eom_entry.c", "eom_table.h", "eom_call.c"}
    for name in runtime:
        assert f"eomcompare/numeric/c/{name}" in names, name


@pytest.mark.slow
def test_installed_into_a_fresh_environment(wheel, tmp_path):
    env_dir = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    before = set(Path(purelib).iterdir())
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        # Away from a checkout, whose egg-info would read as installed.
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    gained = {p.name for p in set(Path(purelib).iterdir()) - before}
    assert gained == {"eomcompare", wheel.name.split("-py3")[0] + ".dist-info"}
    assert (env_dir / "bin" / "eomcompare").exists()
    assert not any((Path(purelib) / "eomcompare").rglob("*.pth"))
    # The dependencies come from the test environment's site-packages (a
    # plain path entry: its .pth files, among them this checkout's editable
    # finder, are not read); the project itself from the fresh install.
    deps = sysconfig.get_path("purelib")
    script = (
        "import eomcompare.formulations as f, eomcompare.systems as s\n"
        "print(f.__file__)\n"
        "print(s.get_system('double_pendulum').name)\n"
        "import importlib.util\n"
        f"print([n for n in {SUBPACKAGES!r} if importlib.util.find_spec(n)])\n"
    )
    res = subprocess.run(
        [str(python), "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": deps, "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"},
    )
    assert res.returncode == 0, res.stderr
    where, name, old_names = res.stdout.splitlines()
    assert where.startswith(purelib)
    assert name == "double_pendulum"
    assert old_names == "[]"
    listed = subprocess.run(
        [str(env_dir / "bin" / "eomcompare"), "list"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": deps, "PATH": "/usr/bin:/bin"},
    )
    assert listed.returncode == 0, listed.stderr
    assert "modified_lagrange" in listed.stdout
    # A small comparison with its quick sweep and report, run by the
    # installed command away from any checkout: everything the run reads
    # of its own code it finds under the one import name.
    out = tmp_path / "run"
    ran = subprocess.run(
        [
            str(env_dir / "bin" / "eomcompare"),
            "run",
            "--systems",
            "double_pendulum",
            "--formulations",
            "kane",
            "lagrange",
            "--t-final",
            "1",
            "--jobs",
            "1",
            "--precision",
            "quick",
            "--quiet",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            "PYTHONPATH": deps,
            "PATH": "/usr/bin:/bin",
            "MPLBACKEND": "Agg",
            "HOME": str(tmp_path),
            "EOMCOMPARE_CACHE": str(tmp_path / "cache"),
            "EOMCOMPARE_KEY": str(tmp_path / "key" / "cache.key"),
        },
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "Traceback" not in ran.stderr, ran.stderr[-3000:]
    for name in ("results.csv", "precision.csv", "report.html"):
        assert (out / name).stat().st_size > 0, name


def test_the_command_line_dispatches_the_benchmark_above_the_harness(capsys):
    # `python -m eomcompare bench` reaches the benchmark through the
    # package's own command line; the harness's, below the benchmark, only
    # says where it runs.
    from eomcompare.cli import main
    from eomcompare.compare.cli import main as harness_main

    with pytest.raises(SystemExit) as exc:
        main(["bench", "--help"])
    assert exc.value.code == 0
    assert "usage: python -m eomcompare bench" in capsys.readouterr().out
    assert harness_main(["bench"]) == 2
    assert "python -m eomcompare bench" in capsys.readouterr().err
