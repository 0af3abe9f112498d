"""The derivation cache against files another user planted or a damaged
cache: nothing in the cache runs unless this user's key signed it, a
directory others can write is not used, and a cache that cannot be used
costs the run its cache (one line), not its cases."""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import stat
import subprocess
import sys
from pathlib import Path

from helpers import cli_in_process, run_args

ROOT = Path(__file__).resolve().parents[2]


def cli(tmp_path, cache, *, umask=None, key=None):
    """A small run with the derivation cache ``cache`` (and the key
    ``key``): in this process (:func:`helpers.cli_in_process`), or under
    ``umask`` in a process of its own (a umask is the process's)."""
    args = run_args(
        tmp_path / "run",
        ["double_pendulum"],
        t_final=0.1,
        extra=("--fresh", "--backend", "lambdify"),
    )
    env = {"EOMCOMPARE_CACHE": str(cache)}
    if key is not None:
        env["EOMCOMPARE_KEY"] = str(key)
    if umask is None:
        return cli_in_process(*args, env=env)
    return subprocess.run(
        [sys.executable, "-m", "eomcompare", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT), **env),
        cwd=tmp_path,
        timeout=300,
        preexec_fn=lambda: os.umask(umask),
    )


def rows(tmp_path):
    lines = (tmp_path / "run" / "rows.jsonl").read_text().splitlines()
    return [json.loads(x) for x in lines if x.strip()]


class _Payload:
    """A pickle that creates ``marker`` when it is loaded."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (io.open, (self.marker, "w"))


def plant(entry: Path, marker: Path) -> None:
    """Replace ``entry``'s payload by :class:`_Payload`, with every field of
    its header that an attacker can compute from the payload recomputed
    (its key kept)."""
    raw = entry.read_bytes()
    magic, header, _ = raw.split(b"\n", 2)
    payload = pickle.dumps(_Payload(marker))
    meta = json.loads(header)
    for field in ("sha256", "hmac"):
        if field in meta:
            meta[field] = hashlib.sha256(payload).hexdigest()
    entry.write_bytes(magic + b"\n" + json.dumps(meta).encode() + b"\n" + payload)


def cache_lines(proc) -> list[str]:
    return [x for x in proc.stderr.splitlines() if x.startswith("cache:")]


def test_a_planted_pickle_is_never_loaded(tmp_path):
    cache = tmp_path / "cache"
    assert cli(tmp_path, cache).returncode == 0
    (entry,) = cache.rglob("*.pkl")
    marker = tmp_path / "planted-code-ran"
    plant(entry, marker)
    second = cli(tmp_path, cache)
    assert not marker.exists()
    assert second.returncode == 0, second.stderr
    (line,) = cache_lines(second)
    assert entry.name in line and "signature" in line
    assert rows(tmp_path)[-1]["from_cache"] is False
    # The entry was rebuilt, signed: the next run reads it quietly.
    third = cli(tmp_path, cache)
    assert not cache_lines(third) and rows(tmp_path)[-1]["from_cache"] is True


def test_a_cache_others_can_write_is_not_used(tmp_path):
    cache = tmp_path / "cache"
    assert cli(tmp_path, cache).returncode == 0
    (entry,) = cache.rglob("*.pkl")
    marker = tmp_path / "planted-code-ran"
    plant(entry, marker)
    derivations = cache / "derivations"
    derivations.chmod(0o777)
    second = cli(tmp_path, cache)
    assert not marker.exists()
    assert second.returncode == 0, second.stderr
    (line,) = cache_lines(second)
    assert str(derivations) in line and "writable by group or others" in line
    assert rows(tmp_path)[-1]["from_cache"] is False
    # Nothing was written to the refused cache.
    assert list(derivations.rglob("*.pkl")) == [entry]


def test_the_cache_is_private_whatever_the_umask(tmp_path):
    """Under umask 000 the cache used to be created world-writable."""
    cache = tmp_path / "cache"
    key = tmp_path / "config" / "eomcompare" / "cache.key"
    proc = cli(tmp_path, cache, umask=0, key=key)
    assert proc.returncode == 0 and not cache_lines(proc), proc.stderr
    made = [cache, *cache.rglob("*"), key.parent, key]
    assert any(p.suffix == ".pkl" for p in made)
    for p in made:
        mode = stat.S_IMODE(p.stat().st_mode)
        assert not mode & 0o022, f"{p} has mode {mode:o}"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE((cache / "derivations").stat().st_mode) == 0o700


def test_a_cache_that_is_a_file_costs_the_cache_not_the_cases(tmp_path):
    cache = tmp_path / "not-a-directory"
    cache.write_text("")
    proc = cli(tmp_path, cache)
    assert proc.returncode == 0, proc.stderr
    (line,) = cache_lines(proc)
    assert str(cache) in line and "temporary cache" in line
    assert [r["status"] for r in rows(tmp_path)] == ["ok"]


def test_an_entry_of_another_user_is_not_loaded(tmp_path, monkeypatch):
    """Files this process does not own (seen as another user's by changing
    the uid the check compares with) are neither loaded nor trusted."""
    from eomcompare.formulations import get_formulation
    from eomcompare.formulations.cache import DerivationCache
    from eomcompare.systems import get_system

    kane = get_formulation("kane")
    _, hit = DerivationCache(tmp_path).derive(get_system("double_pendulum"), kane)
    assert not hit
    uid = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: uid + 1)
    cache = DerivationCache(tmp_path)
    _, hit = cache.derive(get_system("double_pendulum"), kane)
    assert not hit
    (line,) = cache.rebuilt
    assert str(tmp_path) in line and "owned by another user" in line


_FULL_DISK = """
import resource, signal, sys
from eomcompare.formulations.cache import DerivationCache
from eomcompare.formulations import get_formulation
from eomcompare.systems import get_system

