"""The user's own systems from the command line, and the user guide's example."""

from __future__ import annotations

import json
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
from helpers import cli_in_process, run_args

from eomcompare.compare.user_systems import parse_system_options, resolve_systems
from eomcompare.systems import CATALOGUE

ROOT = Path(__file__).resolve().parents[2]


def _readme_example() -> str:
    text = (ROOT / "docs" / "guide.md").read_text()
    match = re.search(
        r"<!-- example: my_pendulum.py -->\n```python\n(.*?)```", text, re.S
    )
    assert match, "the user guide lost its declare-your-own-system example"
    return match.group(1)


def test_readme_example_runs_from_the_cli(tmp_path):
    path = tmp_path / "my_pendulum.py"
    path.write_text(_readme_example())
    out = tmp_path / "run"
    proc = cli_in_process(
        "run",
        "--systems",
        f"{path}:pendulum",
        "--system-option",
        "pendulum:length=2.0",
        "--formulations",
        "kane",
        "lagrange",
        "--t-final",
        "0.3",
        "--jobs",
        "1",
        "--no-cache",
        "--no-report",
        "--quiet",
        "--out",
        out,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines()]
    assert {r["formulation"] for r in rows} == {"kane", "lagrange"}
    assert all(r["status"] == "ok" for r in rows), rows
    assert all(r["variant"] for r in rows)
    assert all("2.0" in r["label"] or "length" in r["case"] for r in rows)


