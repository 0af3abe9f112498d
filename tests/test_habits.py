"""The tree keeps the project's habits: ruff's lint rules and format, and
mypy on the typed public modules (configured in pyproject.toml).  These run
in the test suite, so the README's test command checks them too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True
    )


@pytest.mark.parametrize(
    "command",
    [("ruff", "check", "."), ("ruff", "format", "--check", "."), ("mypy",)],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_tree_passes(command):
    res = _run(*command)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]


def test_the_checks_can_fail(tmp_path):
    # The same commands reject a file that breaks each rule: the checks above
    # are not vacuous.
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nx=1\n")
    check = _run("ruff", "check", "--isolated", "--select", "F401", str(bad))
    fmt = _run("ruff", "format", "--isolated", "--check", str(bad))
    assert check.returncode == 1 and "F401" in check.stdout
    assert fmt.returncode == 1
    typed = tmp_path / "typed.py"
    typed.write_text("def f(x):\n    return x\n")
    res = _run("mypy", "--strict", "--config-file", "/dev/null", str(typed))
    assert res.returncode == 1 and "no-untyped-def" in res.stdout
