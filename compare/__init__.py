"""The comparison harness: every system with every formulation.

>>> from compare import run
>>> result = run(["double_pendulum"], ["kane", "sympy_kane"], t_final=0.2,
...              jobs=1, progress=False, use_cache=False)
>>> set(result.frame["status"])
{'ok'}
"""
from .runner import (Case, ComparisonResult, RunOptions, expand_cases, load,
                     run)

__all__ = ["run", "load", "Case", "RunOptions", "ComparisonResult",
           "expand_cases"]
