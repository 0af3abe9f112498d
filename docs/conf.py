"""Sphinx configuration of the eomcompare documentation.

Build (warnings are errors)::

    pip install -e '.[docs]'
    sphinx-build -W --keep-going -b html docs docs/_build/html

The tutorials in ``docs/examples`` are sphinx-gallery scripts executed at
every build; each asserts what it shows, so a broken example fails the
build.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The packages are imported from this source tree (the project need not be
# installed to build its documentation), and the local extensions from
# docs/_ext.
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))
# Figures are written to files, never shown.
os.environ.setdefault("MPLBACKEND", "Agg")
# The garbage collector's thresholds of the test session (tests/conftest.py):
# young collections every 10,000 allocations and full ones rarely, since a
# full one walks a heap of sympy caches and derivations that only grows;
# with gallery_heap's freezing before each tutorial (sphinx_gallery_conf's
# reset_modules below), the build takes about 5 s less processor time (26 s
# against 31 s, measured side by side, three builds each).
gc.set_threshold(10_000, 20, 50)

project = "eomcompare"
author = "the eomcompare authors"
copyright = "the eomcompare authors"
release = version = "0.1.0"

extensions = [
    # The user guide is Markdown (docs/guide.md), read by MyST.
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    # numpydoc-style docstrings.  napoleon (part of Sphinx) rather than the
    # numpydoc package: it renders the same sections and tolerates the
    # shorter "a, b : text" entries some docstrings use, which numpydoc's
    # validation would turn into build errors under -W.
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "sphinx.ext.viewcode",
    "sphinx_gallery.gen_gallery",
    "mathjax_offline",
]

# ---------------------------------------------------------------------------
# Math without network access.
#
# The HTML must work offline, so MathJax cannot come from a CDN.  A copy of
# MathJax 3 is shipped by the ``sphinx-mathjax-offline`` package on PyPI
# (installed with the ``docs`` extra); the local extension
# ``_ext/mathjax_offline.py`` copies it into ``_static/mathjax`` of the built
# site.  MathJax rather than MathML generated at build time (latex2mathml)
# or images (imgmath): MathJax covers the LaTeX the theory pages use
# (aligned environments, \boldsymbol, matrices) without a TeX installation,
# and the pages read the same as sympy's and PyDy's.  The SVG output is
# chosen over CHTML because it needs no web fonts: browsers refuse fonts
# loaded from file:// pages (a CORS error), and SVG glyphs are drawn from
# the script itself, so the site renders when opened straight from disk.
# ---------------------------------------------------------------------------
mathjax_path = "mathjax/tex-svg.js"
mathjax3_config = {"tex": {"tags": "none"}}

# ---------------------------------------------------------------------------
# API reference
# ---------------------------------------------------------------------------
autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# The project's type aliases (symbolic.types) by name: without them every
# FloatArray is spelled out as numpy's full generic type, and the sympy
# aliases as a bare Any that says nothing.  Names only resolve in modules
# whose annotations are strings (``from __future__ import annotations``).
import eomcompare.symbolic.types as alias_types  # noqa: E402

autodoc_type_aliases = {
    name: f"eomcompare.symbolic.types.{name}" for name in alias_types.__all__
}
# Sphinx prints an alias nested in a generic (``tuple[Symbol, ...]``) by the
# repr of its placeholder, "TypeAliasForwardRef('eomcompare.symbolic.types.Symbol')";
# the alias's name is what a reader needs.
from sphinx.util.inspect import TypeAliasForwardRef  # noqa: E402

TypeAliasForwardRef.__repr__ = lambda self: str(self.name)  # type: ignore[method-assign]
autosummary_generate = False
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False

# Links into the documentation of the libraries this one builds on need the
# network to fetch their inventories; the build must not, so none are
# configured (intersphinx stays loaded for explicit, offline-safe use).
intersphinx_mapping: dict = {}

# ---------------------------------------------------------------------------
# Tutorials: executed at build time
# ---------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["tutorials"],
    # Every script runs (not only those named plot_*): each one asserts what
    # it shows, so running it is the test of the tutorial.
    "filename_pattern": r".*\.py$",
    "within_subsection_order": "FileNameSortKey",
    # A failing example fails the build.
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "plot_gallery": "True",
    "download_all_examples": False,
    "remove_config_comments": True,
    "capture_repr": ("_repr_html_", "__repr__"),
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    # Before each tutorial: matplotlib's and seaborn's defaults restored
    # (sphinx-gallery's own resets), and the heap left by Sphinx and the
    # earlier tutorials frozen out of the garbage collector's walks
    # (docs/_ext/gallery_heap.py).
    "reset_modules": ("matplotlib", "seaborn", "gallery_heap.freeze_heap"),
    "show_memory": False,
    "min_reported_time": 1,
    # The execution-times pages load jQuery and DataTables from CDNs; the
    # site must work offline.
    "write_computation_times": False,
}

# ---------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------
html_theme = "alabaster"
html_title = "eomcompare"
html_static_path = ["_static"]
html_theme_options = {
    "description": "Equations of motion, derived several ways, compared",
    "fixed_sidebar": True,
    "show_relbars": True,
}
templates_path: list = []
exclude_patterns = ["_build", "examples", "**.ipynb_checkpoints"]
nitpicky = False
suppress_warnings: list = []
