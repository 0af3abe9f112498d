"""
Gate your derivation in CI with ``regress``
===========================================

A derivation that silently changes — more operations after a refactoring,
a formulation that stops agreeing, a derivation twice as slow — should fail
continuous integration, not surface months later.  ``python -m eomcompare
regress`` reruns the cases of a stored baseline and exits non-zero when

* an operation count (raw or after cse) changed at all,
* q'' stopped agreeing with the reference (``--agreement-tol``, default
  :math:`10^{-8}`), or a trajectory that agreed over the whole horizon no
  longer does,
* a case that succeeded now fails,
* a time grew more than ``--time-factor`` (default 1.5) relative to a
  calibration workload measured in the same run (so a slower CI machine
  does not fail the gate; ``--ignore-times`` reports without failing).

The workflow: store a baseline once, commit it, and run ``regress`` in CI.
"""

# %%
# Store a baseline
# ----------------
# A baseline is an ordinary run directory (``results.csv`` and
# ``metadata.json``).  Keep it small: the systems and formulations you
# change, a short horizon.
import tempfile
from pathlib import Path

from eomcompare import compare

work = Path(tempfile.mkdtemp())
baseline = compare.run(
    ["double_pendulum"],
    ["kane", "gibbs_appell"],
    t_final=1.0,
    n_samples=51,
    jobs=1,
    progress=False,
    use_cache=False,
    out=work / "baseline",
)
print(baseline)
print(sorted(p.name for p in (work / "baseline").iterdir()))

# %%
# In CI
# -----
# The command a CI script runs (here through the CLI's ``main``, which is
# what ``python -m eomcompare`` calls); it reruns the baseline's cases with
# the baseline's options and prints every finding.
#
# Times are compared as ratios to a calibration workload measured in the
# same run, but on a machine shared with other jobs (as the one building
# this page) a run of a few seconds still varies by more than the 1.5x
# tolerance.  Gate times on a dedicated runner; elsewhere pass
# ``--ignore-times``, which reports time changes as notes without failing:
#
# .. code-block:: bash
#
#    python -m eomcompare regress --baseline reports/baseline --quiet --ignore-times
from eomcompare.compare.cli import main

status = main(
    [
        "regress",
        "--baseline",
        str(work / "baseline"),
        "--out",
        str(work / "new"),
        "--quiet",
        "--jobs",
        "1",
        "--ignore-times",
    ]
)
print("exit status:", status)
assert status == 0

# %%
# A change that must be accepted deliberately
# -------------------------------------------
# Suppose a change to the Gibbs–Appell backend made its equations one
# operation longer after cse.  We simulate it by editing the stored
# baseline (as if it had been recorded before the change); the gate then
# fails and names the case.  To accept such a change, commit a new
# baseline with the change that caused it.
import pandas as pd

csv = work / "baseline" / "results.csv"
frame = pd.read_csv(csv)
frame.loc[frame["formulation"] == "gibbs_appell", "ops_cse"] -= 1
frame.to_csv(csv, index=False)

status = main(
    [
        "regress",
        "--baseline",
        str(work / "baseline"),
        "--run",
        str(work / "new"),
        "--quiet",
        "--ignore-times",
    ]
)
print("exit status:", status)
assert status == 1

# %%
# From Python, :func:`eomcompare.compare.regress.compare_runs` returns the findings
# themselves, e.g. for a custom report.
from eomcompare.compare.regress import compare_runs
from eomcompare.compare.store import load

findings = compare_runs(load(work / "baseline"), load(work / "new"), ignore_times=True)
for finding in findings:
    print(finding)
assert [f.kind for f in findings if f.regression] == ["ops"]
