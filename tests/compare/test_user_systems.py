"""The user's own systems from the command line, and the user guide's example."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from compare.user_systems import parse_system_options, resolve_systems
from systems import CATALOGUE

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
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "compare",
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
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
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
