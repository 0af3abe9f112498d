"""The tree keeps the project's habits: ruff's lint rules and format, and
mypy on the typed public modules (configured in pyproject.toml).  These run
in the test suite, so the README's test command checks them too."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]

# One worker runs them in turn: mypy processes started at once on the
# same tree share its .mypy_cache and can crash each other (an internal
# error, exit status 2).
pytestmark = pytest.mark.xdist_group("habits")


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


# The public surface the documentation's API reference presents: these
# modules are type-checked with every strict option.  Paths as pyproject's
# mypy `files` writes them: under the one import name.
PUBLIC_MODULES = [
    "eomcompare/systems/base.py",  # MechanicalSystem
    "eomcompare/systems/catalogue.py",  # the system registry
    "eomcompare/systems/families.py",  # the builders of the random families
    "eomcompare/formulations/base.py",  # Formulation
    "eomcompare/formulations/registry.py",  # the formulations by name
    "eomcompare/formulations/result.py",  # EquationsOfMotion
    "eomcompare/numeric/model.py",  # the numeric contract
    "eomcompare/numeric/linearize.py",
    "eomcompare/compare/runner.py",  # compare.run
    "eomcompare/testing/strategies.py",
]


def test_public_modules_are_checked_strictly():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config.get("strict") is True
    missing = [m for m in PUBLIC_MODULES if m not in config["files"]]
    assert not missing, f"not type-checked: {missing}"
    # No per-module section relaxes the strict options for them again.
    dotted = {m.removesuffix(".py").replace("/", ".") for m in PUBLIC_MODULES}
    named = [
        o
        for o in config.get("overrides", [])
        if set(np.atleast_1d(o["module"])) & dotted
    ]
    assert not named, named


def test_the_configuration_rejects_untyped_code(tmp_path):
    # The configuration of pyproject.toml (not mypy's defaults) refuses a
    # function without annotations and a bare generic: the modules it
    # checks are held to the strict options.
    bad = tmp_path / "untyped.py"
    bad.write_text("def f(x):\n    return x\n\n\ndef g() -> list:\n    return []\n")
    res = _run("mypy", "--config-file", str(ROOT / "pyproject.toml"), str(bad))
    assert res.returncode == 1
    assert "no-untyped-def" in res.stdout and "type-arg" in res.stdout, res.stdout
