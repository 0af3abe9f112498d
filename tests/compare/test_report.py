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
from helpers import file_size_limit

from compare import load, run
from compare.cli import main as cli_main
from compare.report import write_report

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


def _write(result, out, **kw):
    # Both optional sections derive systems again (minutes for the
    # bicycle); the tests that need them supply stand-ins.
    kw.setdefault("kolev", False)
    kw.setdefault("benchmarks", False)
    paths = write_report(result, out, **kw)
    return (
        paths,
        paths["markdown"].read_text(encoding="utf-8"),
        paths["html"].read_text(encoding="utf-8"),
    )


@pytest.fixture(scope="module")
def report(result, tmp_path_factory):
    """The report of the real run, with a failed (identifying columns only),
    a declined case and a scalable system added to its frame."""
    out = tmp_path_factory.mktemp("report")
    # The CLI's ``report`` path: the run read back from disk.
    loaded = _with_rows(load(result.out), [FAILED, DECLINED, *SCALING])
    paths, md, page = _write(loaded, out)
    return types.SimpleNamespace(
        out=out, paths=paths, md=md, page=page, frame=loaded.frame
    )


def _section(markdown: str, title: str) -> str:
    """The text of one ``## title`` section of the markdown report."""
    start = markdown.index(f"## {title}")
    end = markdown.find("\n## ", start + 1)
    return markdown[start : end if end >= 0 else None]


def _table_row(section: str, first_cell: str) -> list[str]:
    line = next(l for l in section.splitlines() if l.startswith(f"| {first_cell} |"))
    return [c.strip() for c in line.strip("|").split("|")]


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
        assert len(np.unique(image.reshape(-1, image.shape[2]), axis=0)) > 20
    assert "figures/scaling_n_link_pendulum.png" in _section(
        report.md, "Scaling with n"
    )


def test_every_case_appears_with_its_numbers(result, report):
    md, page = report.md, report.page
    for system in SYSTEMS:
        assert f"### {system}" in md
        assert f'<h3 id="{system}">{system}</h3>' in page
    systems = _section(md, "Systems")
    for row in result.frame.itertuples():
        section = systems[systems.index(f"### {row.system}") :]
        cells = _table_row(section, row.formulation)
        assert cells[1] == "ok"
        assert cells[3] == str(int(row.ops_raw)) and cells[4] == str(int(row.ops_cse))
        assert cells[5] == str(int(row.n_equations))
        assert float(cells[2]) == pytest.approx(row.derive_s, rel=5e-3)
        assert float(cells[10]) == pytest.approx(row.agreement_horizon, rel=5e-3)


def test_metadata_is_reported(result, report):
    run_section = _section(report.md, "Run")
    meta = result.metadata
    assert meta["created"] in run_section
    assert meta["git_commit"] in run_section
    assert f"sympy {meta['versions']['sympy']}" in run_section
    assert "t_final=0.5" in run_section and "reference=kane" in run_section


def test_failed_and_unsupported_rows_are_shown_with_their_errors(report):
    md, page = report.md, report.page
    failures = _section(md, "Failures")
    assert "double_pendulum/gibbs_appell" in failures
    assert FAILED["error"] in failures
    assert DECLINED["error"] in failures and "rotating_tube/lagrange" in failures
    # Escaped in the HTML: the message is text, not markup.
    assert html.escape(FAILED["error"]) in page
    assert "<singular>" not in page
    # The failed row in its system's table, its missing numbers as dashes.
    systems = _section(md, "Systems")
    dp = systems[
        systems.index("### double_pendulum") : systems.index("### rotating_tube")
    ]
    cells = _table_row(dp, "gibbs_appell")
    assert cells[1] == "error" and set(cells[2:]) == {"—"}
    assert "nan" not in md.lower()
    overview = _section(md, "Overview")
    header = _table_row(overview, "system")
    assert (
        _table_row(overview, "double_pendulum")[header.index("gibbs_appell")] == "error"
    )


def test_scaling_not_drawn_for_one_size(tmp_path):
    """An all-failed run still gives a report, which says what it lacks."""
    frame = pd.DataFrame([FAILED])
    lone = types.SimpleNamespace(frame=frame, trajectories={}, metadata={})
    _, md, page = _write(lone, tmp_path, benchmarks=False)
    assert "Not drawn" in _section(md, "Scaling with n")
    assert FAILED["error"] in _section(md, "Failures")
    assert not list((tmp_path / "figures").glob("*.png"))
    assert "data:image" not in page


