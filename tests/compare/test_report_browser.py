"""The HTML report as a reader sees it: opened in headless Chromium.

Checks that the page loads without console errors, that every system's
equations are laid out by the browser's MathML engine (non-zero boxes,
``display: block math``), and saves a screenshot to ``test-artifacts/``
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
    from compare import run
    from compare.report import write_report

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
    paths = write_report(res, out, kolev=False)
    return res, paths["html"]


@pytest.fixture(scope="module")
def browser():
    need_browser()
    with Browser(width=1280, height=2000) as b:
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
    for b in blocks:
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
