"""``python -m eomcompare``: the command line (:mod:`eomcompare.cli`)."""

import atexit
import os
import sys
import time

# The wall time the command reports counts from here, imports included.
_STARTED = time.perf_counter()

#: The command's exit status once it has returned one.
_STATUS: list[int] = []


def _end_process() -> None:
    """The last exit handler (the first registered): once the command has
    returned, its threads have ended, every other exit handler has run
    (temporary caches removed, worker processes ended) and its output is
    flushed, the process ends without the interpreter freeing every
    object of the run one by one (half a second after the main job, every
    file closed already).  A command that raised exits as usual."""
    if _STATUS:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_STATUS[0])


atexit.register(_end_process)

# A run's compiler is prepared in a child process meanwhile (numeric.ahead).
from eomcompare.numeric import ahead  # noqa: E402

ahead.start_for(sys.argv[1:])

from eomcompare.cli import main  # noqa: E402
from eomcompare.numeric.stack_room import call_with_room  # noqa: E402

# The command's frames in one stack chunk (numeric.stack_room).
status = call_with_room(main, started=_STARTED)
if isinstance(status, int) and not isinstance(status, bool):
    _STATUS.append(status)
sys.exit(status)
