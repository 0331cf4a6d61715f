"""Exceptions that carry one clear sentence for the user.

Every failure a steward can cause (a bad file, a parameter out of range, a
table that cannot be sanitized with the chosen parameters) is raised as a
:class:`WorkbenchError`.  Pages show ``str(error)`` in ``st.error``; the CLI
prints it on one line of stderr and exits non-zero.  Anything else is a bug.
"""

from __future__ import annotations


class WorkbenchError(Exception):
    """Base class: the message is a complete sentence meant for the user."""


class DataError(WorkbenchError, ValueError):
    """The input table cannot be read or used (empty, one column, bad encoding...)."""


class ParameterError(WorkbenchError, ValueError):
    """A parameter has the wrong type or lies outside its declared range."""


class NotEligible(WorkbenchError):
    """The table cannot be sanitized with these parameters.

    This is an answer, not a crash: the message says which value blocks it
    and, where one exists, the nearest setting that works.
    """

    def __init__(self, message: str, *, suggestion: dict | None = None):
        super().__init__(message)
        #: parameter values that would work (e.g. ``{"gamma": 7}``), if known
        self.suggestion = dict(suggestion or {})


#: the command line's exit statuses (``python -m core --help`` lists them; docs/cli-exit-status.md explains them)
EXIT_OK = 0
EXIT_USAGE = 2  #: bad input or a refused request: one sentence on stderr, nothing written
EXIT_INTERNAL = 70  #: an internal error (a bug), as sysexits' EX_SOFTWARE: one line on stderr
#: (3, a guarantee not met under --require-guarantee or a risk over --max-risk, is core.guarantee.EXIT_NOT_MET)
STATUS_HELP = """exit status:
  0    done
  2    bad input or a refused request: one sentence on stderr, nothing written
  3    sanitize --require-guarantee / --max-risk: the release does not meet its guarantee, or its measured
       risk is above the limit (one line: what fails, the nearest setting that meets it); nothing written
  70   internal error (a bug): one line on stderr, nothing written; please report it
  130  interrupted by Ctrl-C: temporary outputs removed, nothing written
  143  stopped by SIGTERM (129: SIGHUP), as Ctrl-C: temporary outputs removed, nothing written"""


#: longest piece of user input a message repeats (item 10 of issue 12: a 100 KB value echoed back is unreadable)
ECHO_LIMIT = 80


#: a path echoed in a message keeps this many characters: a file name is what the user must find again
PATH_LIMIT = 400


def clip_path(path: object) -> str:
    """A path as a message echoes it: :func:`clip` with room for a deep folder (:data:`PATH_LIMIT`)."""
    return clip(str(path), PATH_LIMIT)


def clip(value: object, limit: int = ECHO_LIMIT) -> str:
    """User input as it is echoed in a message: one line, at most ``limit`` characters.

    Longer text keeps its first ``limit - 1`` characters and ends in ``…``;
    line breaks become ``⏎`` so the message stays one line (the CLI prints
    every error on one line of stderr).

    >>> clip("x" * 100)[-3:], len(clip("x" * 100)), clip("a\\nb")
    ('xx…', 80, 'a⏎b')
    """
    text = str(value).replace("\r\n", "⏎").replace("\n", "⏎").replace("\r", "⏎")
    return text if len(text) <= limit else text[: limit - 1] + "…"
