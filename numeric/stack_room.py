"""Call a function with room for its whole Python call stack.

CPython (3.11 and later) keeps a thread's Python frames in chunks of
16 KiB that it maps with ``mmap`` as the stack grows and unmaps as soon as
the stack falls back below a chunk's first frame.  A recursion whose depth
goes up and down across such a boundary maps and unmaps a chunk at every
call, and each new chunk is faulted in page by page.  sympy's tree walks
(``subs``, ``diff``, ``free_symbols``) recurse like that on every node, so
whether a derivation pays for it, in system time, depends on nothing but
the depth at which it was called (the same cases run from inside a test
and from a script differ several times over in the number of maps).

:func:`call_with_room` calls the function from a frame whose value stack is
declared 4 MiB deep.  No chunk in use has room for that frame, so CPython
maps one chunk of 8 MiB for it, and every frame the call makes below it
fits in the rest of that chunk (about 4 MiB, tens of thousands of
frames): no chunk is mapped or unmapped until it returns.  The chunk's
pages are touched only as deep as the stack goes.  The harness calls the
work of every process it forks this way (:mod:`eomcompare.numeric.child`),
so a derivation's time no longer depends on where in its parent's stack
the process was forked.

>>> call_with_room(sum, [1, 2, 3])
6
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["call_with_room", "ROOM_SLOTS"]

T = TypeVar("T")

#: Slots (pointers) of value stack declared for the frame of
#: :func:`call_with_room`: 4 MiB, so that CPython maps an 8 MiB chunk for
#: it (chunks are 16 KiB doubled until the frame and 1,000 slots fit).
ROOM_SLOTS = 1 << 19


def _call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return fn(*args, **kwargs)


def _roomy(function: Callable[..., T]) -> Callable[..., T]:
    """``function`` with its declared value stack :data:`ROOM_SLOTS` deep
    (CPython; elsewhere ``function`` as it is).  A value stack deeper than
    the code uses is never read: only the frame's size changes."""
    if sys.implementation.name != "cpython" or sys.version_info < (3, 11):
        return function
    code = function.__code__
    function.__code__ = code.replace(co_stacksize=max(code.co_stacksize, ROOM_SLOTS))
    return function


_call = _roomy(_call)


def call_with_room(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, its calls in one stack chunk of their own
    (see the module's text)."""
    return _call(fn, *args, **kwargs)
