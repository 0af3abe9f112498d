"""The comparison report: files, a standalone HTML page, every case shown,
failures with their errors, readable PNG figures, optional sections that
degrade to a note instead of failing."""

from __future__ import annotations

import base64
import dataclasses
import errno
import html
import os
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import (
    file_size_limit,
    md_section,
    md_table_row,
    report_of_later_parts,
    write_report_text,
)

from eomcompare.compare import load, run
from eomcompare.compare.cli import main as cli_main
from eomcompare.compare.report import write_report
from eomcompare.compare.sections import SectionTable, compute_sections, save_sections
from eomcompare.compare.summary import REPORT_COLUMNS

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SYSTEMS = ["double_pendulum", "rotating_tube"]
FORMULATIONS = ["kane", "sympy_kane"]


FAILED = {
    "system": "double_pendulum",
    "variant": np.nan,
    "formulation": "gibbs_appell",
    "status": "error",
    "error": "ZeroDivisionError: mass matrix <singular> at q=0",
}
DECLINED = {
    "system": "rotating_tube",
    "formulation": "lagrange",
    "status": "unsupported",
    "error": "lagrange does not handle rheonomic constraints",
}
# Rows of a scalable system at three sizes, without trajectories.
SCALING = [
    {
        "system": "n_link_pendulum",
        "variant": f"n={n}",
        "label": f"n_link_pendulum[n={n}]",
        "formulation": f,
        "status": "ok",
        "ops_raw": ops * 10,
        "ops_cse": ops,
        "derive_s": ops / 100,
    }
    for n, base in ((2, 60), (3, 140), (5, 400))
    for f, ops in (("kane", base), ("sympy_kane", base * 1.2))
]


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    return run(
        SYSTEMS,
        FORMULATIONS,
        t_final=0.5,
        jobs=1,
        progress=False,
        use_cache=False,
        out=out,
    )


def _with_rows(result, rows):
    frame = pd.concat([result.frame, pd.DataFrame(rows)], ignore_index=True)
    return dataclasses.replace(result, frame=frame)


@pytest.fixture(scope="module")
def report(result, tmp_path_factory):
    """The report of the real run, with a failed (identifying columns only),
    a declined case and a scalable system added to its frame."""
    out = tmp_path_factory.mktemp("report")
    # The CLI's ``report`` path: the run read back from disk.
    loaded = _with_rows(load(result.out), [FAILED, DECLINED, *SCALING])
    paths, md, page = write_report_text(loaded, out)
    return types.SimpleNamespace(
        out=out, paths=paths, md=md, page=page, frame=loaded.frame
    )


def test_files_and_standalone_html(report):
    out, page, md = report.out, report.page, report.md
    assert report.paths == {"markdown": out / "report.md", "html": out / "report.html"}
    # Standalone: every src is inline data and every link points inside the
    # page; no stylesheet or script file.
    links = re.findall(r'href\s*=\s*["\']([^"\']*)', page)
    assert links and all(h.startswith("#") for h in links), links
    ids = set(re.findall(r'id="([^"]+)"', page))
    assert {h[1:] for h in links} <= ids
    refs = re.findall(r'src\s*=\s*["\']([^"\']*)', page)
    assert refs, "the report has no figures"
    assert all(r.startswith("data:image/png;base64,") for r in refs), refs
    assert "<link" not in page and "<script" not in page
    # The HTML embeds exactly the PNGs of figures/; markdown links them all.
    pngs = sorted((out / "figures").glob("*.png"))
    assert len(refs) == len(pngs)
    linked = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert sorted(linked) == sorted(f"figures/{p.name}" for p in pngs)
    embedded = {base64.b64decode(r.split(",", 1)[1]) for r in refs}
    assert embedded == {p.read_bytes() for p in pngs}


def test_figures_are_valid_pngs(report):
    import matplotlib.image as mpimg

    names = {p.name for p in (report.out / "figures").glob("*.png")}
    # A trajectory and a deviation figure per run system, the cost chart and
    # the scaling of the system given at three sizes.
    expected = {
        f"{kind}_{s}.png" for s in SYSTEMS for kind in ("trajectories", "deviation")
    }
    expected |= {"cost.png", "scaling_n_link_pendulum.png"}
    assert names == expected
    for name in names:
        path = report.out / "figures" / name
        assert path.read_bytes()[:8] == PNG_MAGIC
        image = mpimg.imread(path)
        assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
        # Not a blank canvas: a drawn figure has many distinct colours.
        pixels = np.round(image.reshape(-1, image.shape[2]) * 255).astype(np.uint32)
        packed = sum(pixels[:, k] << (8 * k) for k in range(pixels.shape[1]))
        assert len(np.unique(packed)) > 20
    assert "figures/scaling_n_link_pendulum.png" in md_section(
        report.md, "Scaling with n"
    )


