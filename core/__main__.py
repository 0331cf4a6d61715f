"""``python -m core``: the command line (see :mod:`core.cli`).

SIGTERM and SIGHUP are handled as Ctrl-C is (:func:`core.release.interrupt_on_signals`): the command
unwinds, every temporary output is removed, and it exits with 128 + the signal's number.
"""

import sys

from .cli import main
from .release import interrupt_on_signals, interrupt_status

try:
    with interrupt_on_signals():
        status = main()
except KeyboardInterrupt as exc:  # a signal between the command's end and here
    status = interrupt_status(exc)
sys.exit(status)
