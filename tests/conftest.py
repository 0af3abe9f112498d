"""Shared fixtures: derivations are cached per test session, since several
test modules read the same (system, formulation) equations."""

from __future__ import annotations

import functools
import gc
import json
import os
import tempfile
from pathlib import Path

# sympy memoises its core operations in one LRU cache per function, of
# SYMPY_CACHE_SIZE entries (default 1,000), read once when sympy is first
# imported: here, before this file's imports, so in the workers (started
# after it is loaded, with its environment) and in the commands the tests
# start.  Larger, it saves about 6 % of the processor time of the
# derivation-heavy tests (measured side by side on tests/formulations and
# tests/systems: 469 s against 501 s, 50 MB more memory per process); the
# results are the same.  The harness's own runs leave the size alone, so
# the derivation times it measures outside the tests are sympy's default.
os.environ.setdefault("SYMPY_CACHE_SIZE", "20000")

import pytest
from hypothesis import HealthCheck, settings
from quick_loop import MEASURED_SLOW, over_budget

from eomcompare.formulations import get_formulation
from eomcompare.numeric.stack_room import call_with_room
from eomcompare.systems import get_system

# The cyclic garbage collector, at its default thresholds (700, 10, 10),
# walks the test process's whole heap (sympy's caches, the derivations
# shared between tests) at every full collection, and the heap grows as
# the session goes: about 12 % of a derivation-heavy module's processor
# time.  Young collections every 10,000 allocations and the older ones
# rarely take that to about 3 %: tests/formulations' kane, lagrange and
# gibbs_appell modules, serially, 21.9 s against 19.7 s of processor time
# (the collections themselves 2.8 s against 0.6 s), peak memory the same
# (324 MB).  Forked processes (the harness's cases in a test) inherit it;
# the commands the tests start, and the harness run outside the tests, keep
# Python's default.
GC_THRESHOLDS = (10_000, 20, 50)
gc.set_threshold(*GC_THRESHOLDS)

