"""What the report spares: workers that leave the run's heap alone (the
cse shown and the entries left out unprinted are test_report_equations')."""

from __future__ import annotations

import re

import pytest
from helpers import report_of_later_parts

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

    from eomcompare.compare import report as report_module

    report_of_later_parts(monkeypatch, "where the parts are made", _frozen_objects)
    gc.collect()  # the garbage of earlier tests is no object the run holds
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


def test_figures_drawn_by_a_shared_renderer_have_the_pixels_of_their_own(
    tmp_path, monkeypatch
):
    """save_figure draws figures of one size with one renderer (the labels'
    measures and parsed log-axis labels kept): each figure's file is the
    one a renderer of its own draws, whatever was drawn before it."""
    import numpy as np

    from eomcompare.compare import report_figures as rf

    plt = rf.pyplot()

    def draw(kind, path):
        fig, ax = plt.subplots(figsize=(6.0, 3.0))
        t = np.linspace(0.0, 2.0, 201)
        if kind == "log":
            ax.semilogy(t, 1e-12 + np.abs(np.sin(7 * t)) * 1e-3, label="deviation")
        else:
            ax.plot(t, np.cos(3 * t), "--", label="q1")
        ax.set_title(f"{kind}: against time")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        return rf.save_figure(fig, path).read_bytes()

    rf._RENDERERS.clear()
    shared = [
        draw(k, tmp_path / f"{i}.png") for i, k in enumerate("log lin log".split())
    ]
    assert len(rf._RENDERERS) == 1  # one size, one renderer
    monkeypatch.setattr(rf, "_share_renderer", lambda canvas: None)
    own = [draw(k, tmp_path / f"own{i}.png") for i, k in enumerate(["log", "lin"])]
    assert shared[0] == shared[2] == own[0]
    assert shared[1] == own[1]
    assert own[0] != own[1]
