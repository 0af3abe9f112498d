"""The harness's oracle column: for a robot read from URDF, each
formulation's q'' deviation from Pinocchio's ``aba`` (reading the same
file), recorded in the run and shown in the report."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pinocchio as pin
import pytest
from helpers import cli_in_process, run_args

from eomcompare.compare import run
from eomcompare.compare.report import write_report
from eomcompare.compare.tables import _fmt
from eomcompare.references.robot_oracle import oracle_accelerations
from eomcompare.systems import get_system


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    return run(
        ["ur5", "double_pendulum"],
        ["kane", "lagrange"],
        t_final=0.05,
        n_states=5,
        jobs=1,
        progress=False,
        use_cache=False,
        out=out,
    )


# A harness run with ur5 (and its report): out of the quick loop; the
# oracle itself is checked quickly below.
@pytest.mark.slow
def test_each_formulation_is_measured_against_pinocchio(result):
    fr = result.frame.set_index(["system", "formulation"])
    for form in ("kane", "lagrange"):
        row = fr.loc[("ur5", form)]
        assert row["status"] == "ok", row["error"]
        assert row["oracle"] == "pinocchio"
        assert 0 <= row["oracle_qdd_max_rel_dev"] < 1e-9
    # No oracle for a system not read from URDF.
    assert fr.loc[("double_pendulum", "kane"), "oracle"] != "pinocchio"
    assert np.isnan(fr.loc[("double_pendulum", "kane"), "oracle_qdd_max_rel_dev"])


def test_oracle_is_pinocchio_at_the_given_states():
    ms = get_system("ur5")
    states = [ms.states.random_state(seed) for seed in range(3)]
    name, qdd = oracle_accelerations(ms, states)
    assert name == "pinocchio" and qdd.shape == (3, 6)
    model = pin.buildModelFromXML(ms.options["urdf"])
    data = model.createData()
    for (_, q, qd), ours in zip(states, qdd):
        np.testing.assert_allclose(
            ours,
            pin.aba(
                model, data, np.asarray(q, float), np.asarray(qd, float), np.zeros(6)
            ),
            rtol=1e-12,
        )
    # Other states, other accelerations: the states are really used.
    assert not np.allclose(qdd[0], qdd[1])
    assert oracle_accelerations(get_system("double_pendulum"), states) is None
    with pytest.raises(TypeError, match="MechanicalSystem"):
        oracle_accelerations("ur5", states)


# A harness run with ur5 (and its report): out of the quick loop; the
# oracle itself is checked quickly below.
@pytest.mark.slow
def test_report_shows_the_oracle(result, tmp_path):
    paths = write_report(result, tmp_path)
    md = paths["markdown"].read_text(encoding="utf-8")
    assert "pinocchio (oracle)" in md
    assert "q'' rel. dev. from pinocchio" in md
    overview = md[md.index("## Overview") : md.index("## Failures")]
    line = next(ln for ln in overview.splitlines() if ln.startswith("| ur5"))
    dev = result.frame.set_index(["system", "formulation"]).loc[
        ("ur5", "kane"), "oracle_qdd_max_rel_dev"
    ]
    # The ur5 line ends with the oracle's cell: Pinocchio against kane.
    assert line.rstrip(" |").split("|")[-1].strip() == _fmt(dev)
    dp = next(ln for ln in overview.splitlines() if ln.startswith("| double_pendulum"))
    assert dp.rstrip(" |").split("|")[-1].strip() == "—"


# ----------------------------------------------------------------------
# The oracle judges: from the command line, with a user's URDF robot
# ----------------------------------------------------------------------

ARM = """<robot name="arm"><link name="base"/>
<link name="rod"><inertial><origin xyz="0 0 -0.3"/><mass value="1"/>
<inertia ixx="0.01" iyy="0.01" izz="0.002" ixy="0" ixz="0" iyz="0"/>
</inertial></link>
<joint name="hinge" type="{kind}"><parent link="base"/><child link="rod"/>
<axis xyz="1 0 0"/>{limit}</joint></robot>"""

#: A user's module: the arm of the file, its link's mass declared as MASS
#: (the file says 1), so that the declaration can differ from the file
#: Pinocchio reads; and an arm whose file Pinocchio's parser refuses.
BUILDERS = """
import dataclasses

