"""The HTML report as a reader sees it: opened in headless Chromium.

Checks that the page loads without console errors, that every system's
equations are laid out by the browser's MathML engine (non-zero boxes,
``display: block math``) in a math font of the report's stack that is
installed, that the published and derived equations side by side fit a
1,400 px window, and saves a screenshot to ``test-artifacts/``
(``$EOMCOMPARE_ARTIFACTS`` to put it elsewhere).

Needs Chromium and its WebDriver (Debian: ``chromium chromium-driver``, as
``.ci/run`` installs) and ``selenium``.  Without them the test is skipped
locally; under CI (``$CI`` set) it fails instead, so the check cannot
silently vanish there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser import Browser, need_browser

# A headless browser typesetting every system: minutes of CPU, so out of
# the quick loop (-m "not slow"); CI runs it.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from eomcompare.compare import run
    from eomcompare.compare.report import write_report

    out = tmp_path_factory.mktemp("browser_report")
    # A small system, a closed loop with published equations (a misprint
    # among them) and a nonholonomic one: every kind of Equations part.
    res = run(
        ["double_pendulum", "four_bar", "wheelbarrow"],
        ["kane", "lagrange", "gibbs_appell"],
        variants={},
        t_final=0.2,
        n_states=5,
        jobs=1,
        progress=False,
        out=out,
    )
    paths = write_report(res, out)
    return res, paths["html"]


@pytest.fixture(scope="module")
def browser():
    need_browser()
    # The narrowest desktop window in which the side-by-side section used to
    # push the derived equations off-screen.
    with Browser(width=1400, height=2000) as b:
        yield b


def test_report_loads_without_console_errors_and_typesets_every_system(report, browser):
    res, page = report
    browser.get(Path(page))
    browser.wait_for("return document.readyState === 'complete'")
    errors = browser.console_errors()
    assert errors == [], errors

    # Every equations block: each <math> has a box and is laid out as MathML.
    blocks = browser.execute("""
        return Array.from(document.querySelectorAll('div.eqs')).map(d => ({
          id: d.id,
          same: (d.querySelector(':scope > p.same a') || {}).hash || null,
          maths: Array.from(d.querySelectorAll(':scope > math')).map(m => {
            const r = m.getBoundingClientRect();
            return {w: r.width, h: r.height,
                    display: getComputedStyle(m).display};
          })}));""")
    ids = {b["id"] for b in blocks}
    for label in res.frame["label"].unique():
        slug = "".join(c if c.isalnum() or c in "-_" else "_" for c in label)
        assert any(i.startswith(f"eq-{slug}-") for i in ids), (label, sorted(ids))
    assert len(blocks) == len(res.frame[res.frame["status"] == "ok"])
    typeset = {b["id"] for b in blocks if b["maths"]}
    for b in blocks:
        # Equations identical to another formulation's are shown once, the
        # other block pointing to them.
        if b["same"]:
            assert b["same"][1:] in typeset, b
            continue
        assert b["maths"], b["id"]
        for m in b["maths"]:
            assert m["w"] > 0 and m["h"] > 0, b
            assert m["display"] == "block math", b

    # A matrix is laid out as a table, not as a run of text: its rows stack.
    heights = browser.execute("""
        const t = document.querySelector('div.eqs mtable');
        return Array.from(t.querySelectorAll(':scope > mtr'))
                    .map(r => r.getBoundingClientRect().top);""")
    assert len(heights) >= 2 and heights == sorted(heights) and heights[0] < heights[-1]

    # The published equations beside the derived: the misprint is marked.
    flags = browser.execute(
        "return Array.from(document.querySelectorAll('.pub.misprint .flag'))"
        ".map(e => e.getBoundingClientRect().width);"
    )
    assert len(flags) == 2 and all(w > 0 for w in flags)  # (2-70), (2-111)

    artifacts = Path(os.environ.get("EOMCOMPARE_ARTIFACTS", "test-artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    browser.execute("document.querySelector('.side-by-side').scrollIntoView()")
    shot = artifacts / "report.png"
    browser.screenshot(shot)
    assert shot.stat().st_size > 10_000


def test_math_has_the_font_stack_and_one_of_its_fonts_is_installed(report, browser):
    """``math`` elements name the math fonts first (in Chromium on Linux the
    default draws the dots of q', q'' too faint to read and does not stretch
    matrix brackets), and the machine has one of them."""
    _, page = report
    browser.get(Path(page))
    browser.wait_for("return document.readyState === 'complete'")
    family = browser.execute(
        "return getComputedStyle(document.querySelector('div.eqs math')).fontFamily;"
    )
    names = [f.strip().strip('"') for f in family.split(",")]
    assert names[:3] == ["STIX Two Math", "Latin Modern Math", "DejaVu Math TeX Gyre"]
    assert names[-1] == "math"
    # A font is installed when text set in it, with a monospace fallback,
    # is not as wide as the monospace fallback alone.
    installed = browser.execute(
        """
        const width = f => {
          const s = document.createElement('span');
          s.style.font = '40px ' + f;
          s.textContent = 'mmmmmiiiii∑∫';
          document.body.appendChild(s);
          const w = s.getBoundingClientRect().width;
          s.remove();
          return w;
        };
        const mono = width('monospace');
        return arguments[0].filter(n => width('"' + n + '", monospace') !== mono);
        """,
        names[:-1],
    )
    assert installed, names


def test_published_and_derived_equations_fit_a_1400_px_window(report, browser):
    """Side by side, both columns start and end inside the window; wide
    equations scroll inside their own box instead of widening the page."""
    _, page = report
    browser.get(Path(page))
    browser.wait_for("return document.readyState === 'complete'")
    boxes = browser.execute(
        """
        return {
          window: document.documentElement.clientWidth,
          page: document.documentElement.scrollWidth,
          columns: Array.from(document.querySelectorAll('.side-by-side > div'))
            .map(d => {const r = d.getBoundingClientRect();
                       return {cls: d.className, left: r.left, right: r.right};})
        };"""
    )
    assert boxes["window"] <= 1400
    assert boxes["columns"], "no side-by-side section"
    assert any(c["cls"] == "derived" for c in boxes["columns"])
    for c in boxes["columns"]:
        assert 0 <= c["left"] < c["right"] <= boxes["window"], (c, boxes["window"])
    assert boxes["page"] <= boxes["window"], boxes