system, kane = get_system("double_pendulum"), get_formulation("kane")
cache = DerivationCache(sys.argv[1])
# A full disk: every write past 1000 bytes fails (EFBIG, the signal ignored).
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
eom, hit = cache.derive(system, kane)
print(hit, eom.mass_matrix.shape)
print(*cache.rebuilt, sep="\\n")
"""


def test_a_full_disk_costs_the_entry_not_the_derivation(tmp_path):
    cache = tmp_path / "cache"
    proc = subprocess.run(
        [sys.executable, "-c", _FULL_DISK, str(cache)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert proc.returncode == 0, proc.stderr
    result, note = proc.stdout.splitlines()
    assert result == "False (2, 2)"
    assert note.endswith(".pkl not stored: File too large")
    # No partial entry is left behind.
    assert [p for p in cache.rglob("*") if p.is_file()] == []


def test_a_key_others_can_read_costs_the_cache_not_the_cases(tmp_path):
    key = tmp_path / "config" / "cache.key"
    key.parent.mkdir()
    key.write_bytes(os.urandom(32))
    key.chmod(0o644)
    cache = tmp_path / "cache"
    proc = cli(tmp_path, cache, key=key)
    assert proc.returncode == 0, proc.stderr
    (line,) = cache_lines(proc)
    assert str(key) in line and "readable or writable by group or others" in line
    assert "temporary cache" in line
    assert [r["status"] for r in rows(tmp_path)] == ["ok"]
    assert not list(cache.rglob("*.pkl"))


def test_the_module_ends_its_process_once_the_command_is_done(tmp_path):
    """``python -m eomcompare`` ends the process without the interpreter
    freeing the run's objects one by one, after everything an exit does
    for it: the command's status, its whole output, and its exit handlers
    (a refused cache's temporary directories removed)."""
    cache = tmp_path / "cache"
    for part in ("derivations", "compiled"):
        (cache / part).mkdir(parents=True)
        # Others can write it: refused, a temporary one used instead.
        (cache / part).chmod(0o777)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    args = run_args(
        tmp_path / "run", ["double_pendulum"], t_final=0.1, extra=("--fresh",)
    )
    proc = subprocess.run(
        [sys.executable, "-m", "eomcompare", *args],
        capture_output=True,
        text=True,
        env=dict(
            os.environ,
            PYTHONPATH=str(ROOT),
            EOMCOMPARE_CACHE=str(cache),
            EOMCOMPARE_KEY=str(tmp_path / "key"),
            TMPDIR=str(scratch),
        ),
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "writable by group or others" in proc.stderr
    assert proc.stdout.rstrip().splitlines()[-1].startswith("finished in ")
    assert not list(scratch.glob("eomcompare-cache-*"))
    refused = [sys.executable, "-m", "eomcompare", "run", "--systems", "nowhere"]
    proc = subprocess.run(
        refused,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert proc.returncode == 2 and "unknown systems" in proc.stderr
