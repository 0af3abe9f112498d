"""The robot section of the benchmark (bench.robots), on small sizes."""

from __future__ import annotations

import pandas as pd
import pytest

from eomcompare.bench import suite as bench
from eomcompare.bench.robots import (
    ASSUMPTION_SETS,
    ASSUMPTIONS,
    bench_robots,
    robot_targets,
)

BOTH = ("kane", "kane_articulated")


def test_chain_counts_against_aba_and_the_crossing(tmp_path):
    lines = []
    rows = bench_robots(
        tmp_path, lines.append, ns=[2, 3], formulations=BOTH, parts={"chain"}
    )["chain"]
    # Kane's method and the articulated-body recursion, each named.
    assert [(r["n"], r["formulation"]) for r in rows] == [
        (2, "kane"),
        (2, "kane_articulated"),
        (3, "kane"),
        (3, "kane_articulated"),
    ]
    # Featherstone's ABA, 224n - 259 / 205n - 248, written out here.
    assert [(r["aba_mul"], r["aba_add"]) for r in rows[::2]] == [
        (189, 162),
        (413, 367),
    ]
    for r in rows:
        assert r["status"] == "ok"
        assert r["ratio_total"] == pytest.approx(
            (r["fd_mul"] + r["fd_add"]) / (r["aba_mul"] + r["aba_add"]), abs=1e-3
        )
    # Counts grow with the chain, and the file holds the same rows.
    assert rows[2]["fd_mul"] > rows[0]["fd_mul"]
    assert rows[3]["fd_mul"] > rows[1]["fd_mul"]
    csv = pd.read_csv(tmp_path / "robots_chain.csv")
    assert list(csv["fd_mul"]) == [r["fd_mul"] for r in rows]
    assert list(csv["formulation"]) == [r["formulation"] for r in rows]
    md = (tmp_path / "robots.md").read_text()
    for label in BOTH:
        mine = [r for r in rows if r["formulation"] == label]
        below = all(
            r["fd_mul"] <= r["aba_mul"] and r["fd_add"] <= r["aba_add"] for r in mine
        )
        assert (
            f"- {label}: at or below ABA in multiplications and in additions "
            "for every measured n (up to n = 3)" in md
        ) == below
        if not below:
            assert f"- {label}: above ABA from n = " in md
    assert any("n=3 kane " in ln for ln in lines)
    assert any("n=3 kane_articulated" in ln for ln in lines)
    # The target line names the recursion and is met at n = 2, 3: hand
    # ratios from the rows against ABA's formula.
    (target,) = robot_targets({"chain": rows})
    assert target["target"].endswith("kane_articulated")
    mine = [r for r in rows if r["formulation"] == "kane_articulated"]
    worst = max(
        max(r["fd_mul"] / r["aba_mul"], r["fd_add"] / r["aba_add"]) for r in mine
    )
    assert target["value"] == pytest.approx(worst, abs=1e-3)
    assert target["status"] == ("met" if worst <= 1 else "MISSED")


def test_robot_targets_say_met_or_missed():
    # Rows as the CSV files hold them, numbers chosen by hand.
    rows = {
        "chain": [
            {
                "n": 2,
                "formulation": "kane_articulated",
                "status": "ok",
                "fd_mul": 120,
                "fd_add": 81,
                "aba_mul": 189,
                "aba_add": 162,
            },
            {
                "n": 3,
                "formulation": "kane_articulated",
                "status": "ok",
                "fd_mul": 420,
                "fd_add": 279,
                "aba_mul": 413,
                "aba_add": 367,
            },
        ],
        "stanford": [
            {
                "assumptions": "general",
                "formulation": "kane_recursive",
                "status": "ok",
                "id_mul": 359,
                "id_add": 293,
            },
        ],
        "rhs": [
            {
                "system": "panda",
                "formulation": "kane_articulated",
                "ratio": 0.19,
                "c_us": 0.46,
                "aba_us": 2.43,
            },
            {
                "system": "panda",
                "formulation": "kane",
                "ratio": 0.3,
                "c_us": 0.7,
                "aba_us": 2.43,
            },
        ],
        "derive": [
            {
                "system": "ur5",
                "formulation": "kane",
                "derive_s": 0.3,
                "sympy_kane_s": 1.5,
                "ratio": 0.2,
            },
            {
                "system": "ur5",
                "formulation": "lagrange",
                "derive_s": 0.6,
                "sympy_kane_s": 1.5,
                "ratio": 0.4,
            },
        ],
        "urdf": [{"n": 30, "status": "ok", "cpu_s": 2.0, "wall_s": 2.1}],
    }
    got = {r["target"]: r for r in robot_targets(rows)}
    chain = got["robots: spatial_chain FD / ABA (mul and add), kane_articulated"]
    # 420 / 413 multiplications: above ABA at n = 3.
    assert chain["status"] == "MISSED"
    assert chain["value"] == pytest.approx(420 / 413, abs=1e-3)
    st = got["robots: stanford_arm ID / Kane & Levinson 646/394, kane_recursive"]
    assert st["status"] == "met" and st["value"] == pytest.approx(293 / 394, abs=1e-3)
    assert (
        got["robots: panda C rhs / Pinocchio aba, kane_articulated"]["status"] == "met"
    )
    assert not any("panda C rhs" in k and k.endswith(", kane") for k in got)
    der = got["robots: ur5 derivation / sympy_kane, slowest own"]
    assert (der["status"], der["value"], der["note"]) == ("MISSED", 0.4, "lagrange")
    assert got["robots: from_urdf of a 30-link chain (CPU seconds)"]["status"] == "met"


