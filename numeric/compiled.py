"""A compiled numeric backend: C from sympy's code printers, one C call per
right-hand side.

The mass matrix and forcing are printed as cse-reduced C, the dense solve is
in C (LDL^T when the mass matrix is symmetric as written, of which only the
lower triangle is then evaluated, with an LU factorization with partial
pivoting as the fallback for a matrix that is not positive definite, and as
the solve of every other matrix), and the state rates follow in the same
call, so that ``rhs(t, x)`` is a single call into compiled code
that writes a fresh numpy array.  ``rhs(t, x)`` of a
plain float64 vector goes into C by its data pointer (a function of the
extension written to numpy's C API, which keeps the GIL for the call): a
double pendulum's call takes 0.2 us, against 0.8 us when cffi converts the
arrays; anything else takes the cffi call, which converts it.  The
equations are compiled with the system C compiler (``$CC``, else ``cc``, ``gcc`` or ``clang``) as a plain
shared library (C and ``math.h`` only, no Python headers, so that it
compiles in a fraction of the time a Python extension takes) and called
through one small cffi extension, the same for every model, compiled once.
Both are cached on disk under a hash of their source, in
``$EOMCOMPARE_CACHE/compiled`` (default ``~/.cache/eomcompare/compiled``); a
second process or a second derivation of the same equations loads them
without compiling.  A library is loaded only with this user's signature
(:mod:`eomcompare.numeric.trust`): a damaged or planted one is rebuilt, never opened,
and a cache directory another user could write is not used (the libraries
are then built in a private temporary directory).

Select it with ``eom.numeric(backend="c")``; ``backend="auto"`` uses it when a
compiler is available and otherwise warns and falls back to lambdify, which
stays the default and needs no compiler.

Examples
--------
>>> from eomcompare.formulations import get_formulation
>>> eom = get_formulation("kane").derive("double_pendulum")
>>> model = eom.numeric(backend="auto")
>>> t0, q, qd = eom.system.states.random_state(seed=0)
>>> model.rhs(t0, model.state_from(q, qd, t0)).shape
(4,)
"""

from __future__ import annotations

import errno
import functools
import hashlib
import importlib.util
import os
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import warnings
import weakref
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .c_code import (
    _CALL_CDEF,
    _CALL_SOURCE,
    _EXPORTS,
    _TABLE,
    CompilationError,
    CompiledBackendError,
    CompilerNotFoundError,
    c_source,
)
from .dop853 import run_compiled
from .model import NumericModel
from .trust import (
    CacheRefused,
    check_private,
    ensure_key,
    exclusive,
    private_dir,
    sign,
    temporary_cache,
    verify,
)

__all__ = [
    "CompiledModel",
    "CompiledBackendError",
    "CompilerNotFoundError",
    "CompilationError",
    "find_compiler",
    "default_cflags",
    "compiled_cache_dir",
]

#: Flags for every build; part of the cache key.  No fast-math: the backend
#: must agree with lambdify to rounding (the order of the operations is the
#: generated code's).  Without explicit ``cflags`` the build adds
#: :data:`NATIVE_CFLAGS` when the compiler accepts them.
DEFAULT_CFLAGS = ("-O2", "-fPIC", "-shared", "-fno-math-errno")

#: Code for the processor of this machine (its vector units and fused
#: multiply-add): on a 7-joint arm's right-hand side 1.3-1.7x faster than
#: the baseline instruction set.  A fused multiply-add rounds once where a
#: product and a sum round twice, so results may differ from lambdify's in
#: the last bits, well inside the backend's 1e-12 agreement.  Libraries
#: built with them are keyed by the processor too
#: (:func:`_processor_fingerprint`): a cache directory shared between
#: machines never hands one a library for another's instructions.
NATIVE_CFLAGS = ("-march=native",)


