"""What ``python -m eomcompare`` tells its user while and after it runs: a
progress bar naming the running cases and how many remain, and a last
line with the wall time and where the report is."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from helpers import cli_in_process


# A whole `python -m eomcompare` run with its report: out of the quick loop.
@pytest.mark.slow
def test_bar_names_running_cases_and_last_line_says_where_the_report_is(
    tmp_path, monkeypatch
):
    import eomcompare.compare.kolev_costs as kc

    out = tmp_path / "run"
    # What the command prints, in this process (its output read from file
    # descriptors 1 and 2, as a subprocess's would be).  The report's
    # Kolev table, computed in a forked child that inherits this stand-in,
    # is not what the test reads (seconds of derivations otherwise).
    kolev = pd.DataFrame({"system": ["four_bar"], "variant": ["modified"]})
    monkeypatch.setattr(kc, "kolev_cost_table", lambda *a, **k: kolev)
    proc = cli_in_process(
        "--systems",
        "double_pendulum",
        "--formulations",
        "kane",
        "sympy_kane",
        "--t-final",
        "0.2",
        "--jobs",
        "1",
        "--out",
        out,
        env={"EOMCOMPARE_CACHE": tmp_path / "cache"},
    )
    assert proc.returncode == 0, proc.stderr
    # One case at a time: each is named while it runs, with the count of
    # cases not yet finished (two, then one).  Which runs first is the
    # scheduler's choice (the longer expected first).
    first, second = sorted(
        ("double_pendulum/kane", "double_pendulum/sympy_kane"),
        key=lambda c: proc.stderr.find(f"running {c};"),
    )
    assert f"running {first}; 2 remain" in proc.stderr, proc.stderr
    assert f"running {second}; 1 remains" in proc.stderr
    assert "0 remain" in proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    m = re.fullmatch(
        r"finished in (\d+\.\d) s \(cases (\d+\.\d) s, report (\d+\.\d) s\): "
        r"report in (\S+) \(and report\.md\)",
        last,
    )
    assert m, last
    assert Path(m.group(4)) == out / "report.html"
    assert (out / "report.html").is_file() and (out / "report.md").is_file()
    total, cases, report = (float(m.group(i)) for i in (1, 2, 3))
    assert 0 < total < 600
    # The two parts are the whole, to the printed rounding.
    assert abs(cases + report - total) <= 0.15 and cases > 0 and report > 0