def test_no_figure_is_wider_than_the_page(report):
    """A figure wider than the page is shrunk by the browser until its
    labels cannot be read; every figure is drawn at most the page's width
    (CSS pixels at the figures' resolution)."""
    from PIL import Image

    from eomcompare.compare.report_figures import PAGE_PX

    assert f"max-width:{PAGE_PX}px" in report.page
    for path in (report.out / "figures").glob("*.png"):
        with Image.open(path) as image:
            assert 300 < image.width <= PAGE_PX, (path.name, image.size)


def test_a_cost_chart_of_many_systems_grows_down_the_page(tmp_path):
    """The main job's 17 system variants made the chart 3,580 px wide; 20
    variants of six formulations fit the page's width, one row per
    variant."""
    from PIL import Image

    from eomcompare.compare import report_figures as rep

    plt = rep.pyplot()
    forms = ["kane", "gibbs_appell", "lagrange", "modified_lagrange", "sympy_kane", "sympy_lagrange"]  # fmt: skip
    sizes = {}
    for n in (3, 20):
        frame = pd.DataFrame(
            [
                {
                    "status": "ok",
                    "label": f"n_link_pendulum_on_cart[n={k}]",
                    "formulation": f,
                    "ops_raw": 100 * k + i,
                    "ops_cse": 40 * k + i,
                    "derive_s": 0.1 * k,
                    "rhs_us": 10.0 + i,
                }
                for k in range(1, n + 1)
                for i, f in enumerate(forms)
            ]
        )
        styles = rep.formulation_styles(forms)
        path = rep.bars_figure(plt, frame, forms, styles, tmp_path / f"cost{n}.png")
        with Image.open(path) as image:
            sizes[n] = image.size
    assert sizes[20][0] <= rep.PAGE_PX and sizes[3][0] <= rep.PAGE_PX
    assert sizes[20][1] > 3 * sizes[3][1]


def test_every_case_appears_with_its_numbers(result, report):
    md, page = report.md, report.page
    for system in SYSTEMS:
        assert f"### {system}" in md
        assert f'<h3 id="{system}">{system}</h3>' in page
    systems = md_section(md, "Systems")
    for row in result.frame.itertuples():
        section = systems[systems.index(f"### {row.system}") :]
        cells = dict(zip(REPORT_COLUMNS, md_table_row(section, row.formulation)))
        assert cells["status"] == "ok"
        assert cells["ops_raw"] == str(int(row.ops_raw))
        assert cells["ops_cse"] == str(int(row.ops_cse))
        assert cells["n_equations"] == str(int(row.n_equations))
        # Times as compared: the median, the interquartile range and the
        # number of measurements, never the fastest alone.
        for col in ("derive_s", "rhs_us", "integrate_s"):
            got = re.fullmatch(r"(\S+) \((?:IQR (\S+), )?k=(\d+)\)", cells[col])
            assert got, cells[col]
            median, iqr, k = got.groups()
            assert float(median) == pytest.approx(
                getattr(row, f"{col}_median"), rel=5e-3
            )
            assert int(k) == getattr(row, f"{col}_k") >= 1
            assert (iqr is None) == (getattr(row, f"{col}_k") < 3)
            if iqr is not None:
                assert float(iqr) == pytest.approx(
                    getattr(row, f"{col}_spread"), rel=5e-2, abs=1e-12
                )
        assert float(cells["agreement_horizon"]) == pytest.approx(
            row.agreement_horizon, rel=5e-3
        )


def test_metadata_is_reported(result, report):
    run_section = md_section(report.md, "Run")
    meta = result.metadata
    assert meta["created"] in run_section
    assert meta["git_commit"] in run_section
    assert f"sympy {meta['versions']['sympy']}" in run_section
    assert "t_final=0.5" in run_section and "reference=kane" in run_section


