"""The comparison harness: every system with every formulation.

>>> from eomcompare.compare import run
>>> result = run(["double_pendulum"], ["kane", "sympy_kane"], t_final=0.2,
...              jobs=1, progress=False, use_cache=False)
>>> set(result.frame["status"])
{'ok'}
"""

from .cases import Case, RunOptions, expand_cases
from .notebook import register_notebook_display
from .runner import run
from .store import ComparisonResult, load

# In IPython and Jupyter, equations and systems are shown as HTML.
register_notebook_display()

__all__ = [
    "run",
    "load",
    "Case",
    "RunOptions",
    "ComparisonResult",
    "expand_cases",
    "bicycle_eigenvalues",
]


def __getattr__(name):
    # The benchmark module pulls in linearization and the bicycle; load it
    # only when asked for.
    if name == "bicycle_eigenvalues":
        from eomcompare.references.published import bicycle_eigenvalues

        return bicycle_eigenvalues
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
