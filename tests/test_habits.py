"""The tree keeps the project's habits: ruff's lint rules and format, mypy
on the typed public modules, the test run's own strictness (docstring
examples, warnings as errors, strict marks and xfail; all configured in
pyproject.toml), no generated output in git and nothing read from it, and
no new module over 800 lines.  These run in the test suite, so the
README's test command checks them too."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
from helpers import git_ls_files

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


# --- The test run's own options ---------------------------------------------


def _pytest_options() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"][
        "ini_options"
    ]


def test_the_test_command_runs_the_docstring_examples_strictly():
    # The README's command (no paths: pyproject's testpaths) collects the
    # docstring examples of the package, through eomcompare/ only.
    options = _pytest_options()
    assert options["testpaths"] == ["tests", "eomcompare"]
    assert {"--doctest-modules", "--strict-markers"} <= set(options["addopts"].split())
    assert options["xfail_strict"] is True
    assert options["filterwarnings"][0] == "error"


def test_the_session_sizes_sympys_cache_before_sympy_is_imported():
    # tests/conftest.py sets SYMPY_CACHE_SIZE before its imports; were sympy
    # imported earlier (a plugin, a conftest above it), the setting would
    # silently do nothing and the suite would take its old time.
    import os

    import sympy

    expected = os.environ["SYMPY_CACHE_SIZE"]
    maxsize = sympy.Symbol._Symbol__xnew_cached_.cache_info().maxsize
    assert str(maxsize) == expected, (maxsize, expected)


def test_the_session_collects_garbage_at_its_own_thresholds():
    # tests/conftest.py sets them at import; a plugin or a helper that set
    # them back would silently give the suite its old time.
    import gc

    import conftest

    assert gc.get_threshold() == conftest.GC_THRESHOLDS
    assert gc.isenabled()


def _pytest_in(tmp_path: Path, *files: str) -> subprocess.CompletedProcess:
    """pytest with this project's options (pyproject.toml) on files of
    ``tmp_path``, which no conftest of the project reaches."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml")]
        + ["--rootdir", str(tmp_path), "-p", "no:cacheprovider", "-n", "0", "-q"]
        + ["-rfE", *files],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )


def test_the_options_fail_a_run(tmp_path):
    # A wrong docstring example, an expected failure that passes and a
    # warning each fail the run; a misspelt mark stops it at collection.
    (tmp_path / "mod.py").write_text(
        'def double(x):\n    """\n    >>> double(2)\n    5\n    """\n    return 2 * x\n'
    )
    (tmp_path / "test_x.py").write_text(
        "import warnings\n\nimport pytest\n\n\n"
        '@pytest.mark.xfail(reason="expected to fail")\n'
        "def test_passes():\n    pass\n\n\n"
        "def test_warns():\n"
        '    warnings.warn("unexpected", UserWarning)\n\n\n'
        "def test_fine():\n    pass\n"
    )
    res = _pytest_in(tmp_path, "mod.py", "test_x.py")
    out = res.stdout
    assert res.returncode == 1, out + res.stderr
    assert "FAILED mod.py::mod.double" in out
    assert "FAILED test_x.py::test_passes" in out and "XPASS(strict)" in out
    assert "FAILED test_x.py::test_warns - UserWarning: unexpected" in out
    assert "3 failed, 1 passed" in out
    (tmp_path / "test_mark.py").write_text(
        "import pytest\n\n\n@pytest.mark.slwo\ndef test_marked():\n    pass\n"
    )
    res = _pytest_in(tmp_path, "test_mark.py")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "'slwo' not found in `markers` configuration option" in res.stdout


# --- Generated output and the package --------------------------------------


def _reads_reports(path: Path) -> list[str]:
    """Statements of ``path`` that name a ``reports`` folder relative to the
    module's own file: the package reading the repository's generated
    output at run time."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.stmt) or isinstance(
            node, ast.FunctionDef | ast.ClassDef | ast.Module
        ):
            continue
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        strings = [
            n.value
            for n in ast.walk(node)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
        if "__file__" in names and any("reports" in s for s in strings):
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_the_package_reads_no_reports_of_its_own(tmp_path):
    # reports/ is generated output (partly out of git) and an installed
    # package has none: no module locates it from its own file.  A run's
    # directories are named by the user (--out, --baseline).
    modules = [
        p
        for pkg in (ROOT / "eomcompare").iterdir()
        if pkg.is_dir()
        for p in pkg.rglob("*.py")
    ]
    assert len(modules) > 80
    assert not [hit for p in modules for hit in _reads_reports(p)]
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from pathlib import Path\n\n"
        'PRIOR = Path(__file__).resolve().parent.parent / "reports" / "latest"\n'
    )
    assert _reads_reports(bad) == ["bad.py:3"]


def test_generated_reports_are_not_in_git():
    # The main job writes the report, its figures and trajectories; the
    # small data tables stay (the baseline, the benchmark's CSV and
    # Markdown).
    tracked = git_ls_files("reports")
    assert "reports/baseline/results.csv" in tracked
    assert "reports/bench/report.md" in tracked
    generated = [
        p
        for p in tracked
        if p.startswith("reports/latest/") or p.endswith((".html", ".png", ".npz"))
    ]
    assert not generated, generated


# --- Module length ----------------------------------------------------------

#: Modules over :data:`MAX_LINES` lines today, each to be split; the list can
#: only shrink: a module split below the limit must leave it, and no other
#: module may pass it.
LONG_MODULES: set[str] = set()
MAX_LINES = 800


def _long_modules(paths: list[str]) -> set[str]:
    return {p for p in paths if len((ROOT / p).read_text().splitlines()) > MAX_LINES}


def test_no_new_module_is_over_800_lines():
    listed = subprocess.run(
        ["git", "ls-files", "*.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    # The links in eomcompare/ lead to the same files.
    paths = [p for p in listed if not p.startswith("eomcompare/")]
    long = _long_modules(paths)
    assert not long - LONG_MODULES, (
        f"over {MAX_LINES} lines: {sorted(long - LONG_MODULES)}"
    )
    shorter = LONG_MODULES - long
    assert not shorter, (
        f"no longer over {MAX_LINES} lines, remove from LONG_MODULES: {sorted(shorter)}"
    )