def test_failed_and_unsupported_rows_are_shown_with_their_errors(report):
    md, page = report.md, report.page
    failures = md_section(md, "Failures")
    assert "double_pendulum/gibbs_appell" in failures
    assert FAILED["error"] in failures
    assert DECLINED["error"] in failures and "rotating_tube/lagrange" in failures
    # Escaped in the HTML: the message is text, not markup.
    assert html.escape(FAILED["error"]) in page
    assert "<singular>" not in page
    # The failed row in its system's table, its missing numbers as dashes.
    systems = md_section(md, "Systems")
    dp = systems[
        systems.index("### double_pendulum") : systems.index("### rotating_tube")
    ]
    cells = md_table_row(dp, "gibbs_appell")
    assert cells[1] == "error" and set(cells[2:]) == {"—"}
    assert "nan" not in md.lower()
    overview = md_section(md, "Overview")
    header = md_table_row(overview, "system")
    assert (
        md_table_row(overview, "double_pendulum")[header.index("gibbs_appell")]
        == "error"
    )


def test_scaling_not_drawn_for_one_size(tmp_path):
    """An all-failed run still gives a report, which says what it lacks."""
    frame = pd.DataFrame([FAILED])
    lone = types.SimpleNamespace(frame=frame, trajectories={}, metadata={})
    _, md, page = write_report_text(lone, tmp_path)
    assert "Not drawn" in md_section(md, "Scaling with n")
    assert FAILED["error"] in md_section(md, "Failures")
    assert not list((tmp_path / "figures").glob("*.png"))
    assert "data:image" not in page


def _stand_in_tables():
    # Meijaard et al. (2007), M[0, 0] and a weave eigenvalue at v = 4 m/s.
    bench = pd.DataFrame(
        {
            "quantity": ["M[0,0]", "weave re, v=4"],
            "published": [80.81722, 0.41325331521125],
            "computed": [80.81722, 0.41325331521125],
        }
    )
    kolev = pd.DataFrame(
        {
            "system": ["four_bar"],
            "variant": ["modified"],
            "ops_cse": [166.0],
            "error": [""],
        }
    )
    return {
        "benchmarks": SectionTable(bench, "from a stand-in"),
        "kolev": SectionTable(kolev, "from a stand-in"),
    }


def test_optional_sections_missing(result, tmp_path):
    _, md, _ = write_report_text(result, tmp_path, figures=False)
    assert "not computed" in md_section(md, "Benchmarks: published against computed")
    assert "not computed" in md_section(md, "Kolev's motivation")


def test_optional_sections_present(result, tmp_path):
    _, md, page = write_report_text(
        result, tmp_path, tables=_stand_in_tables(), figures=False
    )
    section = md_section(md, "Benchmarks: published against computed")
    # The published digits survive: a three-digit table would hide a misfit.
    assert "0.41325331521125" in section and "80.81722" in section
    kolev = md_section(md, "Kolev's motivation")
    assert "| four_bar | modified | 166 |" in kolev


def test_the_report_renders_kept_tables_and_derives_nothing(
    result, tmp_path, monkeypatch
):
    """Tables kept beside the run are what a later report shows; writing
    the report calls neither table's function."""
    import eomcompare.compare.kolev_costs as kc
    import eomcompare.references.published as rp

    def no(*args, **kwargs):
        raise AssertionError("the report derived a table")

    monkeypatch.setattr(kc, "kolev_cost_table", no)
    monkeypatch.setattr(rp, "published_vs_computed", no)
    save_sections(tmp_path, _stand_in_tables())
    _, md, _ = write_report_text(result, tmp_path, figures=False)
    assert "0.41325331521125" in md_section(
        md, "Benchmarks: published against computed"
    )
    assert "| four_bar | modified | 166 |" in md_section(md, "Kolev's motivation")
    # A damaged kept table is left out and the section says so.
    (tmp_path / "sections" / "kolev.json").write_text("{not json")
    _, md, _ = write_report_text(result, tmp_path, figures=False)
    assert "not computed" in md_section(md, "Kolev's motivation")
    with pytest.raises(TypeError, match="SectionTable"):
        write_report_text(
            result, tmp_path, tables={"kolev": pd.DataFrame()}, figures=False
        )


