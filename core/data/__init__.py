"""The data layer: reading tables and choosing their columns (read options, column proposals, banding).

:mod:`core.data.read` turns bytes of any supported format into a frame of
strings and numbers, detecting what the user did not say (format from the
content, encoding, delimiter, header, decimal comma, missing-value markers)
and reporting what it decided, so a page or the CLI can show it and the
manifest can record it (``from core.data.read import read, inspect``).
:mod:`core.table` delegates its loading to it.  :mod:`core.data.columns`
proposes the sensitive attribute and QIs; :mod:`core.data.banding` bands
numeric QIs.
"""

from .read import DEFAULT_NA, ReadOptions, ReadResult  # noqa: F401  (read(), inspect(): core.data.read)

__all__ = ["DEFAULT_NA", "ReadOptions", "ReadResult", "read"]