# Derives and lambdifies a 6-joint arm several times: out of the quick loop.
@pytest.mark.slow
def test_stanford_arm_against_kane_and_levinson(tmp_path):
    rows = bench_robots(
        tmp_path, lambda s: None, formulations=("kane",), parts={"stanford"}
    )["stanford"]
    # Each assumption set, by Kane's M and f and by the recursion.
    assert [(r["assumptions"], r["formulation"]) for r in rows] == [
        (a, f) for a in ASSUMPTION_SETS for f in ("kane", "kane_recursive")
    ]
    for r in rows:
        assert r["status"] == "ok" and (r["kl_mul"], r["kl_add"]) == (646, 394)
        assert r["ratio_mul"] == pytest.approx(r["id_mul"] / 646, abs=1e-3)
    by = {(r["assumptions"], r["formulation"]): r for r in rows}
    for a in ASSUMPTION_SETS:
        # Without M the count is smaller, and zeros never cost operations.
        assert by[a, "kane_recursive"]["id_mul"] < by[a, "kane"]["id_mul"]
    sets = list(ASSUMPTION_SETS)
    muls = [by[a, "kane_recursive"]["id_mul"] for a in sets]
    assert muls[0] >= muls[1] >= muls[2]
    md = (tmp_path / "robots.md").read_text()
    # Both sets of assumptions are stated beside the numbers.
    for who in ASSUMPTIONS:
        assert who in md
    assert "products included" in md and "mass centre on the axis" in md


def test_a_capped_case_is_recorded_and_larger_n_not_tried(tmp_path):
    rows = bench_robots(
        tmp_path,
        lambda s: None,
        ns=[2, 3],
        formulations=("lagrange",),
        parts={"chain"},
        cap=0.01,
    )["chain"]
    assert [r["status"] for r in rows] == ["capped", "capped"]
    assert "capped at 0.01 s" in (tmp_path / "robots.md").read_text()


def test_skip_takes_robots(tmp_path):
    with pytest.raises(SystemExit):
        bench.main(["--skip", "robot", "--out", str(tmp_path)])


@pytest.mark.parametrize(
    "robots, expected",
    [
        # The seven-joint arm by Kane's partial velocities takes most of the
        # time: the six-joint arm alone stays in the quick loop.
        (("ur5",), ["ur5"]),
        pytest.param(("ur5", "panda"), ["panda", "ur5"], marks=pytest.mark.slow),
    ],
)
def test_rhs_rows_include_the_articulated_body_recursion(tmp_path, robots, expected):
    # Pinocchio and a C compiler are part of the test environment (the
    # test extra, .ci/run): their absence fails here rather than passing
    # unseen.
    rows = bench_robots(
        tmp_path,
        lambda s: None,
        formulations=BOTH,
        parts={"rhs"},
        repeats=1,
        robots=robots,
    )["rhs"]
    assert [(r["system"], r["formulation"]) for r in rows] == [
        (robot, form) for robot in expected for form in ("kane", "kane_articulated")
    ]
    for r in rows:
        # The same accelerations as Pinocchio's, and the ratio of the row.
        assert r["qdd_maxdiff"] < 1e-8
        assert r["c_us"] > 0 and r["aba_us"] > 0
        assert abs(r["ratio"] - r["c_us"] / r["aba_us"]) < 1e-2 * r["ratio"]
    text = (tmp_path / "robots.md").read_text()
    assert f"| {expected[0]} | kane_articulated |" in text
    # The flags the C was built with are those of a default build, stated.
    from eomcompare.numeric.compiled import default_cflags

    flags = " ".join(default_cflags())
    assert {r["cflags"] for r in rows} == {flags}
    assert f"the C built with ``{flags}``" in text
    # Built for this processor, the same C with the baseline flags alone is
    # timed beside it, its ratio that of its own microseconds.
    if "-march=native" in flags:
        assert "ratio, baseline flags" in text
        for r in rows:
            assert r["baseline_c_us"] > 0
            assert abs(r["baseline_ratio"] - r["baseline_c_us"] / r["aba_us"]) < (
                1e-2 * r["baseline_ratio"]
            )
    else:
        assert "baseline flags" not in text and "baseline_c_us" not in rows[0]


def test_urdf_chain_declaration_seconds(tmp_path):
    lines = []
    rows = bench_robots(tmp_path, lines.append, parts={"urdf"}, urdf_ns=[2, 4])["urdf"]
    assert [r["n"] for r in rows] == [2, 4]
    for r in rows:
        assert r["status"] == "ok"
        assert 0 < r["cpu_s"] < 60 and 0 < r["wall_s"] < 120
    csv = pd.read_csv(tmp_path / "robots_urdf.csv")
    assert list(csv["cpu_s"]) == [r["cpu_s"] for r in rows]
    md = (tmp_path / "robots.md").read_text()
    assert "## Declaring a URDF chain of n links" in md
    assert any(line.startswith("  n=4: ") for line in lines)
