"""The robot section of the benchmark (bench.robots), on small sizes."""

from __future__ import annotations

import pandas as pd
import pytest

from bench import suite as bench
from bench.robots import ASSUMPTION_SETS, ASSUMPTIONS, bench_robots


def test_chain_counts_against_aba_and_the_crossing(tmp_path):
    lines = []
    rows = bench_robots(
        tmp_path, lines.append, ns=[2, 3], formulations=("kane",), parts={"chain"}
    )["chain"]
    # kane with its mass matrix and by the articulated-body recursion.
    assert [(r["n"], r["forward"]) for r in rows] == [
        (2, "mass_matrix"),
        (2, "articulated_body"),
        (3, "mass_matrix"),
        (3, "articulated_body"),
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
    assert list(csv["forward"]) == [r["forward"] for r in rows]
    md = (tmp_path / "robots.md").read_text()
    for forward, label in [
        ("mass_matrix", "kane"),
        ("articulated_body", "kane, forward=articulated_body"),
    ]:
        mine = [r for r in rows if r["forward"] == forward]
        below = all(
            r["fd_mul"] <= r["aba_mul"] and r["fd_add"] <= r["aba_add"] for r in mine
        )
        assert (
            f"- {label}: at or below ABA in multiplications and in additions "
            "for every measured n (up to n = 3)" in md
        ) == below
        if not below:
            assert f"- {label}: above ABA from n = " in md
    assert any("n=3 kane" in ln for ln in lines)
    assert any("n=3 kane, forward=articulated_body" in ln for ln in lines)


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


def test_rhs_rows_include_the_articulated_body_recursion(tmp_path):
    # Pinocchio and a C compiler are part of the test environment (the
    # test extra, .ci/run): their absence fails here rather than passing
    # unseen.
    rows = bench_robots(
        tmp_path, lambda s: None, formulations=("kane",), parts={"rhs"}, repeats=1
    )["rhs"]
    assert [(r["system"], r["forward"]) for r in rows] == [
        ("panda", "mass_matrix"),
        ("panda", "articulated_body"),
        ("ur5", "mass_matrix"),
        ("ur5", "articulated_body"),
    ]
    for r in rows:
        # The same accelerations as Pinocchio's, and the ratio of the row.
        assert r["qdd_maxdiff"] < 1e-8
        assert r["c_us"] > 0 and r["aba_us"] > 0
        assert abs(r["ratio"] - r["c_us"] / r["aba_us"]) < 1e-2 * r["ratio"]
    text = (tmp_path / "robots.md").read_text()
    assert "| panda | kane | articulated_body |" in text
    # The flags the C was built with are those of a default build, stated.
    from numeric.compiled import default_cflags

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
