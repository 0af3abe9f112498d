"""The report's findings and its counts of cases: one vocabulary in every
section, class winners only where they win, classes by the declaration,
the published misprints, refusals named together."""

from __future__ import annotations

import types

import pandas as pd
from helpers import md_section, md_table_row, write_report_text

# A run with one case of every kind: a failure, a peer's limitation (sympy_kane
# on the wheelbarrow, whose equations are 0/0 at heading 0) and a refusal.
KINDS_RUN = [
    {
        "system": "wheelbarrow",
        "formulation": f,
        "status": "ok",
        "ops_cse": ops,
        "qdd_max_rel_dev": 0.0,
        "system_class": "nonholonomic",
    }
    for f, ops in (("kane", 120), ("gibbs_appell", 150))
] + [
    {
        "system": "wheelbarrow",
        "formulation": "sympy_kane",
        "status": "error",
        "peer_limitation": True,
        "error": "SingularConfigurationError: sympy_kane: the equations of "
        "'wheelbarrow' are not finite at t=0, phi=0, theta=0, X_c=0, Y_c=0",
    },
    {
        "system": "wheelbarrow",
        "formulation": "lagrange",
        "status": "timeout",
        "peer_limitation": False,
        "error": "no result within 60 s",
    },
    {
        "system": "rotating_tube",
        "formulation": "modified_lagrange",
        "status": "unsupported",
        "peer_limitation": False,
        "error": "modified_lagrange needs holonomic constraints to eliminate",
    },
    {
        "system": "rotating_tube",
        "formulation": "kane",
        "status": "ok",
        "ops_cse": 40,
        "qdd_max_rel_dev": 0.0,
        "system_class": "unconstrained,rheonomic",
    },
]


def test_header_findings_and_failures_count_every_case_alike(tmp_path):
    """The header, the Findings and the Failures section name a failure, a
    peer's limitation and a refusal with one vocabulary and one count."""
    run_ = types.SimpleNamespace(
        frame=pd.DataFrame(KINDS_RUN), trajectories={}, metadata={}
    )
    _, md, page = write_report_text(run_, tmp_path, figures=False)
    counts = "3 ok, 1 failed (1 timeout), 1 peer limitation, 1 refused"
    header = md[: md.index("## Findings")]
    findings_ = md_section(md, "Findings")
    failures = md_section(md, "Failures")
    for text in (header, findings_, failures):
        assert counts in text
    # Findings: each case under its kind, with the row's own reason.
    assert "failed: lagrange (timeout: no result within 60 s)" in findings_
    assert (
        "peer limitation (not a failure): sympy_kane (error: "
        "SingularConfigurationError" in findings_
    )
    assert "theta=0" in findings_
    assert (
        "modified_lagrange: unsupported (modified_lagrange needs holonomic "
        "constraints" in findings_
    )
    # Failures: three tables, each case in its own and nowhere else.
    failed = failures[failures.index("Failed (1)") : failures.index("Peer limit")]
    limited = failures[
        failures.index("Peer limitations (1") : failures.index("Refused")
    ]
    refused = failures[failures.index("Refused (1") :]
    assert "wheelbarrow/lagrange" in failed and "sympy_kane" not in failed
    assert "wheelbarrow/sympy_kane" in limited and "wheelbarrow/lagrange" not in limited
    assert "rotating_tube/modified_lagrange" in refused and "sympy_kane" not in refused
    assert "No case failed" not in failures
    # The overview names the limitation and the refusal as such.
    overview = md_section(md, "Overview")
    head = md_table_row(overview, "system")
    row = md_table_row(overview, "wheelbarrow")
    assert row[head.index("sympy_kane")] == "peer limitation (error)"
    assert row[head.index("lagrange")] == "timeout"
    assert md_table_row(overview, "rotating_tube")[head.index("modified_lagrange")] == (
        "refused"
    )
    # The peer's row is not painted as a failure in the HTML.
    assert "peer limitation (error)" in page


def test_a_class_winner_is_named_only_where_it_wins():
    """The lowest mean ratio of a class that wins none of its systems is no
    winner; the class rule is stated; ratios carry three digits."""
    from eomcompare.compare.findings import CLASS_RULE, findings

    rows = [
        # c is second on both systems, a and b each win one by far.
        ("s1", "a", 100), ("s1", "b", 400), ("s1", "c", 130),
        ("s2", "a", 400), ("s2", "b", 100), ("s2", "c", 130),
    ]  # fmt: skip
    frame = pd.DataFrame(
        [
            {
                "system": s,
                "formulation": f,
                "status": "ok",
                "ops_cse": v,
                "system_class": "unconstrained",
            }
            for s, f, v in rows
        ]
    )
    fnd = findings(frame)
    (sentence,) = fnd.by_class
    assert "best on 0" not in sentence
    assert "no winner (c has the lowest mean ratio, 1.3," in sentence
    assert CLASS_RULE in fnd.markdown()
    # Three significant digits: 130/100 next to 100 is 1.3, 123/100 1.23.
    frame.loc[frame["ops_cse"] == 130, "ops_cse"] = 123
    assert "next c 123, 1.23×" in " ".join(
        fnd.sentences() + findings(frame).sentences()
    )


