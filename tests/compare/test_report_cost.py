"""What the report spares: workers that leave the run's heap alone, the cse
the counts were taken on shown instead of a second one, entries too long
for their budget left out without being printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from eomcompare.compare import load, run
from eomcompare.compare.cli import main as cli_main


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    return run(
        ["double_pendulum"],
        ["kane"],
        t_final=0.3,
        jobs=1,
        progress=False,
        use_cache=False,
        out=out,
    )


def _frozen_objects():
    import gc

    from eomcompare.compare.report_blocks import Para

    return [Para(f"{gc.get_freeze_count()} {gc.isenabled()}")]


def test_report_workers_leave_the_run_s_heap_to_its_process(
    result, tmp_path, monkeypatch
):
    """The report's workers are forked with the run's objects frozen: their
    collections never walk the heap they inherit (a fifth of a second each
    time on the main job's); the run's process gets its objects back."""
    import gc
    import multiprocessing as mp

    from eomcompare.compare import report as report_module
    from eomcompare.compare.report_blocks import Later

    if "fork" not in mp.get_all_start_methods():
        pytest.skip("parts are made in forked workers only where fork exists")

    def head(result, out, figures=True):
        rep = report_module.Report(Path(out))
        rep.h(1, "where the parts are made")
        rep.blocks += [Later(_frozen_objects), Later(_frozen_objects)]
        return rep, None

    monkeypatch.setattr(report_module, "_build_head", head)
    held = len(gc.get_objects())
    assert gc.get_freeze_count() == 0
    with report_module.start_report(load(result.out), tmp_path, jobs=2) as pending:
        paths = pending.finish()
    counts = re.findall(r"<p>(\d+) True</p>", paths["html"].read_text())
    assert len(counts) == 2 and all(int(c) >= held for c in counts)
    assert gc.get_freeze_count() == 0


def test_the_main_job_s_report_phase_leaves_the_run_s_heap_alone(tmp_path, monkeypatch):
    """After the cases, the sections' child (which times Kolev's
    derivations) is forked with the heap as it is; the sweep and the
    report run with the run's objects frozen (their workers inherit them
    so), and the command gives them back at its end."""
    import gc

    import eomcompare.compare.precision as precision
    import eomcompare.compare.sections as sections

    seen = {}

    def compute_sections(result, **kwargs):
        (tmp_path / "sections_freeze").write_text(str(gc.get_freeze_count()))
        return {}

    def quick_sweep(out, **kwargs):
        seen["sweep"] = gc.get_freeze_count()

    monkeypatch.setattr(sections, "compute_sections", compute_sections)
    monkeypatch.setattr(precision, "quick_sweep", quick_sweep)
    args = ["run", "--systems", "double_pendulum", "--formulations", "kane"]
    args += ["--t-final", "0.1", "--jobs", "1", "--quiet", "--no-cache"]
    assert cli_main([*args, "--precision", "quick", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "sections_freeze").read_text() == "0"
    assert seen["sweep"] > 0
    assert gc.get_freeze_count() == 0


def test_the_cse_shown_is_the_one_the_count_after_cse_was_taken_on():
    """The equations' cse'd form in the report is the common-subexpression
    elimination whose operations are the row's count after cse."""
    import sympy as sm

    from eomcompare.compare.equations import _cse_block
    from eomcompare.formulations import get_formulation
    from eomcompare.symbolic.counting import count_kinds
    from eomcompare.systems import get_system

    eom = get_formulation("lagrange").derive(get_system("rolling_disc"))
    M, f = eom.mass_matrix, eom.forcing
    shown = int(re.match(r"<p>(\d+) common subexpressions", _cse_block(M, f))[1])
    counted = sm.cse([*M, *f], order="none")
    assert shown == len(counted[0])
    ops = count_kinds(*[e for _, e in counted[0]], *counted[1])
    assert sum(ops.values()) == eom.op_counts["cse"]


def test_no_expression_is_typeset_shorter_than_its_leaves_allow():
    """What lets the report leave out an entry without printing it: every
    leaf is printed in at least MIN_LEAF_CHARS characters of MathML (signs
    and reciprocals, functions of time and their derivatives, roots)."""
    import sympy as sm
    import sympy.physics.mechanics as me

    from eomcompare.compare.equations import mathml, shortest_mathml
    from eomcompare.formulations import get_formulation
    from eomcompare.systems import get_system

    x, y = sm.symbols("x y")
    q = me.dynamicsymbols("q")
    t = me.dynamicsymbols._t
    edges = [x - y, -x, -x / y, 1 / x, sm.sqrt(x), 1 / sm.sqrt(x + y), x**-2]
    edges += [sm.Rational(-1, 2) * x, sm.exp(-x), q.diff(t), q.diff(t, 4), sm.S(0)]
    edges += [sm.sin(q) ** 2 * q.diff(t, 2), 0.5 * x, sm.pi * x]
    eom = get_formulation("lagrange").derive(get_system("rolling_disc"))
    entries = [*eom.mass_matrix, *eom.forcing]
    reps, reduced = sm.cse(entries, order="none")
    for e in edges + entries + [r for _, r in reps] + list(reduced):
        assert shortest_mathml(e) <= len(mathml(e)), e


def test_an_entry_beyond_the_budget_is_left_out_unprinted(monkeypatch):
    import sympy as sm

    from eomcompare.compare import equations

    long_sum = sum(sm.symbols("a0:1000"))
    assert equations.expression_ops(long_sum) <= equations.MAX_ENTRY_OPS

    def printed(expr):
        raise AssertionError("printed")

    monkeypatch.setattr(equations, "_mathml", printed)
    assert "(not typeset here)" in equations._entry_html("f_1", long_sum)
