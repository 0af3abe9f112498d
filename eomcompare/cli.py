"""The command line of the package: ``python -m eomcompare`` and the
``eomcompare`` script.

The harness's commands (``run``, ``report``, ``regress``, ``baseline``,
``list``, ``precision``) are :mod:`eomcompare.compare.cli`'s; ``bench``
runs the benchmark (:mod:`eomcompare.bench.suite`), which measures the
harness and so sits above it: this module, on top of both, is where the
two meet.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None, *, started: float | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); returns the
    exit status.  ``started`` (a ``time.perf_counter()`` value) is when the
    command began, for the wall time ``run`` reports last."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "bench":
        try:
            from eomcompare.bench import suite
        except ImportError as exc:
            sys.exit(f"the benchmark is not available: {exc}")
        return suite.main(argv[1:]) or 0
    from eomcompare.compare.cli import main as harness_main

    return harness_main(argv, started=started)
