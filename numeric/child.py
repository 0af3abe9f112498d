"""Run a function in a forked child process with a time limit.

This is the harness's one way of bounding the time a piece of work may
take: the work runs in a child process forked from the caller, its result
comes back through a pipe, and when the deadline passes the child is
killed (SIGKILL), whatever it is doing (pure Python, a C extension, a
compiler it started).  Nothing depends on signals reaching the work
itself, so a ``try``/``except`` in the work cannot swallow the time-out,
and the caller may be any thread of any process (a dask worker too).

A child also dies when its parent does (Linux: ``PR_SET_PDEATHSIG``), so
killing a run never leaves work behind.

>>> call_in_child(pow, 2, 10, timeout=30)
1024
"""

from __future__ import annotations

import ctypes
import gc
import os
import pickle
import select
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from .stack_room import call_with_room

__all__ = [
    "Child",
    "ChildTimeout",
    "ChildDied",
    "Workers",
    "call_in_child",
    "wait_any",
    "frozen_heap",
]

# A pipe's write end must reach its own child only: a fork from another
# thread between os.pipe() and the parent's close would hold it open and
# the reader would never see end of file.
_FORK_LOCK = threading.Lock()


class ChildTimeout(TimeoutError):
    """The child ran past its time limit and was killed."""


class ChildDied(RuntimeError):
    """The child ended without sending a result (killed, crashed, exited)."""

    def __init__(self, message: str, returncode: int | None = None):
        super().__init__(message)
        self.returncode = returncode


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _name_process(name: str) -> None:
    """This process's name as ``ps`` shows it (Linux; elsewhere unchanged)."""
    try:
        with open("/proc/self/comm", "w") as fh:
            fh.write(name[:15])
    except OSError:
        pass


def _child_main(
    write_fd: int,
    parent: int,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    name: str | None = None,
) -> None:
    _become_child(parent, name)
    code = 0
    try:
        payload = _outcome(fn, *args, **kwargs)
        with os.fdopen(write_fd, "wb") as fh:
            fh.write(payload)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _become_child(parent: int, name: str | None) -> None:
    """First thing in a forked child: its name, and no part in the
    parent's interrupts."""
    if name:
        _name_process(name)
    # The parent decides about interrupts: it kills this process.  Handlers
    # inherited through fork must not run the parent's clean-up here.
    global _FORK_LOCK
    _FORK_LOCK = threading.Lock()  # copied held from the forking thread
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):
        signal.signal(sig, signal.SIG_DFL)
    _die_with_parent(parent)


