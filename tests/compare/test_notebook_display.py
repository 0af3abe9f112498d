"""What a notebook shows for the objects a user holds: a declaration, its
equations of motion and a comparison run (``_repr_html_``)."""

from __future__ import annotations

import re

import pandas as pd

from eomcompare.compare.notebook import (
    eom_html,
    register_notebook_display,
    system_html,
)
from eomcompare.compare.store import ComparisonResult
from eomcompare.formulations import get_formulation
from eomcompare.systems import get_system


def test_a_system_shows_its_coordinates_speeds_constraints_bodies_and_loads():
    ms = get_system("four_bar", coordinates="redundant")
    page = system_html(ms)
    # q1, q2, q3 typeset as subscripted identifiers, q2 and q3 dependent.
    q = [f"<msub><mi>q</mi><mi>{i}</mi></msub>" for i in (1, 2, 3)]
    coords = re.search(
        r"coordinates \(3; 1 degrees of freedom\)</th><td[^>]*>(.*?)</td>", page
    )
    assert coords and all(x in coords.group(1) for x in q)
    dependent = re.search(r"dependent coordinates</th><td[^>]*>(.*?)</td>", page)
    assert q[0] not in dependent.group(1) and q[1] in dependent.group(1)
    assert "speeds (3)" in page
    # The two loop equations, each "= 0", in one MathML table.
    holo = re.search(r"holonomic constraints \(2\)</th><td[^>]*>(.*?)</td>", page)
    assert holo.group(1).count("<mtr>") == 2
    assert holo.group(1).count("<mo>=</mo><mn>0</mn>") == 2
    assert 'nonholonomic constraints (0)</th><td style="text-align:left">—' in page
    assert f"bodies ({len(ms.bodies)})" in page
    for body in ms.bodies:
        assert body.name in page
    assert f"loads ({len(ms.loads)})" in page and "force at" in page


def test_equations_of_motion_show_sizes_counts_and_the_equations():
    eom = get_formulation("lagrange").derive(
        get_system("four_bar", coordinates="redundant")
    )
    page = eom_html(eom)
    # Three coordinates and two multipliers: five equations in five unknowns.
    assert (
        'equations, unknowns, multipliers</th><td style="text-align:left">5, 5, 2'
        in page
    )
    raw, cse = eom.op_counts["raw"], eom.op_counts["cse"]
    assert f"{raw}, {cse}" in page
    assert "<math" in page and "<mtable" in page
    # Small: shown whole, not collapsed.
    assert "<details><summary>the equations" not in page


def test_large_equations_are_collapsed_to_their_structure():
    """Beyond LARGE_OPS operations (five links: over a thousand) the
    equations show their structure, collapsed."""
    eom = get_formulation("kane").derive(get_system("n_link_pendulum", n=5))
    page = eom_html(eom)
    assert page.count("<details><summary>the equations (5 rows") == 1
    assert "<svg" in page  # the sparsity pattern of M
    assert "M is 5×5" in page


def test_a_run_shows_its_findings_and_overview_table():
    frame = pd.DataFrame(
        [
            {"system": "double_pendulum", "formulation": "kane", "status": "ok",
             "qdd_max_rel_dev": 0.0, "ops_cse": 48},
            {"system": "double_pendulum", "formulation": "sympy_kane",
             "status": "ok", "qdd_max_rel_dev": 3.3e-16, "ops_cse": 56},
            {"system": "wheelbarrow", "formulation": "sympy_kane", "status": "error",
             "peer_limitation": True, "error": "SingularConfigurationError: 0/0"},
        ]
    )  # fmt: skip
    res = ComparisonResult(frame=frame, trajectories={}, metadata={})
    page = res._repr_html_()
    assert "Overview" in page
    # The overview: one row per system, one column per formulation.
    table = page[page.index("Overview") :]
    assert "<th>kane</th>" in table and "<th>sympy_kane</th>" in table
    assert "<td>3.3e-16</td>" in table
    assert "<td>peer limitation (error)</td>" in table
    assert "2 ok, 1 peer limitation" in page


def test_outside_ipython_nothing_is_registered():
    # The classes are shown through IPython's formatter, which exists only
    # in a running shell; a plain interpreter registers nothing.
    assert register_notebook_display() is False
