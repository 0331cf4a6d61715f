"""How much memory a read may use: the estimates the readers (core.data.read) and loaders (core.data.load) share.

Kept apart so :mod:`core.data.read` and :mod:`core.data.load` import it
instead of each other (no import cycle).
"""

from __future__ import annotations

import os
from pathlib import Path

#: bytes a row the frame path (core.data.read + a pandas frame) needs at the census width (issue 15
#: measured 440-480 bytes a row for sanitize at 1M-10M rows; rounded up)
FRAME_BYTES_PER_ROW = 500
#: bytes a row the columnar path needs beside the codes: a mechanism's working arrays (order keys 8,
#: ranks 8, output codes and their copy while writing about 24) plus the reader's batch (about 8)
COLUMNAR_OVERHEAD_PER_ROW = 48


def available_memory() -> int:
    """Bytes this process may still use: ``MemAvailable`` (and the cgroup's limit, when lower).

    ``WORKBENCH_MEMORY_BYTES`` overrides it (tests, or a server that shares
    the machine).  Falls back to 8 GiB where neither is readable.
    """
    given = os.environ.get("WORKBENCH_MEMORY_BYTES")
    if given:
        return int(float(given))
    found = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    found = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = int(Path("/sys/fs/cgroup/memory.current").read_text().strip())
        if limit != "max":
            room = int(limit) - used
            found = room if found is None else min(found, room)
    except (OSError, ValueError):
        pass
    return found if found is not None else 8 << 30


def size_text(value: float) -> str:
    """Bytes as ``12.3 GB`` (``450 MB`` under a gigabyte)."""
    return f"{value / 1e9:,.1f} GB" if value >= 1e9 else f"{value / 1e6:,.0f} MB"


def frame_row_limit() -> int:
    """The most rows the frame path reads before the memory estimate refuses (available / FRAME_BYTES_PER_ROW)."""
    return max(1, available_memory() // FRAME_BYTES_PER_ROW)
