"""The garbage collector during the build, which runs every tutorial in the
one Sphinx process.

Each tutorial leaves that process's heap larger: sympy's caches (sized by
``$SYMPY_CACHE_SIZE``, 20,000 entries per function in the test session),
the derivations and models of earlier tutorials, the modules they import.
A full collection walks all of it, and collections come both from the
allocations of the derivations and from sphinx-gallery, which calls
``gc.collect()`` before every tutorial.  None of that heap becomes
garbage again while the build runs, so before each tutorial it is moved
out of the collector's sight (``gc.freeze``): a collection then walks only
what the running tutorial allocated.  Cycles an earlier tutorial left
behind stay in memory until the build exits (about 25 MB over the eight
tutorials).
"""

from __future__ import annotations

import gc
from typing import Any


def freeze_heap(gallery_conf: Any, fname: Any) -> None:
    """sphinx-gallery's ``reset_modules`` hook, called before each
    tutorial: what earlier tutorials and Sphinx left alive is no longer
    walked by the garbage collector."""
    gc.freeze()