def test_resolve_registers_a_module_builder_and_refuses_bad_specs(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(_readme_example())
    try:
        assert resolve_systems([f"{path}:pendulum", "four_bar"]) == [
            "pendulum",
            "four_bar",
        ]
        ms = CATALOGUE["pendulum"](length=1.5)
        assert ms.name == "my_pendulum"
        with pytest.raises(ValueError, match="no builder 'nope'.*pendulum"):
            resolve_systems([f"{path}:nope"])
        with pytest.raises(ValueError, match="no such file"):
            resolve_systems([str(tmp_path / "missing.py") + ":f"])
        with pytest.raises(ValueError, match="cannot import"):
            resolve_systems(["no_such_package_xyz.mod:f"])
    finally:
        CATALOGUE.pop("pendulum", None)


def test_system_options_become_variants():
    v = parse_system_options(
        ["four_bar:coordinates=minimal"], {"crank_slider": [{"coordinates": "minimal"}]}
    )
    assert v == {
        "four_bar": [{"coordinates": "minimal"}],
        "crank_slider": [{"coordinates": "minimal"}],
    }
    with pytest.raises(ValueError, match="valid options: \\['coordinates'\\]"):
        parse_system_options(["four_bar:shape=2"])
    with pytest.raises(ValueError, match="NAME:KEY=VALUE"):
        parse_system_options(["four_bar=minimal"])
    with pytest.raises(ValueError, match="unknown system 'nope'"):
        parse_system_options(["nope:x=1"])


# ----------------------------------------------------------------------
# The command line under hostile input: stale rows, builders that hang,
# exit or return nothing, modules that do not import, options unused.
# ----------------------------------------------------------------------
def _cli(tmp_path, *args):
    """``python -m eomcompare`` with a derivation cache of the test's own,
    in this process (what it refuses, prints and resumes; the systems a
    user's module registers are removed afterwards); the tests of a
    signal start a process."""
    return cli_in_process(*args, env={"EOMCOMPARE_CACHE": tmp_path / "cache"})


def _one_line_error(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and len(lines) == 1, proc.stderr
    return lines[0]


def _first_angle(out: Path) -> float:
    """q at t0 of the pendulum's saved kane trajectory (what the report
    draws)."""
    frame = pd.read_csv(out / "results.csv").set_index("formulation")
    with np.load(out / frame.loc["kane", "arrays"]) as data:
        return float(data["q"][0][0])


def _pendulum_file(path: Path, angle: float = 0.5, mass: str = "m: 1.0") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = _readme_example()
    assert "{q: 0.5," in text and "{m: 1.0," in text
    path.write_text(
        text.replace("{q: 0.5,", f"{{q: {angle},").replace("{m: 1.0,", f"{{{mass},")
    )
    return path


@pytest.mark.slow
def test_resume_reruns_an_edited_user_system_and_says_what_it_resumed(tmp_path):
    mine = _pendulum_file(tmp_path / "mine.py", angle=0.5)
    out = tmp_path / "run"
    args = run_args(out, [f"{mine}:pendulum"], t_final=0.2)
    first = _cli(tmp_path, *args)
    assert first.returncode == 0, first.stderr
    assert _first_angle(out) == pytest.approx(0.5)
    assert "resumed" not in first.stderr
    # The initial angle edited: the trajectory is computed again.
    _pendulum_file(mine, angle=1.5)
    edited = _cli(tmp_path, *args)
    assert edited.returncode == 0, edited.stderr
    assert _first_angle(out) == pytest.approx(1.5)
    assert "resumed" not in edited.stderr
    # The same declaration again: its row is resumed, and the run says so.
    again = _cli(tmp_path, *args)
    assert again.returncode == 0, again.stderr
    assert re.search(r"resumed 1 of 1 cases? from the earlier run", again.stderr)
    assert _first_angle(out) == pytest.approx(1.5)


@pytest.mark.slow
def test_another_files_builder_of_the_same_name_is_not_resumed(tmp_path):
    a = _pendulum_file(tmp_path / "a" / "pend.py", mass="m: 1.0")
    b = _pendulum_file(tmp_path / "b" / "pend.py", angle=1.0, mass="m: 3.0")
    out = tmp_path / "run"
    ran_a = _cli(tmp_path, *run_args(out, [f"{a}:pendulum"], t_final=0.2))
    assert ran_a.returncode == 0, ran_a.stderr
    ran_b = _cli(tmp_path, *run_args(out, [f"{b}:pendulum"], t_final=0.2))
    assert ran_b.returncode == 0, ran_b.stderr
    assert "resumed" not in ran_b.stderr
    assert _first_angle(out) == pytest.approx(1.0)
    # a's row is still there, and a's own trajectory with it.
    ran_a = _cli(tmp_path, *run_args(out, [f"{a}:pendulum"], t_final=0.2))
    assert "resumed 1 of 1" in ran_a.stderr, ran_a.stderr
    assert _first_angle(out) == pytest.approx(0.5)


URDF = """<robot name="arm"><link name="base"/>
<link name="a"><inertial><origin xyz="0 0 -0.5" rpy="0 0 0"/>
<mass value="{mass}"/><inertia ixx="0.1" iyy="0.1" izz="0.01" ixy="0" ixz="0"
iyz="0"/></inertial></link>
<joint name="j1" type="continuous"><parent link="base"/><child link="a"/>
<origin xyz="0 0 0" rpy="0 0 0"/><axis xyz="1 0 0"/></joint></robot>
"""


@pytest.mark.slow
def test_an_edited_urdf_named_by_a_builder_option_is_derived_again(tmp_path):
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(URDF.format(mass=1.0))
    (tmp_path / "arm.py").write_text(
        "from eomcompare.systems import from_urdf\n\n\n"
        "def arm(path='none.urdf'):\n"
        "    return from_urdf(path)\n"
    )
    out = tmp_path / "run"
    args = run_args(
        out,
        [f"{tmp_path / 'arm.py'}:arm"],
        t_final=0.2,
        extra=["--system-option", f"arm:path={urdf}"],
    )
    first = _cli(tmp_path, *args)
    assert first.returncode == 0, first.stderr
    rows = [json.loads(x) for x in (out / "rows.jsonl").read_text().splitlines()]
    assert len(rows) == 1
    urdf.write_text(URDF.format(mass=2.0))
    second = _cli(tmp_path, *args)
    assert second.returncode == 0, second.stderr
    assert "resumed" not in second.stderr
    rows = [json.loads(x) for x in (out / "rows.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and rows[0]["declaration"] != rows[1]["declaration"]


@pytest.mark.parametrize(
    "body, expected",
    [
        (
            "import sys\n    sys.exit(0)",
            r"builder quit\(\) of system 'quit'.*sys.exit\(0\)",
        ),
        ("return {'q': 1}", r"builder quit\(\).*returned dict: a builder must return"),
        ("return None", r"builder quit\(\).*returned NoneType: a builder must return"),
        (
            # A class of the same name from another copy of the package.
            "class MechanicalSystem: pass\n    return MechanicalSystem()",
            r"returned a MechanicalSystem of module '\w*quit'.*from eomcompare\.systems import",
        ),
        ("raise RuntimeError('no')", r"builder quit\(\).*RuntimeError: no"),
    ],
)
def test_a_builder_that_exits_or_returns_no_system_is_a_usage_error(
    tmp_path, body, expected
):
    path = tmp_path / "quit.py"
    path.write_text(f"def quit():\n    {body}\n")
    proc = _cli(tmp_path, *run_args(tmp_path / "run", [f"{path}:quit"], t_final=0.2))
    line = _one_line_error(proc)
    assert re.search(expected, line), line
    assert str(path) in line
    assert not (tmp_path / "run" / "rows.jsonl").exists()


@pytest.mark.parametrize(
    "source, where, what",
    [
        ("x = 1\ndef f(:\n    pass\n", ":2", "SyntaxError"),
        ("import math\n\nraise ValueError('bad module')\n", ":3", "bad module"),
        ("import sys\nsys.exit(3)\n", ":2", "sys.exit(3)"),
    ],
)
def test_a_module_that_cannot_be_imported_is_one_line_naming_file_and_line(
    tmp_path, source, where, what
):
    path = tmp_path / "broken.py"
    path.write_text(source)
    proc = _cli(tmp_path, *run_args(tmp_path / "run", [f"{path}:f"], t_final=0.2))
    line = _one_line_error(proc)
    assert f"{path}{where}" in line and what in line, line


@pytest.mark.slow
def test_a_builder_that_hangs_is_stopped_by_the_timeout(tmp_path):
    path = tmp_path / "slow.py"
    path.write_text("import time\n\n\ndef slow():\n    time.sleep(600)\n")
    start = time.monotonic()
    proc = _cli(
        tmp_path,
        *run_args(tmp_path / "run", [f"{path}:slow"], t_final=0.2),
        "--timeout",
        "3",
    )
    line = _one_line_error(proc)
    assert "builder slow()" in line and "3 s" in line, line
    assert time.monotonic() - start < 60


@pytest.mark.slow
def test_one_ctrl_c_stops_a_builder_that_hangs(tmp_path):
    marker = tmp_path / "building"
    path = tmp_path / "slow.py"
    path.write_text(
        "import pathlib, time\n\n\ndef slow():\n"
        f"    pathlib.Path({str(marker)!r}).touch()\n"
        "    time.sleep(600)\n"
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "eomcompare",
            *run_args(tmp_path / "run", [f"{path}:slow"], t_final=0.2),
        ],
        cwd=ROOT,
        env=dict(
            os.environ, PYTHONPATH=str(ROOT), EOMCOMPARE_CACHE=str(tmp_path / "cache")
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert time.monotonic() < deadline and proc.poll() is None, proc.poll()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=15)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted" in err


@pytest.mark.slow
def test_system_options_of_scalable_systems_are_used(tmp_path):
    out = tmp_path / "run"
    proc = _cli(
        tmp_path,
        *run_args(out, ["n_link_pendulum"], t_final=0.2),
        "--n",
        "2",
        "--system-option",
        "n_link_pendulum:angles=absolute",
    )
    assert proc.returncode == 0, proc.stderr
    frame = pd.read_csv(out / "results.csv")
    assert list(frame["variant"]) == ["angles=absolute,n=2"]
    proc = _cli(
        tmp_path,
        *run_args(out, ["n_link_pendulum"], t_final=0.2),
        "--system-option",
        "n_link_pendulum:n=1",
    )
    assert proc.returncode == 0, proc.stderr
    frame = pd.read_csv(out / "results.csv")
    assert list(frame["variant"]) == ["n=1"]
    assert list(frame["n_coordinates"]) == [1]


def test_an_option_for_a_system_not_compared_is_a_usage_error(tmp_path):
    proc = _cli(
        tmp_path,
        *run_args(tmp_path / "run", ["double_pendulum"], t_final=0.2),
        "--system-option",
        "four_bar:coordinates=minimal",
    )
    line = _one_line_error(proc)
    assert "four_bar" in line and "double_pendulum" in line, line


@pytest.mark.slow
def test_a_system_named_twice_runs_each_case_once(tmp_path):
    out = tmp_path / "run"
    proc = _cli(
        tmp_path,
        *run_args(
            out, ["double_pendulum", "double_pendulum"], ["kane", "kane"], t_final=0.2
        ),
    )
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(x) for x in (out / "rows.jsonl").read_text().splitlines()]
    assert [r["case"] for r in rows] == ["double_pendulum/kane"]
    assert list(pd.read_csv(out / "results.csv")["case"]) == ["double_pendulum/kane"]


def test_a_system_the_lagrange_family_refuses_reads_so_in_the_report(tmp_path):
    """sympy's contact-point-up disc, from a file, run against two
    velocity-based and the three energy-based formulations: the report
    says once "Lagrange family ...: unsupported (reason naming the point)",
    compares kane and gibbs_appell, and counts no failure."""
    import html
    import inspect

    import sympy_ports

    from eomcompare.compare import run
    from eomcompare.compare.report import write_report
    from eomcompare.compare.user_systems import resolve_systems

    path = tmp_path / "disc.py"
    path.write_text(
        "import sympy as sm\nimport sympy.physics.mechanics as me\n"
        "from eomcompare.systems import MechanicalSystem\n\n"
        + inspect.getsource(sympy_ports.contact_point_disc)
    )
    family = ["lagrange", "modified_lagrange", "sympy_lagrange"]
    try:
        names = resolve_systems([f"{path}:contact_point_disc"])
        result = run(
            names,
            ["kane", "gibbs_appell", *family],
            t_final=0.2,
            jobs=1,
            progress=False,
            use_cache=False,
            out=tmp_path / "run",
        )
    finally:
        CATALOGUE.pop("contact_point_disc", None)
    status = dict(zip(result.frame["formulation"], result.frame["status"]))
    assert status == {"kane": "ok", "gibbs_appell": "ok"} | dict.fromkeys(
        family, "unsupported"
    )
    assert result.failures.empty
    paths = write_report(result, tmp_path / "report", figures=False)
    page = html.unescape(paths["html"].read_text(encoding="utf-8"))
    said = re.findall(r"Lagrange family[^<]*: unsupported \(([^<]*)\)", page)
    # Once in the findings, once in the system's section; each formulation
    # of the family is not repeated with the same reason.
    assert len(said) == 2, said
    for reason in said:
        assert reason.startswith("system 'contact_point_disc' declares")
        assert "point Dmc" in reason
    assert "Lagrange family (lagrange, modified_lagrange, sympy_lagrange)" in page
    assert "lagrange: unsupported: lagrange:" not in page
    assert "No case failed." in page