def test_classes_follow_the_declaration_not_the_topology():
    """One rule for every system: a four-bar in its one minimal coordinate
    is unconstrained, in redundant coordinates it has holonomic
    constraints, as has Kolev's manipulator in centroid coordinates."""
    from eomcompare.compare.findings import system_classes
    from eomcompare.systems import get_system

    assert system_classes(get_system("four_bar", coordinates="minimal")) == [
        "unconstrained"
    ]
    assert system_classes(get_system("four_bar", coordinates="redundant")) == [
        "holonomic constraints"
    ]
    assert system_classes(get_system("kolev_manipulator")) == ["holonomic constraints"]
    assert system_classes(get_system("rotating_tube")) == ["unconstrained", "rheonomic"]


def test_findings_list_the_misprints_of_the_published_equations():
    from eomcompare.compare.findings import findings

    systems_ = ["four_bar", "wheelbarrow", "rod_slider_shaft", "kolev_manipulator"]
    frame = pd.DataFrame(
        {
            "system": systems_ + ["solar_panels"],
            "formulation": "kane",
            "status": "ok",
        }
    )
    found = findings(frame).misprints
    text = "\n".join(found)
    for system in systems_:
        assert any(m.startswith(f"{system} (") for m in found), system
    # The misprints themselves, as re-derivation found them.
    assert "print m3 where the coupler-rocker mass m2 is meant" in text
    assert "print u2' where u1' is meant" in text
    assert "R2(R->P) printed as (2-182) is a misprint" in text
    assert "(3.2) and the first term of T in (3.5)" in text
    # Equations confirmed exactly are not misprints.
    assert not any(m.startswith("solar_panels") for m in found)


def test_the_cost_table_reads_per_evaluation_counts_when_the_run_has_them():
    """Systems × formulations, the fewest operations of a system in bold;
    ``ops_per_evaluation`` (M, f and the solve) where the run has it, else
    ``ops_cse`` with its multiplications and additions, labelled."""
    from eomcompare.compare.tables import cost_table

    kinds = '{"MUL": 30, "DIV": 2, "ADD": 10, "SUB": 5, "SIN": 3}'
    frame = pd.DataFrame(
        {
            "system": ["four_bar"] * 3,
            "formulation": ["kane", "lagrange", "modified_lagrange"],
            "status": ["ok", "ok", "ok"],
            "ops_cse": [54, 47, 149],
            "ops_by_kind": [kinds, kinds, kinds],
            "n_unknowns": [3, 5, 1],
        }
    )
    page, md = cost_table(frame)
    assert "(column ops_cse)" in md and "solve for the unknowns not included" in md
    assert (
        "| four_bar | 54 (32×, 15±); z 3 | **47 (32×, 15±); z 5** | 149 (32×, 15±); z 1 |"
        in md
    )
    assert page.count("<b>") == 1
    # With the solve counted, the one-unknown form is cheapest.
    frame["ops_per_evaluation"] = [120, 190, 160]
    page, md = cost_table(frame)
    assert "(column ops_per_evaluation)" in md
    assert "| four_bar | **120; z 3** | 190; z 5 | 160; z 1 |" in md
    assert cost_table(frame.assign(status="error")) is None


def test_refusals_with_one_reason_are_named_together():
    """The Lagrange family refusing a system for one reason reads as one
    refusal of several formulations, not as repeated sentences."""
    from eomcompare.compare.findings import findings

    reason = "Dmc: the contact point's coordinates have no speed of their own"
    frame = pd.DataFrame(
        {
            "system": ["contact_point_disc"] * 3,
            "formulation": ["kane", "lagrange", "modified_lagrange"],
            "status": ["ok", "unsupported", "unsupported"],
            "error": ["", reason, reason],
        }
    )
    (entry,) = findings(frame).per_system
    # The whole family in the run declines alike: named as the issue words
    # it, "Lagrange family: unsupported (reason)".
    assert entry["refusals"] == [f"Lagrange family: unsupported ({reason})"]