def test_report_command_computes_a_missing_table_once(result, tmp_path, monkeypatch):
    import eomcompare.compare.kolev_costs as kc

    calls = []

    def table(*args, **kwargs):
        calls.append(kwargs)
        return _stand_in_tables()["kolev"].frame

    monkeypatch.setattr(kc, "kolev_cost_table", table)
    out = _saved_run(result, tmp_path / "run")
    assert cli_main(["report", "--out", str(out)]) == 0
    assert cli_main(["report", "--out", str(out)]) == 0
    assert len(calls) == 1
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "| four_bar | modified | 166 |" in md_section(md, "Kolev's motivation")


def test_a_table_that_raises_is_an_error_not_an_absence(result, monkeypatch):
    """Only a table not computed is "not computed"; an exception in one
    is a bug in what it derives and propagates."""
    import eomcompare.compare.kolev_costs as kc
    import eomcompare.references.published as rp

    def published_vs_computed(formulations=None):
        raise RuntimeError(f"bicycle not declared for {formulations}")

    def broken(*args, **kwargs):
        raise KeyError("q1")

    monkeypatch.setattr(rp, "published_vs_computed", published_vs_computed)
    monkeypatch.setattr(kc, "kolev_cost_table", broken)
    # The run's formulations were passed on.
    with pytest.raises(RuntimeError, match=r"for \['kane', 'sympy_kane'\]"):
        compute_sections(result, benchmarks=True, kolev=False)
    with pytest.raises(KeyError, match="q1"):
        compute_sections(result)


def _h3_section(page: str, anchor: str) -> str:
    """The HTML of one system's ``<h3 id=anchor>`` section, to the next."""
    start = page.index(f'<h3 id="{anchor}"')
    end = page.find("<h3 ", start + 1)
    return page[start : end if end >= 0 else None]


@pytest.mark.slow
def test_published_and_kolev_sections_through_a_real_runs_cache(main_job):
    """The sections as the main job writes them, with no stand-in: the
    session's main job (the four-bar, Kolev's manipulator and every other
    system of the default comparison, through its derivation cache), its
    published equations checked against the run's q'' and the Kolev table
    read from the same cache."""
    md = (main_job / "report.md").read_text(encoding="utf-8")
    page = (main_job / "report.html").read_text(encoding="utf-8")
    # (2-70), a misprint, with its residual under each formulation: large
    # as printed, at rounding level corrected.
    assert "**(2-70)** in `kane_method_examples_fa.txt` — **misprint**" in md
    line = next(l for l in md.splitlines() if "Largest relative residual" in l)
    printed = [float(x) for x in re.findall(r"as printed ([0-9.e+-]+)", line)]
    corrected = [float(x) for x in re.findall(r"(?:kane|lagrange) ([0-9.e+-]+)", line)]
    assert printed and min(printed) > 1e-3
    assert corrected and max(corrected) < 1e-8
    # Kolev's (3.10) beside modified_lagrange, whose form it is.
    kolev = _h3_section(page, "kolev_manipulator")
    assert "(3.10) row 1" in kolev
    beside = kolev[kolev.index('<div class="derived">') :][:200]
    assert "derived by this run (modified_lagrange)" in beside
    assert "derived by this run (kane)" in _h3_section(page, "four_bar")
    # The Kolev table, from the run's cache: every variant of the four-bar.
    section = md_section(md, "Kolev's motivation")
    assert (
        "from kolev_cost_table(), the derivations read from the run's cache" in section
    )
    for variant in ("modified", "modified_implicit", "substituted", "multipliers"):
        assert f"| four_bar | {variant} |" in section
    assert "not available" not in section


def test_rejects_a_non_result(tmp_path):
    with pytest.raises(TypeError, match="ComparisonResult"):
        write_report(pd.DataFrame(), tmp_path)


def test_cost_chart_marks_compiled_systems_when_backends_are_mixed():
    from eomcompare.compare.report_figures import backend_labels

    frame = pd.DataFrame(
        {
            "label": ["a", "a", "b", "b"],
            "backend": ["c", "c", "lambdify", "lambdify"],
        }
    )
    assert backend_labels(frame, ["a", "b"]) == ["a (C)", "b"]
    # One backend for the whole run: one scale, nothing to mark.
    same = frame.assign(backend="c")
    assert backend_labels(same, ["a", "b"]) == ["a", "b"]
    assert backend_labels(frame.assign(backend="lambdify"), ["a", "b"]) == ["a", "b"]