# ----------------------------------------------------------------------
# Environment: compiler, headers, cache directory
# ----------------------------------------------------------------------
def find_compiler(cc: str | None = None) -> list[str]:
    """The C compiler command as an argument list.

    ``cc`` if given, else ``$CC``, else the first of ``cc``, ``gcc``,
    ``clang`` on the PATH.

    Raises
    ------
    CompilerNotFoundError
        Naming the command that was looked for.

    Examples
    --------
    >>> find_compiler("gcc")[0].endswith("gcc")
    True
    """
    if cc is None:
        cc = os.environ.get("CC") or None
        origin = "$CC"
    else:
        origin = "the compiler argument"
    if cc is not None:
        if not isinstance(cc, str):
            raise TypeError(f"compiler must be a str, not {type(cc).__name__}")
        words = shlex.split(cc)
        path = shutil.which(words[0]) if words else None
        if path is None:
            raise CompilerNotFoundError(
                f"C compiler {cc!r} (from {origin}) was not found; install a C "
                f"compiler (gcc or clang) or point CC to one, or use "
                f"backend='lambdify', which needs none"
            )
        return [path] + words[1:]
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return [path]
    raise CompilerNotFoundError(
        "no C compiler found: none of cc, gcc, clang is on the PATH and CC is "
        "not set; install gcc or clang, or use backend='lambdify', which "
        "needs none"
    )


@functools.cache
def native_cflags(cc: tuple[str, ...]) -> tuple[str, ...]:
    """:data:`NATIVE_CFLAGS` if compiler ``cc`` builds with them on this
    machine, else none (a compiler or architecture that does not know
    ``-march=native``: the baseline instruction set)."""
    with tempfile.TemporaryDirectory(prefix="eomc-probe-") as tmp:
        src = Path(tmp) / "probe.c"
        src.write_text("double f(double a, double b, double c) { return a * b + c; }\n")
        cmd = [*cc, *NATIVE_CFLAGS, "-c", str(src), "-o", str(Path(tmp) / "probe.o")]
        try:
            proc = subprocess.run(cmd, capture_output=True, cwd=tmp)
        except OSError:
            return ()
    return NATIVE_CFLAGS if proc.returncode == 0 else ()


def default_cflags(compiler=None) -> tuple[str, ...]:
    """The flags of a build without explicit ``cflags``: :data:`DEFAULT_CFLAGS`
    and, where ``compiler`` (as for :func:`find_compiler`) takes them,
    :data:`NATIVE_CFLAGS`."""
    cc = compiler if isinstance(compiler, list) else find_compiler(compiler)
    return (*DEFAULT_CFLAGS, *native_cflags(tuple(cc)))


@functools.cache
def _processor_fingerprint() -> str:
    """What ``-march=native`` reads of the processor: its model and its
    instruction-set extensions (Linux's /proc/cpuinfo), else what the
    platform module says."""
    import platform

    parts = [platform.machine(), platform.processor()]
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    for key in ("model name", "flags", "Features", "CPU part"):
        for line in text.splitlines():
            if line.split(":", 1)[0].strip() == key:
                parts.append(line.split(":", 1)[1].strip())
                break
    return "\n".join(parts)


def _machine_key(flags) -> str:
    """The part of a build's cache key that names the processor: its
    fingerprint for a build for this processor's instructions, else
    nothing (a portable build runs anywhere)."""
    return _processor_fingerprint() if "-march=native" in flags else ""


def _python_include() -> str:
    inc = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(inc, "Python.h")):
        raise CompilerNotFoundError(
            f"the Python headers are missing (no Python.h in {inc}); install "
            f"the Python development package (e.g. python3-dev), or use "
            f"backend='lambdify'"
        )
    return inc


def _cffi():
    try:
        import cffi
    except ImportError:
        raise CompilerNotFoundError(
            "the compiled backend needs cffi (pip install cffi); or use "
            "backend='lambdify'"
        ) from None
    return cffi


