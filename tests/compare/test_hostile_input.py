"""The harness under hostile input (issue #26): files planted in shared
directories, malicious URDF files, injected markup, concurrent runs and
signals.  Each case drives the command line as a user would."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from helpers import run_args

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


def cli(tmp_path, *args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "compare", *map(str, args)],
        cwd=ROOT,
        env=env_for(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
        **kw,
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


@pytest.mark.slow  # the report derives Kolev's table: half a minute
def test_a_planted_equations_pickle_in_the_output_is_not_run(tmp_path):
    out = tmp_path / "out"
    proc = cli(tmp_path, *run_args(out, ["double_pendulum"], t_final=0.1))
    assert proc.returncode == 0, proc.stderr
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
