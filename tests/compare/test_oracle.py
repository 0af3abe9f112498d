"""The harness's oracle column: for a robot read from URDF, each
formulation's q'' deviation from Pinocchio's ``aba`` (reading the same
file), recorded in the run and shown in the report."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from compare import run
from compare.report import write_report
from compare.tables import _fmt
from references.robot_oracle import oracle_accelerations
from systems import get_system


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
    states = [ms.random_state(seed) for seed in range(3)]
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
    paths = write_report(result, tmp_path, kolev=False, benchmarks=False)
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
