"""The floating-base part of the robot benchmark (:mod:`eomcompare.bench.floating`)
on its small case, the two-body floating system: the three-way agreement
holds where the model is right and fails where it is perturbed, the
references agree with each other, and the tables and targets have their
columns."""

from __future__ import annotations

from fractions import Fraction

import pytest

from eomcompare.bench.floating import (
    SOLVE_6,
    TOLERANCE,
    TWO_BODY,
    agreement,
    count_row,
    load_model,
    mujoco_reference,
    pinocchio_reference,
)
from eomcompare.bench.floating_report import floating_markdown, floating_targets
from eomcompare.bench.robots import robot_targets
from eomcompare.bench.rows import merge_sections
from eomcompare.systems import from_urdf


@pytest.fixture(scope="module")
def two_body():
    return load_model("two_body")


def test_agreement_holds_on_the_two_body_system(two_body):
    (row,) = agreement(two_body, ("kane",), states=5)
    assert row["floating"] is True and row["speeds"] == 7
    # Both references are measured (numbers, not reasons) and agree with
    # each other and with kane to round-off.
    for key in ("own_pinocchio", "own_mujoco", "pinocchio_mujoco"):
        assert isinstance(row[key], float)
        assert row[key] <= TOLERANCE
    assert row["status"] == "agree"


def test_agreement_fails_on_a_perturbed_model(two_body):
    # The arm 0.1 g heavier in the declaration, the references reading the
    # original file: u' moves by about 1e-5 relative.
    heavier = from_urdf(
        TWO_BODY.replace('<mass value="1.2"/>', '<mass value="1.2001"/>'),
        floating_base=True,
    )
    (row,) = agreement(heavier, ("kane",), states=3, reference=two_body)
    assert row["status"] == "DISAGREE"
    assert row["own_pinocchio"] > 1e-6 and row["own_mujoco"] > 1e-6
    assert row["pinocchio_mujoco"] <= TOLERANCE


def test_references_say_why_they_do_not_apply():
    puma = load_model("puma560")
    assert callable(pinocchio_reference(puma))
    assert mujoco_reference(puma) == "no URDF or MJCF file MuJoCo reads"


def test_count_row_and_the_tables_columns(two_body):
    row = count_row(two_body, "kane")
    assert row["speeds"] == 7
    assert row["fd_mul"] > row["solve_mul"] > 0
    assert row["fd_add"] > row["solve_add"] > 0
    agree = agreement(two_body, ("kane",), states=2)
    rhs = {
        "table": "rhs",
        "model": "solo12",
        "formulation": "kane",
        "c_us": 3.0,
        "aba_us": 4.0,
        "ratio": 0.75,
        "ratio_min": 0.7,
        "ratio_max": 0.8,
        "repeats": 5,
        "ud_reldiff": 1e-15,
        "cflags": "-O2",
    }
    derive = {
        "table": "derive",
        "model": "solo12",
        "formulation": "kane",
        "derive_s": 10.0,
        "sympy_kane_s": None,
        "cap_s": 60.0,
    }
    lines = floating_markdown(agree + [rhs, derive, row], cap=60.0)
    text = "\n".join(lines)
    for header in (
        "| model | floating | formulation | states | own - Pinocchio | own - MuJoCo "
        "| Pinocchio - MuJoCo | derive s | status |",
        "| formulation | C us | aba us | ratio | ratio range | repeats |",
        "| formulation | derive s | sympy_kane s | ratio |",
        "| model | formulation | speeds | FD mul/add (total) | of which solve "
        "| vs published |",
    ):
        assert header in text
    assert f"| two_body | kane | 7 | {row['fd_mul']}/{row['fd_add']} |" in text
    assert "not like for like" in text
    assert "capped at 60 s" in text


def test_the_six_by_six_solve_is_featherstones_formula():
    n = Fraction(6)
    mul = n**3 / 6 + 3 * n**2 / 2 - 2 * n / 3
    add = n**3 / 6 + n**2 - 7 * n / 6
    assert SOLVE_6 == (mul, add) == (86, 65)


