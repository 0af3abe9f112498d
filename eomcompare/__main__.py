"""``python -m eomcompare``: the command line (:mod:`eomcompare.cli`)."""

import sys
import time

# The wall time the command reports counts from here, imports included.
_STARTED = time.perf_counter()

from eomcompare.cli import main  # noqa: E402

sys.exit(main(started=_STARTED))
