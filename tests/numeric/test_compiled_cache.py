"""The compiled backend's library cache against damaged and planted files,
caches others can write, a damaged key, and two processes building the
same source at once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import cached_eom

from eomcompare.numeric import compiled
from eomcompare.numeric.c_code import c_source
from eomcompare.numeric.compiled import CompiledModel

_RHS_SCRIPT = """
import sys
from eomcompare.formulations import get_formulation
eom = get_formulation("kane", count_ops=False).derive("double_pendulum")
model = eom.numeric(backend="c", cache_dir=sys.argv[1])
t0, q, qd = eom.system.states.random_state(seed=0)
print(model.rhs(t0, model.state_from(q, qd, t0)).tolist())
"""


def _rhs_in_a_new_process(cache, **env):
    """The double pendulum's compiled rhs at a state, computed by a process
    that has loaded no library yet (a crash there is not this one's), with
    ``env`` added to its environment."""
    root = Path(__file__).resolve().parents[2]
    return subprocess.run(
        [sys.executable, "-c", _RHS_SCRIPT, str(cache)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=str(root), **env),
    )


def test_a_planted_library_is_never_opened(tmp_path):
    """A library put into the cache by someone else, under the name the
    next build loads and beside the genuine signature, is rebuilt: its
    constructor never runs."""
    first = _rhs_in_a_new_process(tmp_path)
    assert first.returncode == 0, first.stderr
    markers = []
    for lib in [*tmp_path.glob("_eomc_*.so"), *tmp_path.glob("_eomcall_*.so")]:
        markers.append(tmp_path / f"ran-{lib.name}")
        src = tmp_path / "planted.c"
        src.write_text(
            "#include <stdio.h>\n"
            "__attribute__((constructor)) static void planted(void)\n"
            f'{{ FILE *f = fopen("{markers[-1]}", "w"); if (f) fclose(f); }}\n'
        )
        cc = compiled.find_compiler()
        subprocess.run([*cc, "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    assert len(markers) == 2
    second = _rhs_in_a_new_process(tmp_path)
    assert not any(m.exists() for m in markers)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert second.stderr.count("compiled cache: rebuilt") == 2
    assert "signature mismatch" in second.stderr


def test_a_damaged_library_is_rebuilt(tmp_path):
    """A library cut short (a full disk, a killed copy) used to crash every
    process that loaded it with SIGBUS until it was deleted by hand."""
    first = _rhs_in_a_new_process(tmp_path)
    assert first.returncode == 0, first.stderr
    (lib,) = tmp_path.glob("_eomc_*.so")
    data = lib.read_bytes()
    lib.write_bytes(data[: len(data) // 2])
    second = _rhs_in_a_new_process(tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert f"compiled cache: rebuilt {lib.name}" in second.stderr
    assert lib.read_bytes() == data
    third = _rhs_in_a_new_process(tmp_path)
    assert third.stdout == first.stdout and "rebuilt" not in third.stderr


def test_a_library_cache_others_can_write_is_not_used(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    proc = _rhs_in_a_new_process(shared)
    assert proc.returncode == 0, proc.stderr
    assert f"{shared} is writable by group or others" in proc.stderr
    assert "compiling uncached" in proc.stderr
    assert not list(shared.iterdir())


def test_without_a_usable_key_libraries_are_built_uncached(tmp_path):
    key = tmp_path / "cache.key"
    key.write_bytes(b"too short")
    key.chmod(0o600)
    cache = tmp_path / "cache"
    proc = _rhs_in_a_new_process(cache, EOMCOMPARE_KEY=str(key))
    assert proc.returncode == 0, proc.stderr
    assert f"cache key {key} is damaged" in proc.stderr
    assert "compiling uncached" in proc.stderr
    assert not cache.exists() and key.read_bytes() == b"too short"


def test_the_same_source_built_by_two_processes_at_once_compiles_once(
    tmp_path, monkeypatch
):
    # Two cases whose equations print the same C (kane and another
    # formulation of the same system) build it in two processes of one
    # cache: the second waits for the first and loads its library.
    import multiprocessing as mp
    import time

    eom = cached_eom("kane", "rotating_tube")
    source = c_source(eom)[0]
    CompiledModel(eom, cache_dir=tmp_path / "warm")  # the call module, here
    log = tmp_path / "compiles.txt"
    run = compiled._run_compiler

    def slow(cmd, cwd):
        if any(str(c).endswith(".c") and "_eomc_" in str(c) for c in cmd):
            with open(log, "a") as fh:
                fh.write("compile\n")
            time.sleep(0.5)  # both processes are past the cache check
        return run(cmd, cwd)

    monkeypatch.setattr(compiled, "_run_compiler", slow)
    monkeypatch.setattr(compiled, "_LOADED", {})

    def build():
        compiled.build_module(source, cache_dir=tmp_path / "shared")

    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=build) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert log.read_text().splitlines() == ["compile"]
    assert len(list((tmp_path / "shared").glob("_eomc_*.so"))) == 1