def compiled_cache_dir(directory=None) -> Path:
    """Where compiled modules are kept: ``directory``, else
    ``numeric.cache_dir("compiled")``."""
    if directory is not None:
        return Path(directory)
    from eomcompare.numeric import cache_dir

    return cache_dir("compiled")


class CacheWarning(UserWarning):
    """The compiled cache was not used, or a library in it was rebuilt."""


_PRIVATE: dict[Path, Path] = {}


def _usable_cache_dir(directory: Path) -> Path:
    """``directory``, created private (:func:`eomcompare.numeric.trust.private_dir`),
    or, when it cannot be created or trusted (or the signing key cannot
    be), a private temporary directory for this process, with a warning
    naming why (once)."""
    if directory not in _PRIVATE:
        try:
            ensure_key()
            _PRIVATE[directory] = private_dir(directory)
        except CacheRefused as exc:
            _PRIVATE[directory] = temporary_cache()
            warnings.warn(f"{exc}: compiling uncached", CacheWarning, stacklevel=3)
    return _PRIVATE[directory]


def _signature_path(target: Path) -> Path:
    return target.with_name(target.name + ".sig")


def _cached(target: Path) -> bool:
    """Whether ``target`` is in the cache as this user built it (its
    signature holds).  A library that is not, damaged (cut short by a full
    disk or a killed copy: opening it could crash the process with SIGBUS)
    or planted (its constructors would run on opening), is removed with a
    warning, to be built again."""
    if not target.exists():
        return False
    try:
        check_private(target)
        signature = _signature_path(target).read_text()
        if verify(target.read_bytes(), target.name, signature):
            return True
        why = "signature mismatch (damaged, or not built by this user)"
    except FileNotFoundError:
        why = "no signature"
    except (OSError, CacheRefused) as exc:
        why = str(exc)
    warnings.warn(
        f"compiled cache: rebuilt {target.name}: {why}", CacheWarning, stacklevel=3
    )
    target.unlink(missing_ok=True)
    return False


def _install(built: Path, target: Path) -> None:
    """Move the library ``built`` to ``target``, the user's alone and
    signed (the signature first: a reader never finds a library newer than
    its signature unsigned)."""
    os.chmod(built, 0o700)
    signature = _signature_path(built)
    signature.write_text(sign(built.read_bytes(), target.name))
    os.replace(signature, _signature_path(target))
    os.replace(built, target)


# ----------------------------------------------------------------------
# Build and load, cached by source hash
# ----------------------------------------------------------------------
_LOADED: dict[str, object] = {}
_LOCK = threading.Lock()


