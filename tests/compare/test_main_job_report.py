"""The report of the main job (``python -m eomcompare``: every catalogue
system but the heavy ones, every formulation of the default run), as a
reader opens it: at most 3 MB, and readable in a 1,400 px window of
headless Chromium (no console error, no part wider than the window).  The
report is generated output, not kept in git: these tests read the main job
that the session runs once, in one process, into a directory of its own
(``main_job`` in tests/conftest.py)."""

from __future__ import annotations

import pytest
from browser import Browser, need_browser

#: The largest report of the main job a reader is asked to open.
MAX_BYTES = 3_000_000

# The main job's tests run on one worker (the fixture's group, given at
# collection in tests/conftest.py).
pytestmark = pytest.mark.slow


def test_the_main_jobs_report_is_at_most_3_mb(main_job):
    size = (main_job / "report.html").stat().st_size
    assert size <= MAX_BYTES, f"{size:,} bytes"


def test_the_main_jobs_report_reads_in_a_1400_px_window(main_job):
    page = main_job / "report.html"
    need_browser()
    with Browser(width=1400, height=2000) as browser:
        browser.get(page)
        browser.wait_for("return document.readyState === 'complete'", timeout=120)
        assert browser.console_errors() == []
        boxes = browser.execute(
            """
            return {
              window: document.documentElement.clientWidth,
              page: document.documentElement.scrollWidth,
              figures: Array.from(document.querySelectorAll('figure img'))
                .map(i => i.getBoundingClientRect().right),
              columns: Array.from(document.querySelectorAll('.side-by-side > div'))
                .map(d => {const r = d.getBoundingClientRect();
                           return {left: r.left, right: r.right};})
            };"""
        )
    window = boxes["window"]
    assert window <= 1400
    assert boxes["page"] <= window, boxes["page"]
    assert boxes["figures"] and max(boxes["figures"]) <= window
    assert boxes["columns"], "no published equations beside the derived"
    for c in boxes["columns"]:
        assert 0 <= c["left"] < c["right"] <= window, (c, window)