def test_legends_of_long_formulation_names_stay_inside_the_figure(
    tmp_path, monkeypatch
):
    # A formulation named with its options has a long legend entry; the
    # figure makes room for it instead of cutting it off at the edge.
    from eomcompare.compare import report_figures as rep

    plt = rep.pyplot()  # pyplot with the report's fonts

    figures = []
    save = rep.save_figure

    def keep(fig, path):
        fig.canvas.draw()
        width = fig.get_window_extent().x1
        figures.append(
            [leg.get_window_extent().x1 <= width for leg in fig.legends]
            + [
                ax.get_legend().get_window_extent().x1 <= width
                for ax in fig.axes
                if ax.get_legend() is not None
            ]
        )
        return save(fig, path)

    monkeypatch.setattr(rep, "save_figure", keep)
    forms = ["kane", "kane_articulated", "lagrange:baumgarte=(5.0,5.0)"]
    frame = pd.DataFrame(
        {
            "status": "ok",
            "label": "spatial_chain[n=2]",
            "formulation": forms,
            "ops_raw": [900, 300, 1600],
            "ops_cse": [200, 270, 310],
            "derive_s": [0.05, 0.03, 0.02],
            "rhs_us": [10.0, 11.0, 10.5],
        }
    )
    styles = rep.formulation_styles(forms)
    assert rep.bars_figure(plt, frame, forms, styles, tmp_path / "cost.png")
    t = np.linspace(0, 1, 5)
    devs = {f: (t, 1e-14 * (1 + t)) for f in forms[1:]}
    assert rep.deviation_figure(
        plt, "spatial_chain[n=2]", devs, "kane", 1e-6, styles, tmp_path / "dev.png"
    )
    assert len(figures) == 2 and all(figures[0]) and all(figures[1])
    assert all(len(f) == 1 for f in figures)


# ----------------------------------------------------------------------
# The report command on a saved run: its own files only, written whole
# ----------------------------------------------------------------------
ROOT = Path(__file__).resolve().parents[2]


def _saved_run(result, path: Path) -> Path:
    shutil.copytree(result.out, path)
    for name in ("report.md", "report.html", "figures"):
        assert not (path / name).exists()
    return path


@pytest.mark.slow
def test_the_report_replaces_only_figures_of_its_own(result, tmp_path):
    out = _saved_run(result, tmp_path / "run")
    # The tables kept beside the run: the command draws the figures and
    # derives no Kolev table (seconds of derivations the test does not read).
    save_sections(out, _stand_in_tables())
    figures = out / "figures"
    figures.mkdir()
    (figures / "mine.png").write_bytes(b"a user's own figure")
    # A figure an earlier report drew for a system no longer in the run.
    (figures / "trajectories_gone.png").write_bytes(PNG_MAGIC)
    assert cli_main(["report", "--out", str(out)]) == 0
    assert (figures / "mine.png").read_bytes() == b"a user's own figure"
    assert not (figures / "trajectories_gone.png").exists()
    drawn = sorted(p.name for p in figures.glob("*.png"))
    assert "trajectories_double_pendulum.png" in drawn and "cost.png" in drawn
    assert not [p for p in out.rglob("*") if ".tmp" in p.name]


