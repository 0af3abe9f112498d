"""A run whose ``--backend auto`` finds no compiled backend says so.

Without cffi (or a C compiler) every case falls back to lambdify; the
rows' ``backend`` column says it, and the run's summary names the reason,
so that a reader does not take lambdify's microseconds for the equations'.
"""

from __future__ import annotations

import pandas as pd
from helpers import cli_in_process

from eomcompare.numeric import compiled
from eomcompare.numeric.c_code import CompilerNotFoundError

RUN = ["run", "--systems", "double_pendulum", "--formulations", "kane"]
RUN += ["--t-final", "0.2", "--jobs", "1", "--quiet", "--no-report", "--no-cache"]


def test_a_run_without_cffi_names_the_missing_compiled_backend(tmp_path, monkeypatch):
    def no_cffi():
        raise CompilerNotFoundError(
            "the compiled backend needs cffi (pip install cffi)"
        )

    # Forked cases inherit the stand-in: as if cffi were not installed.
    monkeypatch.setattr(compiled, "_cffi", no_cffi)
    res = cli_in_process(*RUN, "--out", str(tmp_path / "run"))
    assert res.returncode == 0, res.stdout + res.stderr
    frame = pd.read_csv(tmp_path / "run" / "results.csv")
    assert list(frame["backend"]) == ["lambdify"]
    assert "No compiled backend: the compiled backend needs cffi" in res.stdout
    assert "timed through lambdify" in res.stdout


def test_a_run_with_the_compiled_backend_has_no_such_line(tmp_path):
    res = cli_in_process(*RUN, "--out", str(tmp_path / "run"))
    assert res.returncode == 0, res.stdout + res.stderr
    assert list(pd.read_csv(tmp_path / "run" / "results.csv")["backend"]) == ["c"]
    assert "No compiled backend" not in res.stdout