# Hypothesis profiles.  "ci", the default (the README's test command and
# CI alike), draws few but deterministic examples per property, so the
# suite stays within its time; HYPOTHESIS_PROFILE=dev or long draws more
# (and larger systems, see tests/test_properties.py) when working on the
# formulations.
settings.register_profile(
    "ci",
    max_examples=15,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long",
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    """The caches' signing key (``numeric.trust``): ``$EOMCOMPARE_KEY`` if
    set (CI sets a fresh one), else the user's own, created on first use as
    any run would, so that a warm cache stays valid between sessions; where
    that cannot be made (no writable home), a fresh private key for the
    session.  Set here, in the controller, the xdist workers and the
    subprocesses the tests start inherit it, so that a cache they share
    verifies."""
    from eomcompare.numeric.trust import CacheRefused, ensure_key

    _collect_the_package_once(config)
    if "EOMCOMPARE_KEY" not in os.environ:
        try:
            ensure_key()
        except CacheRefused:
            os.environ["EOMCOMPARE_KEY"] = os.path.join(
                tempfile.mkdtemp(prefix="eomcompare-key-"), "cache.key"
            )


#: Folders of the repository's root that are not collected: the package's
#: subpackages, which are collected through the links in eomcompare/ under
#: their eomcompare.* names (pyproject's testpaths), the documentation
#: (its configuration and tutorials run when the site is built,
#: tests/docs) and the generated reports.
NOT_COLLECTED = (
    "bench",
    "compare",
    "formulations",
    "numeric",
    "references",
    "symbolic",
    "systems",
    "testing",
    "docs",
    "reports",
)


def _collect_the_package_once(config) -> None:
    """Leave out the root's folders of :data:`NOT_COLLECTED`.

    The top-level folders are the same files as ``eomcompare/<package>``:
    ``pytest .`` (or ``--doctest-modules`` from the root) would import each
    module a second time under another name (``compare.runner`` beside
    ``eomcompare.compare.runner``), with registries of its own.  This
    conftest is loaded before collection whenever the root or the
    testpaths are collected, so the paths are added to ``--ignore`` here
    (a conftest at the root would be imported as ``conftest`` in place of
    this one, which the tests import).
    """
    root = Path(__file__).resolve().parent.parent
    ignored = list(config.option.ignore or [])
    config.option.ignore = ignored + [str(root / name) for name in NOT_COLLECTED]


# functools.cache keys on the arguments as passed: ``f(name)`` and
# ``f(name, ())`` would be two entries, and the Whipple bicycle's
# sympy_lagrange equations (a minute and a half of CPU) derived twice on one
# worker.  The public functions pass the options explicitly.


@functools.cache
def _system(name: str, options: tuple):
    return get_system(name, **dict(options))


@functools.cache
def _eom(formulation: str, name: str, options: tuple):
    # Without operation counts: the tests that read counts derive their own
    # equations, and on the floating and larger systems the canonical count
    # took most of a derivation's time.
    return get_formulation(formulation, count_ops=False).derive(_system(name, options))


def cached_system(name: str, options: tuple = ()):
    return _system(name, tuple(options))


def cached_eom(formulation: str, name: str, options: tuple = ()):
    return _eom(formulation, name, tuple(options))


@functools.cache
def _model(formulation: str, name: str, options: tuple):
    return _eom(formulation, name, options).numeric()


def cached_model(formulation: str, name: str, options: tuple = ()):
    """The lambdified model of :func:`cached_eom`, built once per worker:
    for references many tests evaluate (never for a test of the numeric
    model itself, whose state it would share)."""
    return _model(formulation, name, tuple(options))


def derivation_group(system: str, formulation: str):
    """The ``xdist_group`` mark of the tests reading one heavy derivation.

    :func:`cached_eom` keeps a derivation per worker process: tests in
    several modules reading the Whipple bicycle's ``sympy_lagrange``
    equations (minutes of CPU) would each derive them again on another
    worker.  Marked with this group they run on one worker, which derives
    once.
    """
    return pytest.mark.xdist_group(f"derivation-{system}-{formulation}")


@pytest.fixture(scope="session")
def derive():
    """``derive(formulation, system_name, **options)`` with a session cache."""

    def _derive(formulation, name, **options):
        return cached_eom(formulation, name, tuple(sorted(options.items())))

    return _derive


#: The ``xdist_group`` of the tests reading :func:`main_job`.
MAIN_JOB_GROUP = "main_job"


@pytest.fixture(scope="session")
def main_job(tmp_path_factory) -> Path:
    """The output directory of the main job (``python -m eomcompare``: the
    default comparison, every catalogue system but the heavy ones with
    every formulation of the default run, its quick sweep and report), run
    once per session in one process (``--jobs 1``, beside the other
    worker's tests) into a directory of its own.

    It is minutes of processor time: the tests that read the default
    comparison (its report's size and layout, the committed baseline
    regressed against it, its quick sweep, its published and Kolev
    sections) share this one run, and run on one xdist worker
    (:data:`MAIN_JOB_GROUP`, given at collection to every test that asks
    for the fixture).  The tests only read it.
    """
    import json

    from eomcompare.compare.cli import main
    from eomcompare.systems import CATALOGUE, system_facts

    out = tmp_path_factory.mktemp("main_job")
    assert main(["--out", str(out), "--quiet", "--jobs", "1"]) == 0
    meta = json.loads((out / "metadata.json").read_text())
    default = sorted(s for s in CATALOGUE if not system_facts(s).heavy)
    # The main job: every catalogue system but the heavy ones.
    assert meta["systems"] == default, meta["systems"]
    return out


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Tests sharing a module-scoped fixture run in one xdist worker.

    Such fixtures hold a run of the harness or a derivation; spread over
    the workers (``-n``), each worker would compute its own copy.  With
    ``--dist loadgroup`` (pyproject's addopts) an ``xdist_group`` keeps the
    module's tests together; a module naming its own group keeps it.
    """
    _mark_measured_slow(items)
    for item in items:
        if "main_job" in getattr(item, "fixturenames", ()):
            # Before any group of its module: one worker runs the main job.
            item.add_marker(pytest.mark.xdist_group(MAIN_JOB_GROUP), append=False)
        if item.get_closest_marker("xdist_group") is None:
            info = getattr(item, "_fixtureinfo", None)
            if info is not None and any(
                d.scope == "module"
                for defs in info.name2fixturedefs.values()
                for d in defs
            ):
                group = item.nodeid.split("::")[0]
                if isinstance(item, pytest.Function):
                    group = item.module.__name__
                item.add_marker(pytest.mark.xdist_group(group))
        _tell_xdist_the_group(config, item)
    # The groups reading one heavy derivation (minutes of CPU each), and
    # the main job's, are scheduled first: xdist hands out work in
    # collection order, and these collected last
    # (tests/systems/test_whipple_bicycle.py, tests/test_contract.py) left
    # one worker busy long after the other had finished.
    items.sort(key=lambda item: not _scheduled_first(_group(item)))


def _scheduled_first(group: str) -> bool:
    return group.startswith("derivation-") or group == MAIN_JOB_GROUP


#: The repository's root, against which the entries' paths are read.
_ROOT = Path(__file__).resolve().parent.parent


#: The tests over the quick loop's processor-time budget
#: (``tests/quick_loop_cpu.json``).
OVER_BUDGET = frozenset(over_budget())


def _mark_measured_slow(items) -> None:
    """Mark the tests of :data:`quick_loop.MEASURED_SLOW` and of
    :data:`OVER_BUDGET` slow.

    An entry naming a file that does not exist, a test function that a
    collected module does not define, or a parameter set that its collected
    function does not have, is an error: a renamed test would otherwise
    return to the quick loop unseen.
    """
    # The stale check reads test functions only: the docstring examples
    # (DoctestItem) have no module object; the table may name one.
    functions_ = [item for item in items if getattr(item, "module", None) is not None]
    ids = {_test_id(item) for item in functions_}
    modules = {item.nodeid.split("::")[0]: item.module for item in functions_}
    functions = {item.nodeid.split("[")[0] for item in functions_}
    entries = set(MEASURED_SLOW) | set(OVER_BUDGET)
    stale = []
    for entry in entries:
        path, _, name = entry.partition("::")
        function = name.split("[")[0]
        if path not in modules:
            if not (_ROOT / path).is_file():
                stale.append(entry)  # the file was renamed or removed
            continue  # not collected in this session
        if not hasattr(modules[path], function):
            stale.append(entry)
        elif f"{path}::{function}" in functions and entry not in ids:
            if "[" in entry or not any(i.startswith(entry + "[") for i in ids):
                stale.append(entry)
    if stale:
        raise pytest.UsageError(
            "tests/quick_loop.py or quick_loop_cpu.json names tests that do not exist: "
            + ", ".join(sorted(stale))
        )
    for item in items:
        test = _test_id(item)
        if test in entries or test.split("[")[0] in entries:
            item.add_marker(pytest.mark.slow)


def _test_id(item) -> str:
    """The test's id without the ``@group`` suffix the xdist workers add."""
    group = _group(item)
    if group and item.nodeid.endswith("@" + group):
        return item.nodeid[: -len(group) - 1]
    return item.nodeid


@pytest.hookimpl(tryfirst=True, specname="pytest_runtest_protocol")
def pytest_runtest_protocol_with_room(item, nextitem):
    """Each test (its set-up, call and tear-down) runs pytest's own
    protocol with room for its call stack (:mod:`eomcompare.numeric.stack_room`):
    below pytest's frames, and xdist's in a worker, sympy's recursions
    otherwise cross a chunk boundary of CPython's frame stack at whatever
    depth the test happens to start, and pay a mapped chunk per call."""
    from _pytest.runner import pytest_runtest_protocol as protocol

    return call_with_room(protocol, item, nextitem)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With ``EOMCOMPARE_TEST_CPU`` set to a directory, append each test's
    processor seconds (set-up, call and tear-down; this process's and the
    children it waited for) to ``cpu-<worker>.jsonl`` there, for
    ``python tests/quick_loop.py record``."""
    directory = os.environ.get("EOMCOMPARE_TEST_CPU")
    if not directory:
        return (yield)
    before = os.times()
    try:
        return (yield)
    finally:
        after = os.times()
        cpu = sum(after[i] - before[i] for i in range(4))
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(directory).mkdir(parents=True, exist_ok=True)
        row = {"test": _test_id(item), "cpu_s": round(cpu, 3)}
        with open(Path(directory) / f"cpu-{worker}.jsonl", "a") as log:
            log.write(json.dumps(row) + "\n")


def _group(item) -> str:
    mark = item.get_closest_marker("xdist_group")
    if mark is None:
        return ""
    return str(mark.args[0] if mark.args else mark.kwargs.get("name", ""))


def _tell_xdist_the_group(config, item) -> None:
    """Append ``@group`` to the test id in an xdist worker, as xdist's
    loadgroup scheduler expects.

    pytest-xdist 3.8 does it by setting ``item._nodeid``, which pytest 9
    no longer reads (a node's id is its ``_id``): the suffix never reached
    the scheduler, and every group was spread over the workers, each
    computing the shared fixture or derivation again.  Done here for
    both; xdist's own renaming, if it works, then finds the suffix set.
    """
    if not (hasattr(config, "workerinput") and config.getvalue("loadgroup")):
        return
    mark = item.get_closest_marker("xdist_group")
    if mark is None:
        return
    group = mark.args[0] if mark.args else mark.kwargs.get("name", "default")
    nodeid = f"{item.nodeid}@{group}"
    if hasattr(item, "_id"):
        from _pytest.nodeid import NodeId

        item._id = NodeId.parse(nodeid)
    else:
        item._nodeid = nodeid


@pytest.fixture
def states_with_speeds():
    """``states(ms, n=5)``: ``n`` reproducible random consistent states of
    ``ms`` (seeds 0..n-1), each ``(t, q, q', u)``, for systems whose speeds
    are not the coordinate rates (a quaternion's body rates)."""

    def states(ms, n=5):
        out = []
        for seed in range(n):
            t0, q, qd = ms.states.random_state(seed=seed)
            out.append((t0, q, qd, ms.states.speeds_from_rates(t0, q, qd)))
        return out

    return states