@pytest.mark.slow
def test_a_report_that_cannot_be_written_keeps_the_one_before(result, tmp_path):
    out = _saved_run(result, tmp_path / "run")
    (out / "report.md").write_text("the report before\n")
    (out / "report.html").write_text("<p>the report before</p>\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    # A file-size limit the figures and the markdown fit in but the
    # standalone HTML (which embeds the figures) does not: the disk fills
    # while the report is written.  The sizes are those of the same report
    # written without a limit.
    probe = _saved_run(result, tmp_path / "probe")
    save_sections(out, _stand_in_tables())
    save_sections(probe, _stand_in_tables())
    write_report(load(probe), probe)
    others = [p.stat().st_size for p in (probe / "figures").glob("*.png")]
    others.append((probe / "report.md").stat().st_size)
    page = (probe / "report.html").stat().st_size
    assert max(others) < page
    res = subprocess.run(
        [sys.executable, "-m", "eomcompare", "report", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=file_size_limit((max(others) + page) // 2),
    )
    assert res.returncode == 3, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and str(out) in lines[0], res.stderr
    assert os.strerror(errno.EFBIG) in lines[0]
    assert (out / "report.md").read_text() == "the report before\n"
    assert (out / "report.html").read_text() == "<p>the report before</p>\n"
    assert not [p for p in out.rglob("*") if ".tmp" in p.name]


def test_the_report_command_refuses_counts_that_are_not_counts(
    result, tmp_path, capsys, monkeypatch
):
    import eomcompare.compare.kolev_costs as kc

    derived = []
    monkeypatch.setattr(kc, "kolev_cost_table", lambda *a, **k: derived.append(a))
    out = _saved_run(result, tmp_path / "run")
    frame = pd.read_csv(out / "results.csv")
    frame["ops_raw"] = frame["ops_raw"].astype(object)
    frame.loc[0, "ops_raw"] = "1e400"  # read back as inf
    frame.to_csv(out / "results.csv", index=False)
    assert cli_main(["report", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert str(out / "results.csv") in err[0]
    assert f"{frame.loc[0, 'case']}: ops_raw is inf, not a count" in err[0]
    assert not (out / "report.html").exists()
    # Refused before the run's missing tables were derived.
    assert derived == []


def test_the_cost_section_states_the_growth_with_n_and_its_assumption(report):
    section = md_section(report.md, "Cost per evaluation")
    assert "power law assumed" in section
    # kane's rows of the scalable system: 60, 140, 400 operations at
    # n = 2, 3, 5; the least-squares slope of log ops on log n.
    slope = np.polyfit(np.log([2, 3, 5]), np.log([60, 140, 400]), 1)[0]
    assert f"kane n^{slope:.2g}" in section


def _text_without_times(path: Path) -> str:
    # The report's own timestamp is the one line that differs.
    return re.sub(r"\d{4}-\d\d-\d\dT[\d:]+Z", "", path.read_text(encoding="utf-8"))


def test_the_parallel_report_equals_the_serial_one(result, tmp_path):
    from eomcompare.compare.report import start_report

    loaded = _with_rows(load(result.out), [FAILED, DECLINED, *SCALING])
    texts = []
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        shutil.copytree(result.out, out)
        with start_report(loaded, out, jobs=jobs) as pending:
            paths = pending.finish()
        figures = sorted((out / "figures").glob("*.png"))
        texts.append(
            (
                _text_without_times(paths["markdown"]),
                _text_without_times(paths["html"]),
                [(p.name, p.read_bytes()) for p in figures],
            )
        )
    assert texts[0][2], "figures drawn"
    assert texts[0] == texts[1]


def _failing_part():
    raise RuntimeError("a part failed in its worker")


def test_a_part_that_raises_in_a_worker_fails_the_report(result, tmp_path, monkeypatch):
    from eomcompare.compare import report as report_module

    report_of_later_parts(monkeypatch, "a report whose parts fail", _failing_part)
    pending = report_module.start_report(load(result.out), tmp_path, jobs=2)
    # The worker's exception is finish's, not a hang; no report is written.
    with pytest.raises(RuntimeError, match="a part failed in its worker"):
        pending.finish()
    assert report_module._PARTS == []
    assert not (tmp_path / "report.html").exists()


def test_a_report_not_finished_stops_its_workers(result, tmp_path):
    from eomcompare.compare.report import start_report

    if not hasattr(os, "fork"):
        pytest.skip("parts are made in forked workers only where fork exists")
    with start_report(load(result.out), tmp_path, jobs=2) as pending:
        workers = pending._parts.pool.pids
        assert len(workers) == 2
        assert all(Path(f"/proc/{pid}").exists() for pid in workers)
    # Leaving the block without finishing (an interrupted main job) kills
    # and reaps the workers and writes no report.
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers)
    assert not (tmp_path / "report.html").exists()


def test_the_report_workers_add_no_thread_to_the_run(result, tmp_path):
    # A multiprocessing.Pool kept three threads in the run's process, and
    # terminating it while busy stalled for minutes; the workers are
    # driven from the calling thread alone.
    import threading

    from eomcompare.compare.report import start_report

    before = threading.active_count()
    with start_report(load(result.out), tmp_path, jobs=2) as pending:
        assert pending._parts.pool is not None
        assert threading.active_count() == before
        pending.finish()
    assert threading.active_count() == before