def test_optional_sections_missing(result, tmp_path, monkeypatch):
    import bench.methods as ml

    monkeypatch.setitem(sys.modules, "references.published", None)  # import fails
    monkeypatch.delattr(ml, "kolev_cost_table")
    _, md, _ = _write(result, tmp_path, kolev=True, benchmarks=True, figures=False)
    assert "not available" in _section(md, "Benchmarks: published against computed")
    assert "not available" in _section(md, "Kolev's motivation")


def test_optional_sections_present(result, tmp_path, monkeypatch):
    import bench.methods as ml

    # Meijaard et al. (2007), M[0, 0] and a weave eigenvalue at v = 4 m/s.
    bench = types.ModuleType("references.published")
    bench.published_vs_computed = lambda formulations=None: pd.DataFrame(
        {
            "quantity": ["M[0,0]", "weave re, v=4"],
            "published": [80.81722, 0.41325331521125],
            "computed": [80.81722, 0.41325331521125],
        }
    )
    monkeypatch.setitem(sys.modules, "references.published", bench)
    monkeypatch.setattr(
        ml,
        "kolev_cost_table",
        lambda: pd.DataFrame(
            {
                "system": ["four_bar"],
                "variant": ["modified"],
                "ops_cse": [166.0],
                "error": [""],
            }
        ),
    )
    _, md, page = _write(result, tmp_path, kolev=True, benchmarks=True, figures=False)
    section = _section(md, "Benchmarks: published against computed")
    # The published digits survive: a three-digit table would hide a misfit.
    assert "0.41325331521125" in section and "80.81722" in section
    kolev = _section(md, "Kolev's motivation")
    assert "| four_bar | modified | 166 |" in kolev


def test_benchmark_function_that_raises(result, tmp_path, monkeypatch):
    bench = types.ModuleType("references.published")

    def published_vs_computed(formulations=None):
        raise RuntimeError(f"bicycle not declared for {formulations}")

    bench.published_vs_computed = published_vs_computed
    monkeypatch.setitem(sys.modules, "references.published", bench)
    _, md, _ = _write(result, tmp_path, benchmarks=True, figures=False)
    section = _section(md, "Benchmarks: published against computed")
    assert "not available" in section
    # The run's formulations were passed on.
    assert "bicycle not declared for ['kane', 'sympy_kane']" in section


def test_rejects_a_non_result(tmp_path):
    with pytest.raises(TypeError, match="ComparisonResult"):
        write_report(pd.DataFrame(), tmp_path)


def test_cost_chart_marks_compiled_systems_when_backends_are_mixed():
    from compare.report import _backend_labels

    frame = pd.DataFrame(
        {
            "label": ["a", "a", "b", "b"],
            "backend": ["c", "c", "lambdify", "lambdify"],
        }
    )
    assert _backend_labels(frame, ["a", "b"]) == ["a (C)", "b"]
    # One backend for the whole run: one scale, nothing to mark.
    same = frame.assign(backend="c")
    assert _backend_labels(same, ["a", "b"]) == ["a", "b"]
    assert _backend_labels(frame.assign(backend="lambdify"), ["a", "b"]) == ["a", "b"]


def test_legends_of_long_formulation_names_stay_inside_the_figure(
    tmp_path, monkeypatch
):
    # A formulation named with its options has a long legend entry; the
    # figure makes room for it instead of cutting it off at the edge.
    from compare import report as rep

    plt = rep._pyplot()  # pyplot with the report's fonts

    figures = []
    save = rep._save

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

    monkeypatch.setattr(rep, "_save", keep)
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
    styles = rep._formulation_styles(forms)
    assert rep._bars_figure(plt, frame, forms, styles, tmp_path / "cost.png")
    t = np.linspace(0, 1, 5)
    devs = {f: (t, 1e-14 * (1 + t)) for f in forms[1:]}
    assert rep._deviation_figure(
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
    # A file-size limit the figures fit in but the standalone HTML (which
    # embeds them) does not: the disk fills while the report is written.
    res = subprocess.run(
        [sys.executable, "-m", "compare", "report", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=file_size_limit(150_000),
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
    result, tmp_path, capsys
):
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
