"""Ship MathJax with the built site, so math renders without network.

The MathJax 3 distribution is the one bundled by the
``sphinx-mathjax-offline`` package (installed with the ``docs`` extra); it
is copied into ``_static/mathjax`` of every HTML build.  ``conf.py`` points
``mathjax_path`` at the copy.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.util.fileutil import copy_asset

# The distribution installs under a directory whose name is not a valid
# module name; importlib still finds it by that name.
_PACKAGE = "sphinx-mathjax-offline"


def mathjax_source() -> Path:
    """Directory holding ``tex-svg.js`` and its components."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or spec.origin is None:
        raise ExtensionError(
            "MathJax for offline pages comes from the 'sphinx-mathjax-offline' "
            "package: pip install -e '.[docs]'"
        )
    source = Path(spec.origin).parent / "static" / "mathjax"
    if not (source / "tex-svg.js").is_file():
        raise ExtensionError(f"no MathJax found in {source}")
    return source


def _check(app):
    if app.builder.format == "html":
        mathjax_source()


def _copy(app, exc):
    if exc is None and app.builder.format == "html":
        copy_asset(str(mathjax_source()), str(Path(app.outdir) / "_static" / "mathjax"))


def setup(app):
    app.connect("builder-inited", _check)
    app.connect("build-finished", _copy)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
