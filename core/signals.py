"""SIGTERM and SIGHUP raised as Ctrl-C is, so a command unwinds and removes its temporaries (``python -m core``).

Standard library only: ``python -m core`` sets these up before it knows the
command, and ``--help`` must not wait for pandas.  Re-exported by
:mod:`core.release`, where they were first defined.
"""

from __future__ import annotations

import contextlib
import signal
import threading


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised as Ctrl-C is, so every ``finally`` and :class:`core.data.write.Staging` cleans up."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def interrupt_on_signals():
    """Within the block, SIGTERM and SIGHUP raise :class:`Interrupted` (a KeyboardInterrupt), as SIGINT does.

    Python's default for those signals ends the process at once, leaving
    the temporaries of a release being written; as a KeyboardInterrupt,
    they unwind like Ctrl-C and remove them.  Only the main thread can set
    handlers; elsewhere (a page's script thread) this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Interrupted(signum)

    old = {}
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            old[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


def interrupt_status(exc: KeyboardInterrupt) -> int:
    """The exit status of an interrupted command: 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM)."""
    return 128 + getattr(exc, "signum", signal.SIGINT)
