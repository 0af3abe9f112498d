"""The numeric runtime: numbers from the symbolic contract.

- :mod:`eomcompare.numeric.model` turns an ``EquationsOfMotion`` into a numeric model
  (mass matrix and forcing, right-hand side, coordinate accelerations);
  it is the lambdify backend, and :mod:`eomcompare.numeric.compiled` the C one;
- :mod:`eomcompare.numeric.backends` registers them in ``BACKENDS`` (``eom.numeric(
  backend="c")``);
- :mod:`eomcompare.numeric.states` is the numeric half of a declaration: constraint
  residuals, Newton on the holonomic constraints, consistent and random
  states, energy;
- :mod:`eomcompare.numeric.integrate` integrates with constraint projection;
- :mod:`eomcompare.numeric.linearize` linearizes about an operating point;
- :mod:`eomcompare.numeric.trust` keeps the on-disk caches (the derivation cache's
  and the C backend's) private and signed, so that they load nothing
  another user wrote.

This package imports nothing of ``systems`` or ``formulations``: it reads
the objects they produce by their attributes, so importing it costs no
derivation machinery and creates no cycle.
"""

import os as _os
from pathlib import Path as _Path


def cache_dir(kind: str) -> _Path:
    """The one place caches live: ``<root>/<kind>``.

    The root is ``$EOMCOMPARE_CACHE`` if set, else
    ``$XDG_CACHE_HOME/eomcompare``, else ``~/.cache/eomcompare``; ``kind``
    is ``"derivations"`` (the harness's derivation cache) or ``"compiled"``
    (the C backend's modules).

    Examples
    --------
    >>> cache_dir("compiled").name
    'compiled'
    """
    if kind not in ("derivations", "compiled"):
        raise ValueError(
            f"`kind` must be one of ['derivations', 'compiled'], not {kind!r}"
        )
    env = _os.environ.get("EOMCOMPARE_CACHE")
    if env:
        return _Path(env) / kind
    return (
        _Path(_os.environ.get("XDG_CACHE_HOME", _Path.home() / ".cache"))
        / "eomcompare"
        / kind
    )
