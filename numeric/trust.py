"""Trust in the on-disk caches: private directories and signed files.

Both caches hold what this process executes on load: the derivation cache
pickles (an unpickler calls what the pickle names) and the C backend's
compiled libraries (a library's constructors run when it is opened).  A
file anyone else could have written must therefore never be loaded:

- cache directories are created with mode 0o700, and a directory or file
  owned by another user, or writable by group or others, is refused
  (:class:`CacheRefused`, one line naming it; the caller runs uncached);
- every file is signed when written, an HMAC-SHA256 with a per-user secret
  kept outside the cache, and its signature is checked before it is
  loaded: a planted or damaged file is not loaded (the caller rebuilds it).

The secret is the file :func:`key_path` (``$EOMCOMPARE_KEY``, else
``$XDG_CONFIG_HOME/eomcompare/cache.key``, else
``~/.config/eomcompare/cache.key``), 32 random bytes created with mode
0o600 on first use; a key file readable or writable by others is refused
as well.  Deleting it invalidates every cache entry (they are rebuilt).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import hmac
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "CacheRefused",
    "key_path",
    "ensure_key",
    "private_dir",
    "check_private",
    "sign",
    "verify",
    "temporary_cache",
    "exclusive",
]

KEY_ENV = "EOMCOMPARE_KEY"
_KEY_BYTES = 32


class CacheRefused(Exception):
    """A cache directory, file or key that cannot be trusted or created;
    the message is one line naming it."""


def key_path() -> Path:
    """Where the secret that signs cache files is kept (see the module)."""
    env = os.environ.get(KEY_ENV)
    if env:
        return Path(env)
    config = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(config) / "eomcompare" / "cache.key"


def check_private(path: Path, *, secret: bool = False) -> os.stat_result:
    """``path``'s status, if it is this user's and writable by no one else
    (readable by no one else either when ``secret``); else
    :class:`CacheRefused`.  A file that is a symbolic link is refused (a
    directory's link, such as a cache moved to another disk, is
    followed)."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        st = os.stat(path)
        if not stat.S_ISDIR(st.st_mode):
            raise CacheRefused(f"{path} is a symbolic link; not used")
    if st.st_uid != os.getuid():
        raise CacheRefused(f"{path} is owned by another user; not used")
    if st.st_mode & (0o077 if secret else 0o022):
        who = "readable or writable" if secret else "writable"
        raise CacheRefused(
            f"{path} is {who} by group or others "
            f"(mode {stat.S_IMODE(st.st_mode):o}); not used"
        )
    return st


def private_dir(path: str | os.PathLike[str]) -> Path:
    """``path``, created with mode 0o700 where missing (its missing parents
    too) and checked by :func:`check_private`; :class:`CacheRefused` when
    it cannot be created or trusted."""
    path = Path(path).absolute()
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    try:
        for p in reversed(missing):
            try:
                p.mkdir(mode=0o700)
            except FileExistsError:  # another process made it meanwhile
                pass
        path = missing[0] if missing else path
        if not path.is_dir():
            raise NotADirectoryError(f"{path} is not a directory")
    except OSError as exc:
        raise CacheRefused(
            f"cache directory {path} cannot be used: {exc.strerror or exc}"
        ) from None
    check_private(path)
    return path


@functools.cache
def _secret(path: Path) -> bytes:
    """The key at ``path``, created on first use (atomically: processes
    starting together agree on one key)."""
    if not path.exists():
        parent = private_dir(path.parent)
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=".key-")  # mode 0o600
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(os.urandom(_KEY_BYTES))
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
        except OSError as exc:
            raise CacheRefused(f"cache key {path} cannot be created: {exc}") from None
        finally:
            Path(tmp).unlink(missing_ok=True)
    try:
        check_private(path, secret=True)
        key = path.read_bytes()
    except OSError as exc:
        raise CacheRefused(f"cache key {path} cannot be read: {exc}") from None
    if len(key) != _KEY_BYTES:
        raise CacheRefused(f"cache key {path} is damaged (delete it to make a new one)")
    return key


def temporary_cache() -> Path:
    """A private temporary directory, removed at exit, for a process whose
    cache is refused; when the key is what cannot be made,
    ``$EOMCOMPARE_KEY`` is pointed at a fresh one inside it too (for this
    process and those it starts)."""
    tmp = Path(tempfile.mkdtemp(prefix="eomcompare-cache-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    try:
        ensure_key()
    except CacheRefused:
        os.environ[KEY_ENV] = str(tmp / "cache.key")
    return tmp


def ensure_key() -> bytes:
    """The secret, created if missing; :class:`CacheRefused` when it cannot
    be created or trusted (check it before deciding an entry is bad)."""
    return _secret(key_path())


def sign(data: bytes, context: str) -> str:
    """The signature of ``data`` stored as ``context`` (an entry's key or
    file name, so a signed file copied over another is refused)."""
    mac = hmac.new(ensure_key(), context.encode() + b"\0", hashlib.sha256)
    mac.update(data)
    return mac.hexdigest()


def verify(data: bytes, context: str, signature: str) -> bool:
    """Whether ``signature`` is :func:`sign` of ``data`` and ``context``."""
    return hmac.compare_digest(sign(data, context), signature)


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (created 0600) for the
    block, so that processes sharing a cache build an entry once: the
    others wait, then find it built.  Where files cannot be locked (no
    ``fcntl``, or a file system without locks) the block runs unlocked,
    as before: each process builds its own copy."""
    try:
        import fcntl

        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except (ImportError, OSError):
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
    finally:
        os.close(fd)
