"""The compiled backend's compiler prepared ahead of a run.

``python -m eomcompare`` running cases compiled (the default comparison)
calls :func:`start_for` first thing: a child process probes the compiler
and builds the extension that calls every library into the compiled cache
(:func:`eomcompare.numeric.backends.prepare_compiler`, a compiler run of a
third of a second) while the command imports the package, on the core the
imports leave idle.  The run calls :func:`wait` before it measures anything
(its calibration) and prepares the compiler itself, which then loads the
extension from the cache instead of compiling it.

Nothing is built ahead for a cache that is not this user's (the process
would build in a temporary directory of its own): the run then builds as
it always does.  This module imports nothing heavy, so that the child
starts before the command's imports.
"""

from __future__ import annotations

import atexit

from .child import Child, wait_any

__all__ = ["start_for", "wait"]

#: The child preparing the compiler, until :func:`wait` has waited for it.
_AHEAD: list[Child] = []

#: Seconds the child may take (the build takes about a second): past them
#: it is killed, and the run builds the extension itself, so a compiler
#: that hangs, or a lock held elsewhere, cannot hold the run at its start.
AHEAD_TIMEOUT = 120.0


def _prepare() -> None:
    import warnings

    from eomcompare.numeric import cache_dir

    from .backends import prepare_compiler
    from .trust import CacheRefused, ensure_key, private_dir

    try:
        ensure_key()
        private_dir(cache_dir("compiled"))
    except CacheRefused:
        return  # a refused cache: the run's own build says why
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepare_compiler()


def _runs_cases_compiled(argv: list[str]) -> bool:
    """Whether the command line ``argv`` runs cases with the compiled
    backend: ``run`` or the default command (no command word, as
    :func:`eomcompare.compare.cli.main` reads it), without ``--backend
    lambdify`` or ``--help``."""
    if argv and not argv[0].startswith("-") and argv[0] != "run":
        return False
    if {"-h", "--help"} & set(argv):
        return False
    if "--backend=lambdify" in argv:
        return False
    return not any(a == "--backend" and b == "lambdify" for a, b in zip(argv, argv[1:]))


def start_for(argv: list[str]) -> None:
    """Start preparing the compiler ahead where the command line ``argv``
    runs cases compiled (at most one child per process; it is waited for
    at exit if the command never waits)."""
    if _AHEAD or not _runs_cases_compiled(argv):
        return
    # Named as a compiler's helper, not as the run's case workers are.
    _AHEAD.append(Child(_prepare, timeout=AHEAD_TIMEOUT, process_name="eomc-compiler"))
    atexit.register(wait)


def wait() -> None:
    """Wait for the compiler prepared ahead, if any, at most
    :data:`AHEAD_TIMEOUT` seconds from its start (its errors, and its
    time-out, are the run's own preparation's to report)."""
    while _AHEAD:
        child = _AHEAD.pop()
        while not child.poll():
            wait_any([child], timeout=1.0)