def _load(modname: str, path: Path):
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _key(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


class CompiledLibrary:
    """The compiled equations of one source, loaded.

    ``lib.eom_rhs(t, x, p, out)`` and the other generated functions are
    called as if they were the extension's own; ``ffi`` converts numpy
    arrays (``ffi.from_buffer``).  ``call`` is the extension's ``lib`` and
    ``table`` the library's function table, for the hot paths that call
    ``call.eom_call_rhs(table, ...)`` directly.
    """

    def __init__(self, call_module, shared, table):
        self.ffi = call_module.ffi
        self.call = call_module.lib
        self.table = table
        self._shared = shared  # keeps the library loaded
        self.lib = _BoundCalls(self.call, table)
        self.table_address = int(call_module.ffi.cast("uintptr_t", table))
        self.fast_rhs = _fast_rhs(call_module)


_FAST_RHS: dict = {}


def _fast_rhs(call_module):
    """The extension's ``rhs(table, t, x, p, n)`` as a Python function
    (one per extension), or None when numpy's C API cannot be loaded."""
    key = id(call_module)
    if key not in _FAST_RHS:
        ffi = call_module.ffi
        ptr = call_module.lib.eom_fast_rhs_function()
        if ptr == ffi.NULL:
            _FAST_RHS[key] = None
        else:
            import ctypes

            # A new reference from C, kept for the life of the process.
            _FAST_RHS[key] = ctypes.cast(
                int(ffi.cast("uintptr_t", ptr)), ctypes.py_object
            ).value
    return _FAST_RHS[key]


class _BoundCalls:
    """``eom_<name>(...)`` -> ``eom_call_<name>(table, ...)``."""

    def __init__(self, call, table):
        for name in "rhs rhs_batch mf rates acc coords state forces unknowns".split():
            fn = getattr(call, f"eom_call_{name}")
            setattr(self, f"eom_{name}", functools.partial(fn, table))


def _call_module(cffi, cc, flags, directory):
    """The cffi extension that calls every library, built once per
    compiler, flags, Python and numpy (and cached on disk like the
    libraries)."""
    include = [_python_include(), np.get_include()]
    key = _key(
        _CALL_SOURCE,
        _CALL_CDEF,
        " ".join(cc),
        " ".join(flags),
        sys.version,
        cffi.__version__,
        np.__version__,
        np.get_include(),
        sysconfig.get_config_var("EXT_SUFFIX") or "",
        _machine_key(flags),
    )
    modname = f"_eomcall_{key}"
    if modname in _LOADED:
        return _LOADED[modname], 0.0
    target = directory / (modname + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
    seconds = 0.0
    if not _cached(target):
        start = time.perf_counter()
        _compile_extension(cffi, cc, flags, include, modname, directory, target)
        seconds = time.perf_counter() - start
    try:
        module = _load(modname, target)
    except ImportError as exc:
        raise CompilationError(
            f"the compiled module {target} does not load: {exc}"
        ) from None
    _LOADED[modname] = module
    return module, seconds


def build_module(
    source: str, *, compiler: str | None = None, cflags=None, cache_dir=None
):
    """Compile (or load from the cache) the equations of ``source`` as a
    shared library, with the extension that calls them.

    Returns ``(library, compile_seconds)``, a :class:`CompiledLibrary`;
    ``compile_seconds`` is 0 when everything came from the cache.
    """
    cffi = _cffi()
    cc = find_compiler(compiler)
    flags = list(default_cflags(cc) if cflags is None else cflags)
    source = source + _EXPORTS
    modname = "_eomc_" + _key(
        source, " ".join(cc), " ".join(flags), sys.platform, _machine_key(flags)
    )
    with _LOCK:
        if modname in _LOADED:
            return _LOADED[modname], 0.0
        wanted = compiled_cache_dir(cache_dir)
        directory = _usable_cache_dir(wanted)
        try:
            call_module, seconds, target = _build_in(
                cffi, cc, flags, source, modname, directory
            )
        except OSError as exc:
            # A full disk, a quota, a read-only directory: built once more
            # where it can be, uncached, with a note naming the cache.
            _PRIVATE[wanted] = directory = temporary_cache()
            warnings.warn(
                f"compiled cache {wanted} cannot be written "
                f"({exc.strerror or exc}): compiling uncached",
                CacheWarning,
                stacklevel=2,
            )
            call_module, seconds, target = _build_in(
                cffi, cc, flags, source, modname, directory
            )
        try:
            shared = _abi_ffi(cffi).dlopen(str(target))
            address = int(
                _ABI.cast("uintptr_t", _ABI.addressof(shared, "eom_functions"))
            )
        except (OSError, AttributeError, cffi.FFIError) as exc:
            raise CompilationError(
                f"the compiled library {target} does not load: {exc}"
            ) from None
        table = call_module.ffi.cast("const struct eom_functions *", address)
        library = CompiledLibrary(call_module, shared, table)
        _LOADED[modname] = library
        return library, seconds


def _build_in(cffi, cc, flags, source, modname, directory):
    """The call module and the library of ``source`` in ``directory``,
    each compiled there unless signed there already: ``(call module,
    compile seconds, library path)``."""
    call_module, seconds = _call_module(cffi, cc, flags, directory)
    target = directory / f"{modname}.so"
    if not _cached(target):  # the same C from two processes: built once
        with exclusive(directory / f"{modname}.lock"):
            if not _cached(target):
                start = time.perf_counter()
                _compile_library(cc, flags, source, modname, directory, target)
                seconds += time.perf_counter() - start
    return call_module, seconds, target


_ABI = None


def _abi_ffi(cffi):
    """The cffi instance that opens libraries and finds their table."""
    global _ABI
    if _ABI is None:
        ffi = cffi.FFI()
        ffi.cdef(_TABLE + "extern struct eom_functions eom_functions;")
        _ABI = ffi
    return _ABI


#: Errors of a directory that cannot take a file, as a compiler reports
#: them (the system's own messages): the cache is at fault, not the code.
_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)


def _run_compiler(cmd, cwd):
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    except OSError as exc:
        raise CompilerNotFoundError(
            f"C compiler {cmd[0]!r} cannot be run: {exc}"
        ) from None
    if proc.returncode != 0:
        # A file size limit kills the compiler with SIGXFSZ.
        xfsz = getattr(signal, "SIGXFSZ", None)
        if xfsz is not None and proc.returncode == -xfsz:
            raise OSError(errno.EFBIG, os.strerror(errno.EFBIG), cwd)
        for code in _DISK_ERRORS:
            if os.strerror(code) in proc.stderr:
                raise OSError(code, os.strerror(code), cwd)
        raise CompilationError(
            f"compiling the generated C failed ({shlex.join(cmd)}):\n"
            f"{proc.stderr[-4000:]}"
        )


def _compile_library(cc, flags, source, modname, directory, target):
    # A private build directory and an atomic rename: processes sharing the
    # cache never see a half-written library.
    with tempfile.TemporaryDirectory(dir=directory, prefix="build-") as tmp:
        csrc = Path(tmp) / f"{modname}.c"
        csrc.write_text(source)
        out = Path(tmp) / target.name
        _run_compiler(cc + flags + [str(csrc), "-o", str(out), "-lm"], tmp)
        os.chmod(csrc, 0o600)
        os.replace(csrc, directory / f"{modname}.c")
        _install(out, target)


def _compile_extension(cffi, cc, flags, include, modname, directory, target):
    from cffi.recompiler import recompile

    ffi = cffi.FFI()
    ffi.cdef(_CALL_CDEF)
    with tempfile.TemporaryDirectory(dir=directory, prefix="build-") as tmp:
        csrc = Path(tmp) / f"{modname}.c"
        # ffi.compile() would chdir into its build directory; only the C
        # is taken from cffi and the compiler is run here.
        recompile(
            ffi,
            modname,
            _CALL_SOURCE,
            c_file=str(csrc),
            call_c_compiler=False,
            uses_ffiplatform=False,
            compiler_verbose=False,
        )
        out = Path(tmp) / target.name
        _run_compiler(
            # The fast rhs uses the full C API (vectorcall, numpy's).
            cc
            + flags
            + ["-D_CFFI_NO_LIMITED_API"]
            + [f"-I{i}" for i in include]
            + [str(csrc), "-o", str(out)],
            tmp,
        )
        _install(out, target)


# ----------------------------------------------------------------------
# The model
# ----------------------------------------------------------------------
_SOURCES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _generated_c(eom):
    """C source and dimensions of ``eom``, generated once per equations."""
    got = _SOURCES.get(eom)
    if got is None:
        start = time.perf_counter()
        source, info = c_source(eom)
        got = (source, info, time.perf_counter() - start)
        _SOURCES[eom] = got
    return got


_F8 = np.dtype(float)
_PATHS = {0: "none", 1: "ldlt", 2: "lu"}


class CompiledModel(NumericModel):
    """The ``"c"`` backend: the numeric contract of
    :class:`~eomcompare.numeric.model.NumericModel` evaluated in compiled C.

    Parameters
    ----------
    eom : EquationsOfMotion
    parameters : mapping, optional
        Parameter values overriding the declaration's.
    compiler : str, optional
        C compiler command (default ``$CC``, else cc, gcc or clang).
    cflags : sequence of str, optional
        Compiler flags (default :data:`DEFAULT_CFLAGS`, with
        :data:`NATIVE_CFLAGS` where the compiler accepts them).
    cache_dir : path, optional
        Directory of compiled modules (default :func:`compiled_cache_dir`).

    Raises
    ------
    CompilerNotFoundError
        When no C compiler, Python headers or cffi are available.
    CompilationError
        When the generated C does not compile.

    Notes
    -----
    ``rhs`` is one C call: mass matrix, forcing, the solve and the state
    rates.  The solve is LDL^T on the lower triangle when the mass matrix
    is symmetric as written (:func:`is_structurally_symmetric`), falling
    back to LU with partial pivoting at a pivot that is not positive; LU
    for any other matrix (:meth:`compiled_unknowns` tells which ran).  Every call returns a fresh array.  When
    the solve fails, the call is repeated through numpy to raise the same
    :class:`SingularConfigurationError` as the lambdify backend.

    Examples
    --------
    >>> from eomcompare.formulations import get_formulation
    >>> eom = get_formulation("kane").derive("double_pendulum")
    >>> model = eom.numeric(backend="c")
    >>> model.rhs(0.0, [0.1, 0.2, 0.0, 0.0]).shape
    (4,)
    """

    backend = "c"

    def __init__(
        self,
        eom,
        parameters: Mapping | None = None,
        *,
        compiler: str | None = None,
        cflags=None,
        cache_dir=None,
    ):
        source, info, self._codegen_seconds = _generated_c(eom)
        self._module, self.compile_seconds = build_module(
            source, compiler=compiler, cflags=cflags, cache_dir=cache_dir
        )
        self._lib = self._module.lib
        # The hot paths call the extension with the table themselves.
        self._table = self._module.table
        self._c_rhs = self._module.call.eom_call_rhs
        self._c_rhs_batch = self._module.call.eom_call_rhs_batch
        self._fast_rhs = self._module.fast_rhs
        self._table_address = self._module.table_address
        self._fb = self._module.ffi.from_buffer
        self._dbl = self._module.ffi.typeof("double[]")
        self.force_names = tuple(info["forces"])
        self._xshape = (len(eom.states),)
        super().__init__(eom, parameters)

    def _set_parameters(self, p):
        self._pc = self._fb("double[]", p)

    @property
    def codegen_seconds(self) -> float:
        """Seconds spent printing the C (compiling excluded)."""
        return self._codegen_seconds

    def _call(self, fn, t0, inputs, outputs) -> None:
        """``fn(t, *inputs, p, *outputs)``, one of the generated C functions
        (every array contiguous doubles; the outputs written in place)."""
        fb = self._fb
        fn(
            float(t0),
            *[fb("double[]", a) for a in inputs],
            self._pc,
            *[fb("double[]", a) for a in outputs],
        )

    def _mass_matrix_and_forcing(self, t0, x):
        n = self.n_unknowns
        M = np.empty((n, n))
        f = np.empty(n)
        self._call(self._lib.eom_mf, t0, (x,), (M, f))
        return M, f

    def _rhs(self, t0, x) -> np.ndarray:
        # One C call: mass matrix, forcing, solve and rates.  The fast
        # path takes float64 arrays of the right shape as they are, and
        # answers None for anything else and for a failed solve, which
        # the cffi call below converts (never reinterprets) or reports.
        fast = self._fast_rhs
        if fast is not None:
            out = fast(self._table_address, t0, x, self._p, self._xshape[0])
            if out is not None:
                return out
        if type(x) is not np.ndarray or x.dtype is not _F8 or x.shape != self._xshape:
            x = self._vec(x, self.n_states, "x")
        out = np.empty(self.n_states)
        fb, dbl, table = self._fb, self._dbl, self._table
        try:
            status = self._c_rhs(table, t0, fb(dbl, x), self._pc, fb(dbl, out))
        except (TypeError, ValueError, BufferError):  # a strided view, say
            x = self._vec(x, self.n_states, "x")
            status = self._c_rhs(table, float(t0), fb(dbl, x), self._pc, fb(dbl, out))
        if status:
            return self._rates_after_failure(t0, x)
        return out

    def dop853_segment(self, a, b, x, **options):
        """DOP853 from ``a`` to ``b`` with its step loop in compiled code
        (:func:`eomcompare.numeric.dop853.dop853_segment`)."""
        return run_compiled(self._module, self._table, self._pc, a, b, x, **options)

    def compiled_unknowns(self, t0, x):
        """The unknowns at ``(t0, x)`` by the compiled solve of ``rhs``,
        and which solve produced them.

        Returns
        -------
        z : ndarray or None
            The unknowns (q'' or u', and multipliers), None when the solve
            failed (a singular matrix: ``rhs`` then raises).
        path : {"ldlt", "lu", "none"}
            LDL^T (a symmetric, positive definite mass matrix), LU with
            partial pivoting (any other, or the fallback of LDL^T), or no
            solve (explicit form).
        """
        x = self._vec(x, self.n_states, "x")
        z = np.empty(max(self.n_unknowns, 1))
        path = self._module.ffi.new("int *")
        status = self._lib.eom_unknowns(
            float(t0), self._fb("double[]", x), self._pc, self._fb("double[]", z), path
        )
        return (None if status else z[: self.n_unknowns]), _PATHS[path[0]]

    def _rates_after_failure(self, t0, x):
        # numpy repeats the solve and raises the lambdify backend's error;
        # if it does not, its solution is used.
        return self._rates(t0, x, self.solve_unknowns(t0, x))

    def _rates(self, t0, x, z):
        out = np.empty(self.n_states)
        self._call(self._lib.eom_rates, t0, (x, np.ascontiguousarray(z, float)), (out,))
        return out

    def _rhs_batch(self, T, X) -> np.ndarray:
        # One C call for all states; a state whose solve fails is redone
        # through numpy (raising for it), then the rest continue in C.
        k = X.shape[0]
        if T.ndim == 0:
            T, ts = T.reshape(1), 0
        else:
            T, ts = np.ascontiguousarray(T), 1
        out = np.empty((k, self.n_states))
        fb = self._fb
        bad = self._c_rhs_batch(
            self._table,
            k,
            fb("double[]", T),
            ts,
            fb("double[]", X),
            self._pc,
            fb("double[]", out),
        )
        while bad:
            i = bad - 1
            out[i] = self._rates_after_failure(T[i * ts], X[i])
            if i + 1 == k:
                break
            rest = self._c_rhs_batch(
                self._table,
                k - i - 1,
                fb("double[]", T[(i + 1) * ts :] if ts else T),
                ts,
                fb("double[]", X[i + 1 :]),
                self._pc,
                fb("double[]", out[i + 1 :]),
            )
            bad = rest + i + 1 if rest else 0
        return out

    def _state(self, t0, q, qd):
        out = np.empty(self.n_states)
        self._call(self._lib.eom_state, t0, (q, qd), (out,))
        return out

    def _coordinates(self, t0, x):
        out = np.empty(2 * self.n_coordinates)
        self._call(self._lib.eom_coords, t0, (x,), (out,))
        return out

    def _accelerations(self, t0, x, z):
        out = np.empty(self.n_coordinates)
        self._call(self._lib.eom_acc, t0, (x, np.ascontiguousarray(z, float)), (out,))
        return out

    def _forces(self, t0, x, z):
        out = np.empty(len(self.force_names))
        self._call(
            self._lib.eom_forces, t0, (x, np.ascontiguousarray(z, float)), (out,)
        )
        return out