import sympy as sm

from eomcompare.systems import from_urdf
from eomcompare.systems.urdf import declare_tree

MASS = {mass}
ARM = {arm!r}


def arm():
    ms = from_urdf(ARM.format(kind="continuous", limit=""))
    spec = dataclasses.replace(ms.joint_tree[0], mass=sm.Float(MASS))
    return declare_tree("arm", [spec], {{}}, options=dict(ms.options))


def unlimited_arm():
    # A revolute joint without <limit>: yourdfpy reads it, urdfdom not.
    return from_urdf(ARM.format(kind="revolute", limit=""), name="unlimited_arm")
"""


def cli(tmp_path, *args):
    """``python -m eomcompare ARGS`` with a derivation cache of the test's
    own, in this process: what is tested is what the run computes and
    prints, not the process."""
    return cli_in_process(*args, env={"EOMCOMPARE_CACHE": tmp_path / "cache"})


def run_arm(tmp_path, name, mass, system="arm"):
    builders = tmp_path / f"{name}.py"
    builders.write_text(BUILDERS.format(mass=mass, arm=ARM))
    out = tmp_path / name
    proc = cli(
        tmp_path,
        *run_args(out, [f"{builders}:{system}"], ("kane", "lagrange"), t_final=0.1),
    )
    rows = [json.loads(ln) for ln in (out / "rows.jsonl").read_text().splitlines()]
    return proc, out, {r["formulation"]: r for r in rows}


def gate(capsys, baseline, run_dir):
    """``python -m eomcompare regress --ignore-times`` in this process (the
    gate reads two run directories and derives nothing): its exit code and
    what it printed."""
    from eomcompare.compare.cli import main

    capsys.readouterr()
    code = main(
        [
            "regress",
            "--baseline",
            str(baseline),
            "--run",
            str(run_dir),
            "--ignore-times",
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_a_declaration_pinocchio_disagrees_with_fails_the_run_and_the_gate(
    tmp_path, capsys
):
    proc, good, rows = run_arm(tmp_path, "good", 1.0)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for row in rows.values():
        assert row["status"] == "ok", row["error"]
        assert row["oracle_qdd_max_rel_dev"] < 1e-9
    # Mass 1.57 declared, 1 in the file: kane and lagrange agree with each
    # other and not with Pinocchio.
    proc, bad, rows = run_arm(tmp_path, "bad", 1.57)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for form, row in rows.items():
        assert row["status"] == "oracle_disagrees"
        assert 1e-3 < row["oracle_qdd_max_rel_dev"] < 1
        line = f"arm/{form}: oracle_disagrees: q'' deviates from pinocchio's by"
        assert line in proc.stdout
    frame = pd.read_csv(bad / "results.csv").set_index("formulation")
    assert frame.loc["lagrange", "qdd_max_rel_dev"] < 1e-9
    # The gate: a case that agreed no longer does, and a case that
    # disagrees on both sides is still a regression.
    code, text = gate(capsys, good, bad)
    assert code == 1, text
    assert "arm/kane: status: was ok, now oracle_disagrees: q'' deviates" in text
    code, text = gate(capsys, bad, bad)
    assert code == 1, text
    assert "[REGRESSION] arm/lagrange: oracle: q'' deviates from pinocchio" in text
    code, text = gate(capsys, good, good)
    assert code == 0, text


def test_a_file_pinocchio_cannot_read_leaves_the_robot_without_oracle(tmp_path):
    proc, _, rows = run_arm(tmp_path, "unlimited", 1.0, system="unlimited_arm")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for row in rows.values():
        assert row["status"] == "ok", row["error"]
        assert row["oracle_unavailable"].startswith("Pinocchio cannot read the URDF")
        assert "oracle_qdd_max_rel_dev" not in row