def test_targets_judge_the_rows():
    agree = [
        {"table": "agreement", "model": "a", "formulation": "kane", "states": 20}
        | {"own_pinocchio": 1e-14, "own_mujoco": 2e-10, "status": "DISAGREE"},
        {"table": "agreement", "model": "b", "formulation": "kane", "states": 20}
        | {"own_pinocchio": 1e-13, "own_mujoco": "MJCF", "status": "agree"},
        {"table": "agreement", "model": "c", "formulation": "lagrange"}
        | {"status": "capped"},
    ]
    rhs = [
        {"table": "rhs", "model": "solo12", "formulation": f, "ratio": r}
        | {"c_us": 1.0, "aba_us": 1.0, "ratio_min": r, "ratio_max": r}
        for f, r in (("kane", 1.3), ("kane_composite", 0.9))
    ]
    derive = [
        {"table": "derive", "model": "solo12", "formulation": "kane"}
        | {"derive_s": 5.0, "sympy_kane_s": "", "cap_s": 60}
    ]
    # sympy_kane measured, one own formulation capped: at least cap / peer.
    slow = [
        {"table": "derive", "model": "solo12", "formulation": f, "cap_s": 120}
        | {"derive_s": s, "sympy_kane_s": 80.0}
        for f, s in (("kane", 8.0), ("modified_lagrange", None))
    ]
    judged = {r["target"]: r for r in floating_targets(slow)}
    assert (
        judged["robots: solo12 floating derivation / sympy_kane, kane"]["status"]
        == "met"
    )
    worst = judged["robots: solo12 floating derivation / sympy_kane, slowest own"]
    assert worst["status"] == "MISSED" and worst["value"] == 1.5
    assert worst["note"].startswith("modified_lagrange: capped at 120 s")
    got = {r["target"]: r for r in floating_targets(agree + rhs + derive)}
    (agreement_row,) = [r for t, r in got.items() if "agreement" in t]
    assert agreement_row["status"] == "MISSED" and agreement_row["value"] == 2e-10
    assert "not agreeing: a kane" in agreement_row["note"]
    assert "not measured: c lagrange (capped)" in agreement_row["note"]
    (rhs_row,) = [r for t, r in got.items() if "rhs" in t]
    assert rhs_row["status"] == "met" and "kane_composite" in rhs_row["target"]
    derive_rows = [r for t, r in got.items() if "derivation" in t]
    assert len(derive_rows) == 2
    for derive_row in derive_rows:
        assert derive_row["status"] == "met" and "capped" in derive_row["note"]
    # The robot section's targets include them.
    names = [r["target"] for r in robot_targets({"floating": agree + rhs + derive})]
    assert set(got) <= set(names)


def test_a_run_of_some_parts_keeps_the_other_sections():
    old = "# R\n\n## A\n\na\n\n## B\n\nb\n\n## C\n\nc\n"
    new = "# R\n\n## B\n\nb2\n\n## D\n\nd\n"
    assert merge_sections(old, new) == (
        "# R\n\n## A\n\na\n\n## B\n\nb2\n\n## C\n\nc\n\n## D\n\nd\n"
    )


# A placeholder root (inertia 1e-6 in every entry: not positive definite,
# as anymal's and hyq's) fixed to a link that carries the mass, at a
# turned and shifted pose, and a hinged arm.
PLACEHOLDER_ROOT = """<robot name="placeholder_root">
<link name="base"><inertial><mass value="1e-6"/>
<inertia ixx="1e-6" iyy="1e-6" izz="1e-6" ixy="1e-6" ixz="1e-6" iyz="1e-6"/>
</inertial></link>
<link name="base_inertia"><inertial><origin xyz="0.1 0 0"/><mass value="2"/>
<inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0" ixz="0" iyz="0"/>
</inertial></link>
<joint name="fix" type="fixed"><parent link="base"/><child link="base_inertia"/>
<origin xyz="0 0.2 0" rpy="0 0 1.5707963267948966"/></joint>
<link name="arm"><inertial><origin xyz="0.3 0 0"/><mass value="1.2"/>
<inertia ixx="0.002" iyy="0.012" izz="0.012" ixy="0" ixz="0" iyz="0"/>
</inertial></link>
<joint name="h" type="continuous"><parent link="base"/><child link="arm"/>
<origin xyz="0.4 0 0.1"/><axis xyz="0 1 0"/><limit effort="1" velocity="1"/></joint>
</robot>"""


def test_placeholder_links_are_merged_exactly_for_mujoco(states_with_speeds):
    import xml.etree.ElementTree as ET

    import numpy as np

    from eomcompare.bench.floating import merge_placeholder_links, mujoco_reference
    from eomcompare.formulations import get_formulation

    text, merged = merge_placeholder_links(PLACEHOLDER_ROOT)
    assert merged == ["base_inertia into base"]
    base = next(
        lk for lk in ET.fromstring(text).iter("link") if lk.get("name") == "base"
    )
    # By hand: the mass centre (0.1, 0, 0) of base_inertia, turned by 90
    # degrees about z and shifted by (0, 0.2, 0), is at (0, 0.3, 0) in
    # base's frame; with 1e-6 kg at base's origin the total is 2.000001 kg
    # at (0, 0.6/2.000001, 0).  base_inertia's xx and yy swap by the turn.
    m = 2.000001
    assert float(base.find("inertial/mass").get("value")) == pytest.approx(m, rel=1e-15)
    c = [float(x) for x in base.find("inertial/origin").get("xyz").split()]
    np.testing.assert_allclose(c, [0, 0.6 / m, 0], atol=1e-15)
    d = 0.3 - 0.6 / m  # base_inertia's centre from the total's, along y
    ixx = float(base.find("inertial/inertia").get("ixx"))
    # 0.03 (yy turned onto xx) + 2 d^2, and the placeholder's 1e-6 plus
    # 1e-6 kg at distance 0.6/m along y.
    assert ixx == pytest.approx(
        0.03 + 2 * d**2 + 1e-6 + 1e-6 * (0.6 / m) ** 2, rel=1e-12
    )
    # MuJoCo loads the merged file, and its qacc is the equations' u'
    # (the placeholder's mass kept: the same body, the same dynamics).
    ms = from_urdf(PLACEHOLDER_ROOT, floating_base=True)
    reference = mujoco_reference(ms)
    assert callable(reference), reference
    model = get_formulation("kane", count_ops=False).derive(ms).numeric()
    for t0, q, _qd, u in states_with_speeds(ms):
        expected = reference(q, u)
        got = model.speed_derivatives(t0, q, u)
        assert np.max(np.abs(got - expected)) <= 1e-10 * np.max(np.abs(expected))
