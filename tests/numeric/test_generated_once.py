"""Code a numeric model generates once, or only as it is used: a lambdify
model's functions on first use, one C printer per thread, the compiled
backend's call extension prepared ahead of a run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from eomcompare.formulations import get_formulation
from eomcompare.numeric import c_code, compiled
from eomcompare.numeric.c_code import c_source
from eomcompare.numeric.model import LambdifyModel
from eomcompare.systems import get_system


def close(a, b, rtol=1e-12):
    a, b = np.asarray(a, float), np.asarray(b, float)
    scale = max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)
    assert float(np.max(np.abs(a - b))) <= rtol * scale


def test_a_lambdify_model_generates_each_function_on_first_use(monkeypatch):
    # The harness times a lambdify model's right-hand side beside the
    # compiled one: built and called, the model has lambdified its mass
    # matrix, forcing and rates alone; prepare() generates the rest, which
    # evaluates as a model generated whole does.
    from eomcompare.numeric import model as model_module

    ms = get_system("four_bar")
    whole = LambdifyModel(get_formulation("lagrange").derive(ms))
    whole.prepare()
    eom = get_formulation("lagrange").derive(ms)
    made = []
    real = model_module._lambdify

    def counted(args, expr):
        made.append(expr)
        return real(args, expr)

    monkeypatch.setattr(model_module, "_lambdify", counted)
    lazy = LambdifyModel(eom)
    t0, q, qd = ms.states.random_state(seed=3)
    x = whole.state_from(q, qd, t0)
    assert np.array_equal(lazy.rhs(t0, x), whole.rhs(t0, x))
    assert len(made) == 2
    before = lazy.codegen_seconds
    lazy.prepare()
    pieces = 5 + bool(lazy.force_names)
    assert len(made) == pieces and lazy.codegen_seconds > before
    close(
        lazy.coordinate_accelerations(t0, q, qd),
        whole.coordinate_accelerations(t0, q, qd),
        0,
    )
    assert np.array_equal(lazy.state_from(q, qd, t0), x)
    lazy.prepare()
    assert len(made) == pieces  # each function once


def test_one_c_printer_prints_every_model_as_a_fresh_one_would(monkeypatch):
    # The printer is made once per thread (and inherited by the run's
    # forked cases): a model printed after another is printed as a fresh
    # printer prints it.
    import threading

    from eomcompare.numeric.child import call_in_child

    eoms = [
        get_formulation("kane").derive(get_system("double_pendulum")),
        get_formulation("lagrange").derive(get_system("four_bar")),
    ]
    shared = [c_source(eom)[0] for eom in eoms]
    made = []
    real = c_code._Printer

    def counted():
        made.append(1)
        return real()

    monkeypatch.setattr(c_code, "_PRINTERS", threading.local())
    monkeypatch.setattr(c_code, "_Printer", counted)
    assert c_source(eoms[1])[0] == shared[1] and len(made) == 1
    assert c_source(eoms[0])[0] == shared[0] and len(made) == 1
    printer = c_code._printer()
    assert call_in_child(lambda: c_code._printer() is printer)


def test_the_compiler_prepared_ahead_is_loaded_not_built_again(tmp_path, monkeypatch):
    # python -m eomcompare starts a child that builds the call extension
    # into the cache while the command imports; the run then loads it.
    from eomcompare.numeric import ahead, backends

    assert ahead._runs_cases_compiled([])
    assert ahead._runs_cases_compiled(["--out", "x", "--quiet"])
    assert ahead._runs_cases_compiled(["run", "--systems", "four_bar"])
    assert not ahead._runs_cases_compiled(["report", "--out", "x"])
    assert not ahead._runs_cases_compiled(["--backend", "lambdify"])
    assert not ahead._runs_cases_compiled(["run", "--backend=lambdify"])
    assert not ahead._runs_cases_compiled(["--help"])
    monkeypatch.setenv("EOMCOMPARE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("EOMCOMPARE_KEY", str(tmp_path / "key"))
    # As in a fresh process: nothing loaded yet (the child inherits this).
    monkeypatch.setattr(compiled, "_LOADED", {})
    monkeypatch.setattr(compiled, "_PRIVATE", {})
    ahead.start_for(["--quiet"])
    ahead.wait()
    assert len(list((tmp_path / "cache" / "compiled").glob("_eomcall_*.so"))) == 1

    def built(*args, **kwargs):
        raise AssertionError("compiled again")

    monkeypatch.setattr(compiled, "_LOADED", {})
    monkeypatch.setattr(compiled, "_PRIVATE", {})
    monkeypatch.setattr(compiled, "_compile_extension", built)
    backends.prepare_compiler()
    # The child is not named as the run's case workers are (ps shows it
    # as the compiler's helper it is).
    from eomcompare.numeric.child import Child

    named = Child(lambda: Path("/proc/self/comm").read_text().strip(), process_name="x")
    while not named.poll():
        pass
    assert named.result() == "x" or not Path("/proc/self/comm").exists()
    # Without the child, this process builds it (what the check above rules out).
    monkeypatch.setenv("EOMCOMPARE_CACHE", str(tmp_path / "other"))
    monkeypatch.setattr(compiled, "_LOADED", {})
    with pytest.raises(AssertionError, match="compiled again"):
        backends.prepare_compiler()


def test_a_compiler_prepared_ahead_that_hangs_does_not_hold_the_run(monkeypatch):
    # The run waits for the child before it measures anything; a child
    # that never ends (a compiler that hangs, a lock held elsewhere) is
    # killed at AHEAD_TIMEOUT, and the wait returns.
    import time

    from eomcompare.numeric import ahead

    monkeypatch.setattr(ahead, "_prepare", lambda: time.sleep(600))
    monkeypatch.setattr(ahead, "AHEAD_TIMEOUT", 0.5)
    monkeypatch.setattr(ahead, "_AHEAD", [])
    ahead.start_for(["--quiet"])
    (child,) = ahead._AHEAD
    start = time.monotonic()
    ahead.wait()
    assert time.monotonic() - start < 30
    assert child.done and child.returncode == -9  # killed, and reaped
    assert ahead._AHEAD == []
