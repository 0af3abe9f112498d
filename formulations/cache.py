"""On-disk cache of derived equations, keyed by content.

The key hashes the system declaration (:meth:`MechanicalSystem.fingerprint`),
the formulation's name, version and options, and the versions of sympy and
of this package, so a changed declaration or derivation never reads an old
entry.  Each file stores its own key and a signature of key and payload
(:mod:`eomcompare.numeric.trust`: an HMAC with a per-user secret kept outside the
cache), checked before anything is unpickled: a corrupted, mismatched or
planted entry is detected, reported and rebuilt, never loaded.  A cache
directory another user could write is not used at all.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import pickle
import tempfile
from pathlib import Path

import sympy as sm
import sympy.physics.mechanics as me

from eomcompare.formulations.base import EquationsOfMotion, Formulation
from eomcompare.numeric.trust import (
    CacheRefused,
    check_private,
    ensure_key,
    private_dir,
    sign,
    temporary_cache,
    verify,
)
from eomcompare.symbolic.frames import connected_frames, connected_points
from eomcompare.systems import MechanicalSystem

__all__ = [
    "CanonicalEntries",
    "DerivationCache",
    "default_cache_dir",
    "cache_key",
    "code_digest",
    "use_private_cache_if_refused",
]

_MAGIC = b"EOMCACHE3\n"


def default_cache_dir() -> Path:
    """``numeric.cache_dir("derivations")``: beside the compiled modules."""
    from eomcompare.numeric import cache_dir

    return cache_dir("derivations")


def use_private_cache_if_refused() -> str | None:
    """Before a run of the harness: None when the caches (``numeric.
    cache_dir``) and the signing key can be used; else one line saying why
    not, after pointing ``$EOMCOMPARE_CACHE`` (and, when the key is the
    problem, ``$EOMCOMPARE_KEY``) at a private temporary directory removed
    at exit, for this process and the workers it starts.  So a cache that
    is a file, cannot be created, or is another user's or writable by
    others costs the run its cache, said once, and fails no case."""
    from eomcompare.numeric import cache_dir

    try:
        ensure_key()
        for kind in ("derivations", "compiled"):
            private_dir(cache_dir(kind))
    except CacheRefused as exc:
        os.environ["EOMCOMPARE_CACHE"] = str(temporary_cache() / "cache")
        return f"cache: {exc}; this run uses a temporary cache"
    return None


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("eomcompare")
    except Exception:  # running from a source tree without install
        return "0+unknown"


@functools.cache
def code_digest(
    packages: tuple = (
        "eomcompare.symbolic",
        "eomcompare.systems",
        "eomcompare.formulations",
    ),
) -> str:
    """Hash of the source of every module in ``packages`` (full import
    names), as found on disk.  A package that cannot be found is an error:
    an empty digest would let every version of the code share one key.

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
        if spec is None or not spec.submodule_search_locations:
            raise ModuleNotFoundError(f"code_digest: no package {pkg!r}")
        for root in spec.submodule_search_locations:
            for path in sorted(Path(root).rglob("*.py")):
                h.update(str(path.relative_to(root)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def cache_key(system, formulation: Formulation, fingerprint: str | None = None) -> str:
    """The key of ``formulation``'s equations of ``system``.

    ``fingerprint``, ``system.fingerprint()`` when the caller has it
    already (it walks the whole declaration), is taken as given.
    """
    parts = {
        "source": code_digest(),
        "system": system.fingerprint() if fingerprint is None else fingerprint,
        "formulation": formulation.name,
        "formulation_version": formulation.version,
        "options": sorted((k, repr(v)) for k, v in formulation.options.items()),
        "sympy": sm.__version__,
        "package": _package_version(),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _declared_objects(system) -> list:
    """The declaration's frames, points and bodies in a fixed order: what a
    stored result refers to by position rather than by value, so that it
    comes back tied to the caller's (equal) declaration."""
    objs = [
        *connected_frames(system.frame),
        *connected_points(system.system.fixed_point),
    ]
    for body in system.bodies:
        objs += [body, body.masscenter]
        if isinstance(body, me.RigidBody):
            objs.append(body.frame)
    for load in system.loads:
        objs.append(load.point if isinstance(load, me.Force) else load.frame)
    for cf in system.constraint_forces:
        objs += [cf.point, *cf.points, *cf.frames]
    seen, out = set(), []
    for o in objs:
        if id(o) not in seen:
            seen.add(id(o))
            out.append(o)
    return out


class _Pickler(pickle.Pickler):
    def __init__(self, fh, system):
        super().__init__(fh, protocol=pickle.HIGHEST_PROTOCOL)
        self._ids = {id(system): "system"} | {
            id(o): i for i, o in enumerate(_declared_objects(system))
        }

    def persistent_id(self, obj):
        return self._ids.get(id(obj))


class _Unpickler(pickle.Unpickler):
    def __init__(self, fh, system):
        super().__init__(fh)
        self._system = system
        self._objs = _declared_objects(system)

    def persistent_load(self, pid):
        return self._system if pid == "system" else self._objs[pid]


def _read_signed(path: Path, magic: bytes) -> tuple[bytes, bytes]:
    """``(header, payload)`` of the cache file ``path``: this user's, not
    writable by others, starting with ``magic``, its header one line."""
    check_private(path)
    raw = path.read_bytes()
    if not raw.startswith(magic):
        raise ValueError("bad header")
    header, payload = raw[len(magic) :].split(b"\n", 1)
    return header, payload


def _check_signature(payload: bytes, context: str, signature: str) -> None:
    """Before unpickling ``payload``: unpickling runs what the pickle names."""
    if not verify(payload, context, signature):
        raise ValueError("signature mismatch (damaged, or not written by this user)")


def _write_whole(path: Path, data: bytes) -> None:
    """Write then rename, so an interrupted write (a full disk) leaves no
    partial entry; mkstemp's file is the user's alone (mode 0o600)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


class DerivationCache:
    """Derived equations on disk.

    The :class:`~eomcompare.formulations.base.EquationsOfMotion` is stored whole, as
    :meth:`Formulation.derive` built it (extras included; those a
    formulation computes on first read are computed by it again on first
    read).  The declaration itself is not stored: a stored result refers to
    its frames, points and bodies, and is restored tied to the declaration
    passed to :meth:`load`, which the key guarantees equal.

    Parameters
    ----------
    directory : path, optional
        Default :func:`default_cache_dir` (``$EOMCOMPARE_CACHE/derivations`` if
        set).

    Attributes
    ----------
    rebuilt : list of str
        One line per entry found corrupted, mismatched or not signed by
        this user (and removed), or naming the directory or key that could
        not be trusted (the cache is then not used), for the harness to
        report.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory else default_cache_dir()
        self.rebuilt: list[str] = []
        self._refused = False

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.pkl"

    def _entry_dir(self, key: str) -> Path | None:
        """The directory of ``key``'s entry, created private, or None when
        the cache cannot be trusted (said once in :attr:`rebuilt`)."""
        if self._refused:
            return None
        try:
            ensure_key()
            private_dir(self.directory)
            return private_dir(self._path(key).parent)
        except CacheRefused as exc:
            self._refused = True
            self.rebuilt.append(f"{exc} (running uncached)")
            return None

    def load(self, system, formulation: Formulation, key: str | None = None):
        """The cached equations, or None (missing, stale or corrupted).

        ``key`` is :func:`cache_key` of the two when the caller has it.
        """
        key = cache_key(system, formulation) if key is None else key
        path = self._path(key)
        if not path.exists() or self._entry_dir(key) is None:
            return None
        try:
            header, payload = _read_signed(path, _MAGIC)
            meta = json.loads(header)
            if meta["key"] != key:
                raise ValueError("key mismatch")
            _check_signature(payload, key, meta["hmac"])
            eom = _Unpickler(io.BytesIO(payload), system).load()
            if not isinstance(eom, EquationsOfMotion):
                raise ValueError(f"holds a {type(eom).__name__}")
        except Exception as exc:
            self.rebuilt.append(f"{path.name}: {exc}")
            path.unlink(missing_ok=True)
            return None
        # The loaded expressions equal, but are not, the objects sympy's
        # memo may still hold from deriving the same equations in this
        # process.  A memo hit then compares the two node by node, along
        # every path of a shared expression (the articulated-body
        # recursion, the composite sums): seconds where the first build
        # took milliseconds.  Emptying the memo costs only recomputation.
        # (Working on the original again after the copy meets the same
        # comparisons the other way round; sympy offers no way to make the
        # two one object.)
        sm.core.cache.clear_cache()
        return eom

    def store(
        self, eom: EquationsOfMotion, formulation: Formulation, key: str | None = None
    ) -> Path:
        key = cache_key(eom.system, formulation) if key is None else key
        buf = io.BytesIO()
        _Pickler(buf, eom.system).dump(eom)
        payload = buf.getvalue()
        path = self._path(key)
        if self._entry_dir(key) is None:
            raise CacheRefused(f"cache directory {self.directory} is not used")
        header = json.dumps(
            {
                "key": key,
                "hmac": sign(payload, key),
                "system": eom.system.name,
                "formulation": formulation.name,
            }
        ).encode()
        _write_whole(path, _MAGIC + header + b"\n" + payload)
        return path

    def derive(
        self,
        system: MechanicalSystem,
        formulation: Formulation,
        fingerprint: str | None = None,
    ) -> tuple[EquationsOfMotion, bool]:
        """Cached equations if valid, else derive and store them.

        ``fingerprint`` is ``system.fingerprint()`` when the caller has it.
        Returns ``(eom, hit)``.
        """
        key = cache_key(system, formulation, fingerprint)
        eom = self.load(system, formulation, key)
        if eom is not None:
            return eom, True
        eom = formulation.derive(system)
        # A cache that cannot take the entry (a full disk) must not fail
        # the derivation; it is said, as a refused cache is (_entry_dir).
        try:
            self.store(eom, formulation, key)
        except OSError as exc:
            name = self._path(key).name
            self.rebuilt.append(f"{name} not stored: {exc.strerror or exc}")
        except (CacheRefused, pickle.PicklingError, TypeError, AttributeError):
            pass
        return eom, False


_ENTRY_MAGIC = b"EOMCANON1\n"


class CanonicalEntries:
    """The canonical form of single entries of M and f
    (:func:`eomcompare.symbolic.canonical.shared_entries`), kept on disk for
    the derivations of a cache: the formulations of a system derive many
    of the same entries (the mass matrix of Kane's and Gibbs-Appell's
    equations), and each case of a run is derived in its own process.

    An entry is a file ``<directory>/<key[:2]>/<key>.canon``, the key a hash
    of the entry's :func:`~eomcompare.symbolic.canonical.entry_digest` and
    of the source of the ``symbolic`` package (a changed pass never reads
    an older form).  It is written as the derivation entries are (a
    private directory, written whole then renamed, signed with the cache's
    key) and its signature checked before it is unpickled: a damaged or
    planted file is removed and the entry computed again.  A store that
    cannot be used (a refused directory, or one inside a refused cache, a
    refused key, a full disk) computes every entry, as without one.

    Parameters
    ----------
    directory : path, optional
        Default ``default_cache_dir() / "canonical"``.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = (
            Path(directory) if directory else default_cache_dir() / "canonical"
        )
        self._usable: bool | None = None
        self.refused: list[str] = []

    def _key(self, digest: str) -> str:
        version = code_digest(("eomcompare.symbolic",)) + sm.__version__
        return hashlib.sha256((version + "\0" + digest).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.canon"

    def _dir(self, key: str) -> Path | None:
        if self._usable is False:
            return None
        try:
            ensure_key()
            # Inside a refused cache (one others can write) nothing is kept.
            check_private(self.directory.parent)
            private_dir(self.directory)
            out = private_dir(self._path(key).parent)
        except (CacheRefused, OSError):
            self._usable = False
            return None
        self._usable = True
        return out

    def get(self, digest: str):
        """The stored canonical form of the entry ``digest``, or None."""
        key = self._key(digest)
        path = self._path(key)
        if not path.exists() or self._dir(key) is None:
            return None
        try:
            signature, payload = _read_signed(path, _ENTRY_MAGIC)
            _check_signature(payload, "canonical:" + key, signature.decode("ascii"))
            expr = pickle.loads(payload)
            if not isinstance(expr, sm.Basic):
                raise ValueError(f"holds a {type(expr).__name__}")
        except Exception as exc:
            self.refused.append(f"{path.name}: {exc}")
            path.unlink(missing_ok=True)
            return None
        return expr

    def put(self, digest: str, expr) -> None:
        """Keep ``expr`` as the canonical form of the entry ``digest``;
        a store that cannot take it keeps nothing."""
        key = self._key(digest)
        path = self._path(key)
        try:
            if self._dir(key) is None:
                return
            payload = pickle.dumps(expr, protocol=pickle.HIGHEST_PROTOCOL)
            signature = sign(payload, "canonical:" + key).encode()
            _write_whole(path, _ENTRY_MAGIC + signature + b"\n" + payload)
        except (OSError, CacheRefused, pickle.PicklingError, TypeError, AttributeError):
            pass