def _outcome(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> bytes:
    """``("ok", fn(...))`` pickled, or ``("raise", exception, traceback
    text)`` when it raises (to be raised in the parent)."""
    try:
        # The work's frames in a stack chunk of their own, wherever in the
        # parent's stack the fork happened (numeric.stack_room).
        return pickle.dumps(
            ("ok", call_with_room(fn, *args, **kwargs)),
            protocol=pickle.HIGHEST_PROTOCOL,
        )
    except BaseException as exc:  # sent to the parent, raised there
        tb = traceback.format_exc(limit=8)
        try:
            return pickle.dumps(("raise", exc, tb))
        except Exception:
            return pickle.dumps(
                ("raise", RuntimeError(f"{type(exc).__name__}: {exc}"), tb)
            )


class Child:
    """One call ``fn(*args, **kwargs)`` running in a forked child process.

    Parameters
    ----------
    fn : callable
        Called in the child; its return value must pickle.
    args, kwargs
        Its arguments.
    timeout : float or None
        Seconds from the start after which :meth:`poll` kills the child.
    process_name : str, optional
        The child's name as ``ps`` shows it (Linux), given first thing:
        by default it keeps its parent's.

    Notes
    -----
    Poll the child (or wait for :attr:`fileno` to become readable) until
    :meth:`poll` returns True, then read :meth:`result`.  The parent must
    read the pipe while the child writes, which :meth:`poll` does.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *args: Any,
        timeout: float | None = None,
        process_name: str | None = None,
        **kwargs: Any,
    ) -> None:
        if timeout is not None and not timeout > 0:
            raise ValueError(
                f"timeout must be a positive number of seconds, not {timeout!r}"
            )
        self.timeout = timeout
        parent = os.getpid()
        sys.stdout.flush()
        sys.stderr.flush()
        with _FORK_LOCK:
            read_fd, write_fd = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the child
                os.close(read_fd)
                _child_main(write_fd, parent, fn, args, kwargs, process_name)
            os.close(write_fd)
        self.pid = pid
        self.started = time.monotonic()
        self._fd: int | None = read_fd
        os.set_blocking(read_fd, False)
        self._chunks: list[bytes] = []
        # ("ok", value) / ("raise", exc, tb) / ("timeout" | "died", message)
        self._outcome: tuple[Any, ...] | None = None
        self.returncode: int | None = None

    @property
    def fileno(self) -> int | None:
        """The pipe's read end while the child runs (for ``select``)."""
        return self._fd

    @property
    def deadline(self) -> float | None:
        return None if self.timeout is None else self.started + self.timeout

    @property
    def done(self) -> bool:
        return self._outcome is not None

    @property
    def finished_normally(self) -> bool:
        """Done, with a return value or an exception of ``fn``."""
        return self._outcome is not None and self._outcome[0] in ("ok", "raise")

    def _drain(self) -> bool:
        """Read what is available; True at end of file."""
        while True:
            if self._fd is None:
                return True
            try:
                chunk = os.read(self._fd, 1 << 20)
            except BlockingIOError:
                return False
            if not chunk:
                return True
            self._chunks.append(chunk)

    def _reap(self, block: bool) -> None:
        if self.returncode is not None:
            return
        pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
        if pid:
            self.returncode = os.waitstatus_to_exitcode(status)

    def _finish(self, outcome: tuple[Any, ...]) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._outcome = outcome

    def sent(self) -> bool:
        """Whether the child has sent all it will (its end of the pipe is
        closed, at the end of its work or at its death): :meth:`poll`
        then returns True, once the child has exited.  Reads what is
        available; kills nothing."""
        return self.done or self._drain()

    def poll(self) -> bool:
        """Collect output; kill the child past its deadline.  True when done."""
        if self.done:
            return True
        if self._drain():
            self._reap(block=True)
            data = b"".join(self._chunks)
            self._chunks = []
            outcome: tuple[Any, ...] | None
            try:
                outcome = pickle.loads(data) if data else None
            except Exception as exc:
                outcome = ("died", f"its result could not be read ({exc})")
            if outcome is None:
                rc = self.returncode
                how = (
                    f"killed by signal {signal.Signals(-rc).name}"
                    if rc is not None and rc < 0
                    else f"exit code {rc}"
                )
                outcome = ("died", f"the worker process ended without a result ({how})")
            self._finish(outcome)
            return True
        deadline = self.deadline
        if deadline is not None and time.monotonic() > deadline:
            self.kill()
            self._finish(("timeout", f"time-out after {self.timeout:g} s"))
            return True
        return False

    def kill(self) -> None:
        """Kill the child (if it runs) and reap it."""
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._reap(block=True)
        if not self.done:
            self._finish(("died", "killed by the parent"))

    def result(self) -> Any:
        """The return value; raises the child's exception, :class:`ChildTimeout`
        or :class:`ChildDied`."""
        outcome = self._outcome
        if outcome is None:
            raise RuntimeError("the child has not finished: poll() first")
        kind = outcome[0]
        if kind == "ok":
            return outcome[1]
        if kind == "raise":
            exc = outcome[1]
            exc.child_traceback = outcome[2]
            raise exc
        if kind == "timeout":
            raise ChildTimeout(outcome[1])
        raise ChildDied(outcome[1], self.returncode)


def wait_any(children: Iterable[Child], timeout: float | None = None) -> None:
    """Block until one of ``children`` has output or a deadline passes."""
    live = [c for c in children if not c.done]
    if not live:
        return
    now = time.monotonic()
    waits = [c.deadline - now for c in live if c.deadline is not None]
    if timeout is not None:
        waits.append(timeout)
    wait = max(0.0, min(waits)) if waits else None
    try:
        select.select([c.fileno for c in live if c.fileno is not None], [], [], wait)
    except InterruptedError:  # a signal: the caller's handler has run
        pass


def call_in_child(
    fn: Callable[..., Any], *args: Any, timeout: float | None = None, **kwargs: Any
) -> Any:
    """``fn(*args, **kwargs)`` in a child process, killed after ``timeout`` s.

    Raises
    ------
    ChildTimeout
        Past the time limit (the child is killed).
    ChildDied
        The child ended without a result (killed by a signal, crashed).
    Exception
        Whatever ``fn`` raised, with the child's traceback text as its
        ``child_traceback`` attribute.
    """
    child = Child(fn, *args, timeout=timeout, **kwargs)
    try:
        while not child.poll():
            wait_any([child], timeout=1.0)
    finally:
        if not child.done:  # interrupted: leave nothing behind
            child.kill()
    return child.result()


class Workers:
    """``jobs`` forked worker processes, each calling ``fn(task)`` for one
    task at a time, the results read as they come.

    >>> with Workers(abs, 2) as workers:
    ...     sorted(workers.map_unordered([-2, 3, -5]))
    [(-5, 5), (-2, 2), (3, 3)]

    Nothing is shared with the workers but a pipe each way per worker, and
    the parent drives them from the calling thread alone: no threads, no
    queue or lock that a worker holds while the parent waits for it.  (A
    ``multiprocessing.Pool`` keeps three threads in the parent and queues
    whose locks its workers share; terminating one that is busy stalled
    for minutes in a test process.)  A worker that dies is an error
    (:class:`ChildDied`), never a wait; :meth:`close` (or leaving the
    ``with`` block) kills every worker and reaps it.  The tasks are
    pickled to the workers, the results and exceptions back; ``fn`` and
    what it reads come through the fork.
    """

    def __init__(
        self, fn: Callable[[Any], Any], jobs: int, *, process_name: str | None = None
    ) -> None:
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, not {jobs!r}")
        self._fn = fn
        # Per worker: [pid, task write end, result read end, bytes read].
        self._workers: list[list[Any]] = []
        parent = os.getpid()
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            for _ in range(jobs):
                self._fork(parent, process_name)
        except BaseException:
            self.close()
            raise

    def _fork(self, parent: int, name: str | None) -> None:
        with _FORK_LOCK:
            task_r, task_w = os.pipe()
            result_r, result_w = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the child
                # The other workers' pipes are the parent's to hold.
                for _, w, r, _ in self._workers:
                    os.close(w)
                    os.close(r)
                os.close(task_w)
                os.close(result_r)
                _worker_main(task_r, result_w, parent, self._fn, name)
            os.close(task_r)
            os.close(result_w)
        self._workers.append([pid, task_w, result_r, bytearray()])

    @property
    def pids(self) -> list[int]:
        """The workers' process ids."""
        return [w[0] for w in self._workers if w[0] is not None]

    def map_unordered(self, tasks: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        """``(task, fn(task))`` for each of ``tasks``, in the order they
        finish; the tasks are handed out in the order given.  The first
        ones are sent now, before the iterator is read; a task's exception
        is raised from the iterator, with the worker's traceback text as
        its ``child_traceback``."""
        todo = list(tasks)
        todo.reverse()
        busy: dict[int, Any] = {}  # result fd -> its worker's task
        for worker in self._workers:
            if not todo:
                break
            busy[worker[2]] = task = todo.pop()
            _send(worker[1], task)
        return self._results(todo, busy)

    def _results(
        self, todo: list[Any], busy: dict[int, Any]
    ) -> Iterator[tuple[Any, Any]]:
        by_fd = {w[2]: w for w in self._workers}
        while busy:
            try:
                ready, _, _ = select.select(list(busy), [], [])
            except InterruptedError:  # a signal: the caller's handler has run
                continue
            for fd in ready:
                worker = by_fd[fd]
                outcome = _read_frame(worker)
                if outcome is None:
                    continue  # more of the frame to come
                task = busy.pop(fd)
                if todo:
                    busy[fd] = todo.pop()
                    _send(worker[1], busy[fd])
                if outcome[0] == "raise":
                    exc = outcome[1]
                    exc.child_traceback = outcome[2]
                    raise exc
                yield task, outcome[1]

    def close(self) -> None:
        """Kill the workers (whatever they are doing) and reap them."""
        while self._workers:
            pid, task_w, result_r, _ = self._workers.pop()
            for fd in (task_w, result_r):
                os.close(fd)
            if pid is None:  # reaped already (it died)
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: A frame on a worker's pipes: its length, then that many bytes of pickle.
_LENGTH = 8


def _send(fd: int, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    _write_all(fd, len(data).to_bytes(_LENGTH, "little") + data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_frame(worker: list[Any]) -> tuple[Any, ...] | None:
    """Read what the worker's result pipe holds now (it is readable); the
    outcome once its frame is complete, else None."""
    pid, _, fd, buf = worker
    chunk = os.read(fd, 1 << 20)
    if not chunk:
        _, status = os.waitpid(pid, 0)
        worker[0] = None  # reaped: close() has nothing to kill
        rc = os.waitstatus_to_exitcode(status)
        how = (
            f"killed by signal {signal.Signals(-rc).name}"
            if rc < 0
            else f"exit code {rc}"
        )
        raise ChildDied(f"a worker process ended without its result ({how})", rc)
    buf += chunk
    if len(buf) < _LENGTH:
        return None
    size = int.from_bytes(buf[:_LENGTH], "little")
    if len(buf) < _LENGTH + size:
        return None
    outcome: tuple[Any, ...] = pickle.loads(buf[_LENGTH : _LENGTH + size])
    del buf[: _LENGTH + size]
    return outcome


def _read_exactly(fd: int, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _worker_main(
    task_fd: int,
    result_fd: int,
    parent: int,
    fn: Callable[[Any], Any],
    name: str | None,
) -> None:  # pragma: no cover - runs in the child
    """A :class:`Workers` process: a task in, its outcome out, until the
    parent closes the task pipe (or kills it)."""
    _become_child(parent, name)
    code = 0
    try:
        while True:
            head = _read_exactly(task_fd, _LENGTH)
            if head is None:
                break
            body = _read_exactly(task_fd, int.from_bytes(head, "little"))
            if body is None:
                break
            data = _outcome(lambda: fn(pickle.loads(body)))
            _write_all(result_fd, len(data).to_bytes(_LENGTH, "little") + data)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


@contextmanager
def frozen_heap() -> Iterator[None]:
    """In the block, the objects this process holds when it begins are in
    the collector's permanent generation (``gc.freeze``): the collections
    of the block, and those of processes forked in it, never walk them (a
    full collection of a report worker walked the run's whole heap, a
    fifth of a second each time, and copied every page it touched);
    objects made in the block are collected as usual.  Blocks nest: the
    outermost gives the objects back to the collector.

    Not for work that is timed: a derivation's time includes the
    collections its allocations trigger, of the heap its process holds,
    and is measured with the heap as it is."""
    global _FROZEN
    gc.freeze()
    _FROZEN += 1
    try:
        yield
    finally:
        _FROZEN -= 1
        if not _FROZEN:
            gc.unfreeze()


#: Blocks of :func:`frozen_heap` open in this process.
_FROZEN = 0
