"""On-disk cache of derived equations, keyed by content.

The key hashes the system declaration (:meth:`MechanicalSystem.fingerprint`),
the formulation's name, version and options, and the versions of sympy and
of this package, so a changed declaration or derivation never reads an old
entry.  Each file stores a checksum of its payload and its own key: a
corrupted or mismatched entry is detected, reported and rebuilt, never used.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import tempfile
from pathlib import Path
from types import MappingProxyType

import sympy as sm

from formulations.base import EquationsOfMotion, Formulation

__all__ = ["DerivationCache", "default_cache_dir", "cache_key", "code_digest"]

_FIELDS = ("states", "unknowns", "mass_matrix", "forcing", "state_rates",
           "accelerations", "state_map", "coordinate_map", "multipliers")
_MAGIC = b"EOMCACHE1\n"


def default_cache_dir() -> Path:
    """``numeric.cache_dir("derivations")``: beside the compiled modules."""
    from numeric import cache_dir
    return cache_dir("derivations")


def _package_version() -> str:
    try:
        from importlib.metadata import version
        return version("eomcompare")
    except Exception:  # running from a source tree without install
        return "0+unknown"


@functools.lru_cache(maxsize=None)
def code_digest(packages: tuple = ("symbolic", "systems", "formulations")) -> str:
    """Hash of the source of every module in ``packages``, as found on disk.

    The derivation cache keys on the ``symbolic``, ``systems`` and
    ``formulations`` packages, a comparison run's resume on those and
    ``numeric`` and ``compare``: a changed
    module anywhere in them (a shared helper as much as a formulation's own
    module) then never serves results of older code, even without a version
    bump.
    """
    import importlib.util
    h = hashlib.sha256()
    for pkg in packages:
        spec = importlib.util.find_spec(pkg)
        for root in (spec.submodule_search_locations or []) if spec else []:
            for path in sorted(Path(root).rglob("*.py")):
                h.update(str(path.relative_to(root)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def cache_key(system, formulation: Formulation) -> str:
    parts = {
        "source": code_digest(),
        "system": system.fingerprint(),
        "formulation": formulation.name,
        "formulation_version": formulation.version,
        "options": sorted((k, repr(v)) for k, v in formulation.options.items()),
        "sympy": sm.__version__,
        "package": _package_version(),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


class DerivationCache:
    """Derived equations on disk.

    Only the expressions of the numeric contract, the operation counts,
    the timings and the recovered constraint forces are stored; other
    extras (vectors tied to the declaration's frames) are not.

    Parameters
    ----------
    directory : path, optional
        Default :func:`default_cache_dir` (``$EOMCOMPARE_CACHE/derivations`` if
        set).
    """

    def __init__(self, directory=None):
        self.directory = Path(directory) if directory else default_cache_dir()
        self.rebuilt: list[str] = []

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.pkl"

    def load(self, system, formulation: Formulation):
        """The cached equations, or None (missing, stale or corrupted)."""
        key = cache_key(system, formulation)
        path = self._path(key)
        if not path.exists():
            return None
        try:
            raw = path.read_bytes()
            if not raw.startswith(_MAGIC):
                raise ValueError("bad header")
            header, payload = raw[len(_MAGIC):].split(b"\n", 1)
            meta = json.loads(header)
            if meta["key"] != key:
                raise ValueError("key mismatch")
            if hashlib.sha256(payload).hexdigest() != meta["sha256"]:
                raise ValueError("checksum mismatch")
            data = pickle.loads(payload)
        except Exception as exc:
            self.rebuilt.append(f"{path.name}: {exc}")
            path.unlink(missing_ok=True)
            return None
        extras = {}
        if data.get("constraint_forces"):
            extras["constraint_forces"] = data["constraint_forces"]
        extras["from_cache"] = True
        return EquationsOfMotion(
            system=system, formulation=formulation.name,
            kinematic_equations=system.kdes,
            op_counts=MappingProxyType(data["op_counts"]),
            timings=MappingProxyType(data["timings"]),
            extras=MappingProxyType(extras),
            options=MappingProxyType(formulation.options),
            **{k: data[k] for k in _FIELDS})

    def store(self, eom: EquationsOfMotion, formulation: Formulation) -> Path:
        key = cache_key(eom.system, formulation)
        data = {k: getattr(eom, k) for k in _FIELDS}
        data["op_counts"] = dict(eom.op_counts)
        data["timings"] = dict(eom.timings)
        cf = eom.extras.get("constraint_forces")
        data["constraint_forces"] = dict(cf) if cf else None
        payload = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
        header = json.dumps({"key": key,
                             "sha256": hashlib.sha256(payload).hexdigest(),
                             "system": eom.system.name,
                             "formulation": formulation.name}).encode()
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename, so an interrupted write leaves no partial entry.
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(_MAGIC + header + b"\n" + payload)
        os.replace(tmp, path)
        return path

    def derive(self, system, formulation: Formulation):
        """Cached equations if valid, else derive and store them.

        Returns ``(eom, hit)``.
        """
        eom = self.load(system, formulation)
        if eom is not None:
            return eom, True
        eom = formulation.derive(system)
        try:
            self.store(eom, formulation)
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            pass  # an unwritable cache must not fail a derivation
        return eom, False
