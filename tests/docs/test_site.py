"""The documentation site, built with warnings as errors and opened in a
real headless browser.

The build runs the tutorials (each asserts what it shows), so a broken
example, a broken cross-reference or a docstring Sphinx cannot read fails
here.  The site is opened from disk (``file://``), as a reader without
network would: pages must render their math (MathJax shipped with the
site) and figures, load nothing from the network, and log no console
error.  ``$EOMCOMPARE_DOCS_HTML`` names an already built site to check
instead of building one.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from browser import Browser, need_browser

# One build of the site, in one xdist worker (--dist loadgroup).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("docs")]

ROOT = Path(__file__).resolve().parents[2]

# MathJax has typeset the page: every math element holds its SVG.
_TYPESET = """
const math = document.querySelectorAll('.math');
const done = document.querySelectorAll('.math mjx-container svg');
return math.length > 0 && done.length >= math.length ? done.length : 0;
"""
# Formulas MathJax could not read are marked as errors in the output.
_MATH_ERRORS = """
return Array.from(document.querySelectorAll('[data-mjx-error], mjx-merror'))
    .map(e => e.getAttribute('data-mjx-error') || e.textContent);
"""
# Every resource the page loaded, and the scripts it names.
_RESOURCES = """
return performance.getEntriesByType('resource').map(r => r.name)
    .concat(Array.from(document.scripts).map(s => s.src).filter(s => s));
"""
# Display formulas wider than the text column (MathJax does not break them).
_TOO_WIDE = """
const column = document.querySelector('div.body').getBoundingClientRect().width;
return Array.from(document.querySelectorAll('div.math mjx-container svg'))
    .filter(s => s.getBoundingClientRect().width > column + 1)
    .map(s => s.closest('div.math').textContent.trim().slice(0, 60));
"""
_IMAGES = """
return Array.from(document.querySelectorAll('img.sphx-glr-single-img, img.sphx-glr-multi-img'))
    .map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0]);
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    built = os.environ.get("EOMCOMPARE_DOCS_HTML")
    if built:
        return Path(built)
    out = tmp_path_factory.mktemp("site")
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            "docs",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout[-5000:] + res.stderr[-5000:]
    assert (out / "index.html").is_file()
    return out


@pytest.fixture(scope="module")
def browser():
    need_browser()
    with Browser() as b:
        yield b


def test_no_page_loads_anything_from_the_network(site):
    """Scripts, styles and images of every page come from the site itself
    (links to other sites are fine: they are not loaded)."""
    pattern = re.compile(
        r"<(?:script|img|iframe)[^>]+src=[\"']?(?:https?:)?//"
        r"|<link[^>]+href=[\"']?(?:https?:)?//[^>]*>",
        re.I,
    )
    offenders = {}
    for page in site.rglob("*.html"):
        found = pattern.findall(page.read_text(encoding="utf-8"))
        stylesheets = [
            f
            for f in found
            if not f.lower().startswith("<link")
            or "stylesheet" in f.lower()
            or "preload" in f.lower()
        ]
        if stylesheets:
            offenders[str(page.relative_to(site))] = stylesheets[:3]
    assert offenders == {}
    assert len(list(site.rglob("*.html"))) >= 10


def _open(browser, page: Path) -> int:
    browser.console()  # forget messages of earlier pages
    browser.get(page)
    browser.wait_for("return document.readyState === 'complete'")
    return browser.wait_for(_TYPESET, timeout=60)


def _offline(resources) -> list[str]:
    return [r for r in resources if not r.startswith(("file:", "data:"))]


def test_home_page_renders_math_offline(site, browser, tmp_path):
    typeset = _open(browser, site / "index.html")
    assert typeset >= 1
    assert browser.execute(_MATH_ERRORS) == []
    assert _offline(browser.execute(_RESOURCES)) == []
    # The MathJax the page loaded is the copy shipped with the site.
    assert any("_static/mathjax/tex-svg.js" in r for r in browser.execute(_RESOURCES))
    links = browser.execute(
        "return Array.from(document.querySelectorAll('a.reference.internal'))"
        ".map(a => a.getAttribute('href'))"
    )
    assert "tutorials/index.html" in links and "api.html" in links
    browser.screenshot(tmp_path / "home.png")
    assert browser.console_errors() == []


def test_tutorial_renders_figures_and_math(site, browser, tmp_path):
    page = site / "tutorials" / "plot_3_bicycle_eigenvalues.html"
    assert page.is_file(), "the bicycle tutorial was not generated"
    assert _open(browser, page) >= 1
    assert browser.execute(_MATH_ERRORS) == []
    images = browser.execute(_IMAGES)
    assert images, "no figure on the tutorial page"
    assert all(loaded for _, loaded in images), images
    # The executed script's output is on the page.
    text = browser.execute("return document.body.innerText")
    assert "largest difference from the published values" in text
    assert _offline(browser.execute(_RESOURCES)) == []
    browser.screenshot(tmp_path / "tutorial.png")
    assert browser.console_errors() == []


def test_urdf_tutorial_shows_its_figure_and_the_check(site, browser):
    page = site / "tutorials" / "plot_8_robot_from_urdf.html"
    assert page.is_file(), "the URDF tutorial was not generated"
    browser.console()
    browser.get(page)
    browser.wait_for("return document.readyState === 'complete'")
    images = browser.execute(_IMAGES)
    assert images and all(loaded for _, loaded in images), images
    text = browser.execute("return document.body.innerText")
    assert "largest relative deviation from pinocchio.aba" in text
    assert browser.console_errors() == []


@pytest.mark.parametrize(
    "page",
    [
        "getting_started.html",
        "theory/index.html",
        "theory/kane.html",
        "theory/lagrange.html",
        "theory/modified_lagrange.html",
        "theory/gibbs_appell.html",
        "theory/operation_counts.html",
        "tutorials/plot_7_kolev_manipulator.html",
    ],
)
def test_every_formula_of_the_text_pages_typesets(site, browser, page):
    assert _open(browser, site / page) >= 1
    assert browser.execute(_MATH_ERRORS) == []
    assert browser.execute(_TOO_WIDE) == []
    assert browser.console_errors() == []
