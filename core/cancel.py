"""Cooperative cancellation of work whose result nobody waits for any more.

The pages compute some results behind the page (the nearest setting that
meets a guarantee, the measured risk, a count's interval in people); a
slider moved again makes the ones for the setting left behind useless, and
on two cores they took the processors from the answer to the next move.  A
thread cannot be stopped from outside, so the work stops itself: its caller
runs it inside :func:`scope` with an event, and the long computations call
:func:`check` at their natural steps (each sanitization, each estimate of a
release); once the event is set, :func:`check` raises :class:`Cancelled`.

Outside a scope :func:`check` does nothing: the CLI, the front door and the
tests never see it.  :class:`Cancelled` derives from ``BaseException``, not
``Exception``, so a handler that turns a failed candidate into "not found"
(``except Exception``) cannot turn a cancelled search into a result that
would then be cached.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

_local = threading.local()


class Cancelled(BaseException):
    """The work was cancelled: nobody waits for its result (never a result, never cached)."""


@contextmanager
def scope(event: threading.Event) -> Iterator[None]:
    """Within this block, on this thread, :func:`check` raises :class:`Cancelled` once ``event`` is set."""
    before = getattr(_local, "event", None)
    _local.event = event
    try:
        yield
    finally:
        _local.event = before


def check() -> None:
    """Raise :class:`Cancelled` if the work running on this thread has been cancelled; else nothing."""
    event = getattr(_local, "event", None)
    if event is not None and event.is_set():
        raise Cancelled("cancelled: nobody waits for this result any more")
