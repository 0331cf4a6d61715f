"""A least-recently-used cache bounded in bytes, with entries scoped to an owner.

The pages cache tables, encoded datasets, releases, workloads and
evaluations.  Counting entries does not bound memory: one release of a
5M-row table weighs as much as a thousand releases of a small one.  A
:class:`ByteLRU` measures every value it keeps (:func:`nbytes`, the numpy
and pandas buffers reachable from it) and evicts the least recently used
entries until the total fits its budget.

Each entry may carry a *scope* (the pages use the Streamlit session id for
anything derived from an upload): :meth:`ByteLRU.purge` drops one scope's
entries at once, so an upload's derived results leave memory when its
session ends, whatever the budget.  :func:`give_back_memory` then runs the
garbage collector and asks glibc to return freed heap pages to the system.

This module has no streamlit import: the CLI, tests and the pages share it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import ctypes.util
import functools
import gc
import sys
import threading
import types
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Hashable

import numpy as np
import pandas as pd

#: default byte budget of the pages' cache, in MB (environment variable ``WORKBENCH_CACHE_MB``)
BUDGET_MB = 1024
#: object-dtype cells sampled to estimate the bytes of a pandas column of Python objects
SAMPLE = 1000


def _object_bytes(values: np.ndarray) -> int:
    """Pointers plus an estimate of the Python objects of an object array (sampled, not walked)."""
    n = values.size
    if n == 0:
        return 0
    flat = values.ravel()
    step = max(1, n // SAMPLE)
    sample = flat[::step][:SAMPLE]
    mean = sum(sys.getsizeof(v) for v in sample) / len(sample)
    return int(values.nbytes + mean * n)


def _frame_bytes(frame: pd.DataFrame | pd.Series | pd.Index) -> int:
    if isinstance(frame, pd.Series):
        frame = frame.to_frame()
    if isinstance(frame, pd.Index):
        frame = frame.to_frame(index=False)
    total = int(frame.memory_usage(index=True, deep=False).sum())
    for col in range(frame.shape[1]):
        series = frame.iloc[:, col]
        if series.dtype == object:
            total += _object_bytes(series.to_numpy()) - series.to_numpy().nbytes
        elif isinstance(series.dtype, pd.StringDtype) and series.dtype.storage == "python":
            total += _object_bytes(series.to_numpy(dtype=object)) - 8 * len(series)
    return total


def nbytes(value: Any, skip: tuple[type, ...] = ()) -> int:
    """Bytes of the arrays and frames reachable from ``value`` (each buffer counted once).

    Walks dataclasses, ``__dict__``/``__slots__`` objects, mappings and
    sequences.  A numpy array counts its ``nbytes`` (a view counts nothing:
    its base is counted where it is reached); object arrays and object
    columns add an estimate of their Python objects from a sample of
    :data:`SAMPLE` cells, so a 5M-row table is measured in milliseconds.
    Instances of ``skip`` below the top level are not entered: the pages
    skip the :class:`core.table.Table` and :class:`core.table.Dataset` a
    result refers to, because those are measured as entries of their own (or
    live in the session).  Small Python objects (numbers, short strings) are
    counted by ``sys.getsizeof`` only as leaves.

    Parameters
    ----------
    value : object
        What to measure.
    skip : tuple of type, optional
        Types not entered below the top level.

    Returns
    -------
    int
        The estimated bytes.
    """
    seen: set[int] = set()
    total = 0
    stack: list[tuple[Any, bool]] = [(value, True)]
    while stack:
        obj, top = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if not top and skip and isinstance(obj, skip):
            continue
        if isinstance(obj, np.ndarray):
            if obj.base is not None and isinstance(obj.base, np.ndarray):
                stack.append((obj.base, False))
            elif obj.dtype == object:
                total += _object_bytes(obj)
            else:
                total += obj.nbytes
            continue
        if isinstance(obj, (pd.DataFrame, pd.Series, pd.Index)):
            total += _frame_bytes(obj)
            continue
        if isinstance(obj, (str, bytes, bytearray, int, float, complex, bool, type(None))):
            total += sys.getsizeof(obj)
            continue
        if isinstance(obj, (type, types.ModuleType, types.FunctionType, types.MethodType,
                            types.BuiltinFunctionType, functools.partial)):
            continue  # code, not data
        if isinstance(obj, dict):
            stack.extend((v, False) for v in obj.values())
            stack.extend((k, False) for k in obj.keys())
            continue
        if isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend((v, False) for v in obj)
            continue
        attrs = getattr(obj, "__dict__", None)
        if attrs is not None:
            stack.extend((v, False) for v in attrs.values())
        for slot in getattr(type(obj), "__slots__", ()):
            if hasattr(obj, slot):
                stack.append((getattr(obj, slot), False))
    return total


def budget_bytes(variable: str = "WORKBENCH_CACHE_MB", default_mb: float = BUDGET_MB) -> int:
    """The byte budget set in megabytes by the environment ``variable`` (0 caches nothing), else ``default_mb``.

    Raises ``ValueError`` naming the variable when it is not a number of megabytes.
    """
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return int(default_mb * 2**20)
    try:
        mb = float(raw)
    except ValueError:
        raise ValueError(f"{variable} must be a number of megabytes, 0 or more. Got {raw!r}.") from None
    if not 0 <= mb < float("inf"):
        raise ValueError(f"{variable} must be a number of megabytes, 0 or more. Got {raw!r}.")
    return int(mb * 2**20)


@dataclass
class _Entry:
    value: Any
    size: int
    scope: Hashable | None
    kind: str
    #: a base entry (a table, an encoded dataset): evicted only once no other entry is left to evict
    sticky: bool = False


class ByteLRU:
    """Least-recently-used cache whose values together stay within ``budget`` bytes.

    Thread-safe: the pages of every session call it from their own script
    threads.  A value being computed for a key is computed once; other
    threads asking for the same key wait for it (as ``st.cache_resource``
    does).  One value larger than the whole budget is still kept, alone, so
    the page that needs it does not recompute it on every rerun; it is the
    first to go when anything else is stored.  Exceptions are not cached.

    Parameters
    ----------
    budget : int
        Bytes the kept values may take together (as measured by ``size``).
    size : callable, optional
        Measures a value in bytes; :func:`nbytes` by default.
    """

    def __init__(self, budget: int, size: Callable[[Any], int] | None = None) -> None:
        if budget < 0:
            raise ValueError(f"The byte budget must be 0 or more. Got {budget}.")
        self.budget = int(budget)
        self._size = size or nbytes
        self._data: OrderedDict[Hashable, _Entry] = OrderedDict()
        #: per kind, its keys least recently used first, and the bytes they hold: a cap on one kind
        #: (``most``, ``most_bytes``) reads only that kind's entries, not the whole cache (a scan of
        #: every entry on each store cost a test process 1 s over 200 releases once it held 1,000 entries)
        self._kinds: dict[str, OrderedDict[Hashable, None]] = {}
        self._kind_bytes: dict[str, int] = {}
        self._lock = threading.Lock()
        self._computing: dict[Hashable, threading.Lock] = {}
        self.total = 0
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._data

    def get_or_compute(self, key: Hashable, compute: Callable[[], Any], *, scope: Hashable | None = None,
                       kind: str = "", remeasure: bool = False, sticky: bool = False,
                       most: int | None = None, most_bytes: int | None = None) -> Any:
        """The value kept for ``key``, or ``compute()`` kept under ``scope`` and returned.

        ``most``: at most this many entries of ``kind`` are kept, whatever
        the budget; storing one more evicts the least recently used of them.
        ``most_bytes``: likewise, the entries of ``kind`` together hold at
        most this many bytes (the one just stored is kept, however large).

        ``remeasure`` re-measures a value on every hit, for values that grow
        after they are stored (a release caches its query index).
        ``sticky`` marks a base value (a loaded table, an encoded dataset)
        that every other entry is derived from: it is evicted only after
        every non-sticky entry, least recently used first among the sticky
        ones.  Evicting it first would free nothing while the page and the
        entries derived from it hold it, and would load it again on the next
        rerun (a 5M-row table: seconds, and a second copy in memory).
        """
        with self._lock:
            hit = self._hit(key, remeasure)
            if hit is not _MISS:
                return hit
            lock = self._computing.setdefault(key, threading.Lock())
        with lock:
            with self._lock:
                hit = self._hit(key, remeasure)
                if hit is not _MISS:
                    return hit
            try:
                value = compute()
                size = int(self._size(value))
                with self._lock:
                    self._put(key, _Entry(value, size, scope, kind, bool(sticky)))
                    if most is not None:
                        self._cap(kind, most, keep=key)
                    if most_bytes is not None:
                        self._cap_bytes(kind, most_bytes, keep=key)
                return value
            finally:
                with self._lock:
                    if self._computing.get(key) is lock:
                        del self._computing[key]

    def _hit(self, key: Hashable, remeasure: bool) -> Any:
        entry = self._data.get(key)
        if entry is None:
            return _MISS
        self._data.move_to_end(key)
        self._kinds[entry.kind].move_to_end(key)
        if remeasure:
            size = int(self._size(entry.value))
            self.total += size - entry.size
            self._kind_bytes[entry.kind] += size - entry.size
            entry.size = size
            self._evict(keep=key)
        return entry.value

    def _put(self, key: Hashable, entry: _Entry) -> None:
        if key in self._data:
            self._pop(key)
        self._data[key] = entry
        self._kinds.setdefault(entry.kind, OrderedDict())[key] = None
        self._kind_bytes[entry.kind] = self._kind_bytes.get(entry.kind, 0) + entry.size
        self.total += entry.size
        self._evict(keep=key)

    def _pop(self, key: Hashable) -> None:
        """Drop the kept ``key`` from the entries, its kind's index and the byte counts."""
        entry = self._data.pop(key)
        del self._kinds[entry.kind][key]
        self._kind_bytes[entry.kind] -= entry.size
        self.total -= entry.size

    def _evict(self, keep: Hashable) -> None:
        while self.total > self.budget and len(self._data) > 1:
            # ``keep`` goes last: it is in use; sticky (base) entries after every other one
            oldest = next((k for k, e in self._data.items() if k != keep and not e.sticky), None)
            if oldest is None:
                oldest = next(k for k in self._data if k != keep)
            self._pop(oldest)
            self.evictions += 1

    def _cap(self, kind: str, most: int, keep: Hashable) -> None:
        order = self._kinds[kind]  # least recently used first
        excess = len(order) - max(1, most)
        victims: list[Hashable] = []
        for k in order:
            if len(victims) >= excess:
                break
            if k != keep:
                victims.append(k)
        self._drop(victims)

    def _cap_bytes(self, kind: str, most_bytes: int, keep: Hashable) -> None:
        held = self._kind_bytes[kind]
        victims: list[Hashable] = []
        for k in self._kinds[kind]:  # least recently used first
            if held <= most_bytes:
                break
            if k != keep:
                victims.append(k)
                held -= self._data[k].size
        self._drop(victims)

    def _drop(self, keys: list[Hashable]) -> None:
        for k in keys:
            self._pop(k)
            self.evictions += 1

    def purge(self, scope: Hashable) -> int:
        """Drop every entry of ``scope``; returns how many were dropped."""
        with self._lock:
            gone = [k for k, e in self._data.items() if e.scope == scope]
            for k in gone:
                self._pop(k)
        return len(gone)

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._data.clear()
            self._kinds.clear()
            self._kind_bytes.clear()
            self.total = 0

    def stats(self) -> dict[str, dict[str, int]]:
        """``{kind: {"entries", "bytes"}}`` of what is kept now."""
        out: dict[str, dict[str, int]] = {}
        with self._lock:
            for e in self._data.values():
                row = out.setdefault(e.kind, {"entries": 0, "bytes": 0})
                row["entries"] += 1
                row["bytes"] += e.size
        return out


_MISS = object()


def _load_libc() -> ctypes.CDLL | None:
    """The C library, looked up once: ``ctypes.util.find_library`` runs ``ldconfig -p`` in a new process
    (about 10 ms), which :func:`_mallopt` paid four times per release of a large table."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


_LIBC = _load_libc()


def _libc_malloc_trim() -> Callable[[int], int] | None:
    try:
        trim = _LIBC.malloc_trim
    except AttributeError:  # no C library found, or musl or another libc without malloc_trim
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_TRIM = _libc_malloc_trim()

#: glibc's mallopt parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
#: prctl's PR_SET_THP_DISABLE and PR_GET_THP_DISABLE (linux/prctl.h)
_PR_SET_THP_DISABLE = 41
_PR_GET_THP_DISABLE = 42


#: the app's glibc mmap threshold in KiB at rest (:func:`fix_mmap_threshold`), unless ``WORKBENCH_MMAP_KB`` says otherwise
MMAP_KB = 128
#: the threshold in KiB while a table of :data:`LARGE_ROWS` records or more is computed on (:func:`large_arrays`)
LARGE_MMAP_KB = 16 * 1024
#: records from which a computation raises the threshold
LARGE_ROWS = 1_000_000
#: glibc's trim threshold once a large table has been computed on: free heap at its top is kept up to this many
#: bytes.  Choice: 16 MiB, not 64 (the value before).  Each thread arena's heap is at most 64 MiB, so at 64 MiB its
#: free top was never handed back, by a free or by ``malloc_trim``: census 5M, UP, SPLU-Gen, bucketization and RP
#: three presses each held 1,123 MB at rest at 64 MiB, 749 at 16 MiB and 708 at 4 MiB; the presses took 0.41-1.00
#: s, 0.46-0.96 s and 0.47-1.17 s (one run each, load 0.9-1.25).  The price, in AppTest (no browser), a
#: bucketization move: 0.13 s of kernel time at 64 MiB, 0.14-0.20 s at 16, 24 or 32 MiB (85,000-103,000 page
#: faults instead of 52,000-85,000), the move 0.58-0.78 s against 0.64-0.78 s (two rounds, alternated)
TRIM_BYTES = 16 * 2**20
_M_TRIM_THRESHOLD = -1
#: the resting threshold in bytes once :func:`fix_mmap_threshold` has set one (None: glibc's own, dynamic)
_RESTING: list[int | None] = [None]
#: computations on large tables running now (:func:`large_arrays`), and the lock around raising and restoring
_LARGE = [0]
_LARGE_LOCK = threading.Lock()
#: seconds without a computation on a large table after which glibc hands its free heap back (:func:`large_arrays`)
IDLE_TRIM_SECONDS = 2.0
#: the pending give-back (a daemon timer), replaced each time the last large computation ends
_IDLE_TIMER: list = [None]


def _mallopt(param: int, value: int) -> bool:
    try:
        return bool(_LIBC.mallopt(param, int(value)))
    except AttributeError:  # no C library, or one without mallopt (None.mallopt raises the same)
        return False


def _set_threshold(size: int, trim: int) -> bool:
    """glibc's mmap threshold at ``size`` bytes and its trim threshold at ``trim`` bytes."""
    _mallopt(_M_TRIM_THRESHOLD, trim)
    return _mallopt(_M_MMAP_THRESHOLD, size)


def fix_mmap_threshold(size: int | None = None) -> bool:
    """Fix glibc's mmap threshold at ``size`` bytes (blocks that large get their own mmap); True if set.

    ``size`` None: ``WORKBENCH_MMAP_KB`` KiB when set (1 to 32768, glibc's
    largest), else :data:`MMAP_KB` (128 KiB).  A value that is not such a
    number raises ``ValueError`` naming the variable.

    glibc raises its threshold each time a large block is freed (up to
    32 MB), after which arrays of a few MB come from the heap arenas, where
    a long-lived small object can pin freed pages.  Fixing the threshold
    keeps numpy arrays and parsed columns in mappings that go back to the
    system the moment they are freed: 8 sessions x 120 s on Adult and
    50,000-row uploads (bench/load.py) end at 1.09-1.16x the server's
    starting memory at 128 KiB, at 1.26-1.27x at 16 MiB (three runs).
    Large tables are the exception (:func:`large_arrays`).  It also caps
    glibc at two heap arenas (``M_ARENA_MAX``): the same bench left RSS at
    1.22x its start without the cap, 1.16x with it.  Called once when the
    pages load; a no-op (False) off glibc.
    """
    if size is None:
        raw = os.environ.get("WORKBENCH_MMAP_KB", "").strip()
        try:
            kb = int(raw) if raw else MMAP_KB
        except ValueError:
            kb = 0
        if not 1 <= kb <= 32768:
            raise ValueError(f"WORKBENCH_MMAP_KB must be a whole number of KiB from 1 to 32768. Got {raw!r}.")
        size = kb * 1024
    if _TRIM is None:
        return False
    # at most two heap arenas: each session's script thread would otherwise get an arena of its own, whose
    # freed pages a few live objects pin
    _mallopt(_M_ARENA_MAX, 2)
    with _LARGE_LOCK:
        _RESTING[0] = int(size)
        if _LARGE[0]:  # a large computation is running: it restores this size when it ends
            return True
        return _set_threshold(int(size), max(128 * 1024, 2 * int(size)))


def no_huge_pages() -> bool:
    """Turn transparent huge pages off for this process (``prctl(PR_SET_THP_DISABLE)``); True if done.

    With THP on ("always", as on this machine), every fresh mapping of an
    array is faulted in 2 MiB at a time, each huge page zeroed whole by the
    kernel.  A census 5M slider move allocates hundreds of MB of short-lived
    arrays, and its kernel time went from 0.03 to 0.4 s from one move to the
    next (``clear_page_erms`` under ``do_huge_pmd_anonymous_page`` in
    ``perf``).  In chromium, two alternated rounds of
    ``bench/latency.py --census`` (bucketization, RP, SPLU-Gen, Mondrian,
    4 presses): 1.17/0.94, 0.95/0.93, 0.90/0.76 and 0.67/0.70 s with THP, and
    0.96/0.95, 0.91/0.89, 0.68/0.71 and 0.55/0.59 s without; the memory held
    after the moves 1,586-1,592 MB against 1,619-1,629 MB.  (Also tried:
    no mappings of their own at all while a large table is computed on,
    ``M_MMAP_MAX = 0``, with 1 GiB of free heap kept: about as fast, and
    300 MB more at the peak.)  The app's server calls it once when the pages
    load; a no-op (False) off Linux.
    """
    if _LIBC is None or not sys.platform.startswith("linux"):
        return False
    try:
        return _LIBC.prctl(_PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0 and _LIBC.prctl(_PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1
    except AttributeError:
        return False


@contextlib.contextmanager
def large_arrays(rows: int):
    """While a computation on a table of ``rows`` records runs: glibc's mmap threshold at :data:`LARGE_MMAP_KB`.

    At 128 KiB every per-batch temporary of a release (1M records: 8 MiB an
    int64 array) is a fresh mapping zeroed page by page on every use: a
    census 5M SPLU slider move took about 270,000 page faults and 0.6 s of
    kernel time; at 16 MiB, with freed heap kept up to :data:`TRIM_BYTES`,
    about 15,000 and 0.07 s for the same user time.  Whole-table arrays of
    such a table (16 MiB and more) still get their own mappings.  So the
    threshold is raised while any computation on a table of
    :data:`LARGE_ROWS` records or more runs (counted across threads) and
    put back at rest when the last ends.  The trim threshold stays at
    :data:`TRIM_BYTES` from then on: the next slider move on the large
    table reuses the heap pages this one freed instead of faulting in new
    ones (census 5M bucketization: 69 instead of 87 huge pages zeroed a
    move, 0.09-0.12 s of kernel time instead of 0.15-0.22 s).

    That threshold only trims a heap's top: the pages of free blocks
    below it stayed mapped, 280-510 MB of free heap (``mallinfo2``) in a
    server driven through seven mechanisms on census 5M, which no later
    move needed at once.  So when no computation on a large table has run
    for :data:`IDLE_TRIM_SECONDS`, ``malloc_trim(0)`` hands the free blocks'
    pages back (2-17 ms; 40-150 MB each time in that run; it does not
    reach a thread arena's top, which :data:`TRIM_BYTES` does).  Choice:
    after a pause, not after every computation, so slider presses in a row
    keep reusing the same pages; a press after a pause faults them in
    again.  A no-op for smaller tables, off glibc, or before
    :func:`fix_mmap_threshold` fixed a resting value.
    """
    if rows < LARGE_ROWS or _TRIM is None or _RESTING[0] is None:
        yield
        return
    with _LARGE_LOCK:
        _LARGE[0] += 1
        if _LARGE[0] == 1:
            _set_threshold(max(LARGE_MMAP_KB * 1024, _RESTING[0]), TRIM_BYTES)
    try:
        yield
    finally:
        with _LARGE_LOCK:
            _LARGE[0] -= 1
            if _LARGE[0] == 0 and _RESTING[0] is not None:
                _set_threshold(_RESTING[0], TRIM_BYTES)
                _give_back_when_idle()


def _give_back_when_idle() -> None:
    """(Under ``_LARGE_LOCK``, as the last large computation ends.) :func:`trim_if_idle` in :data:`IDLE_TRIM_SECONDS`."""
    if _IDLE_TIMER[0] is not None:
        _IDLE_TIMER[0].cancel()
    timer = threading.Timer(IDLE_TRIM_SECONDS, trim_if_idle)
    timer.daemon = True
    _IDLE_TIMER[0] = timer
    timer.start()


def trim_if_idle() -> bool:
    """``malloc_trim(0)`` unless a computation on a large table is running; True if trimmed."""
    with _LARGE_LOCK:
        if _LARGE[0] or _TRIM is None:
            return False
    _TRIM(0)
    return True


def many_releases():
    """:func:`large_arrays` for a computation that builds many releases in a row, on a table of any size.

    The trade-off map sanitizes, evaluates and attacks dozens of settings:
    at the resting 128 KiB each of their temporaries above that size (an
    Adult column of int64 is 360 KiB) is a fresh mapping zeroed page by page,
    and Adult's map spent 4-5 s of kernel time beside 10 s of user time
    (0.2-0.5 s with the threshold raised, the same user time).  The
    threshold goes back to rest when the computation ends.
    """
    return large_arrays(LARGE_ROWS)


#: whether :func:`freeze_startup` has run in this process
_FROZEN = [False]


def freeze_startup() -> bool:
    """Move the objects alive now out of the cyclic collector's scans (:func:`gc.freeze`), once per process.

    Called by ``app.py`` before the server's first page run, once the
    pages' modules are imported: the modules, classes and library tables of
    streamlit, pandas, plotly and the core (about 160,000 objects), and no
    session's data yet.  Every full collection (generation 2, which a
    rerun's new objects trigger every move or two) otherwise walks them
    all: about 0.1 s each after a census 5M slider move has flushed the
    caches.  They live as long as the process anyway; a collection runs
    first so that no garbage is frozen.  True the first time.
    """
    with _LARGE_LOCK:
        if _FROZEN[0]:
            return False
        _FROZEN[0] = True
    gc.collect()
    gc.freeze()
    return True


def frozen() -> bool:
    """Whether :func:`freeze_startup` has run in this process."""
    return _FROZEN[0]


def refreeze() -> None:
    """With no session left: collect everything, frozen objects included, then freeze what is alive again.

    Called when the last session has closed and every cached result is
    dropped (:mod:`pages.ui.cached`), so what is alive is the modules and
    no session's data.  Some objects frozen earlier become garbage in
    reference cycles (the collector does not look at frozen objects):
    bench/load.py left the server at 1.19-1.22x its starting memory with the
    startup freeze alone, 1.15x with this.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def give_back_memory() -> None:
    """Collect garbage, then hand freed heap pages back to the system.

    Dropping a parsed upload frees its objects, but the allocators keep the
    freed pages mapped, so the process's resident memory stays high: Arrow's
    pool (used by the CSV and Parquet readers) is asked to
    ``release_unused()`` when pyarrow is loaded, and glibc to
    ``malloc_trim(0)`` (skipped on other platforms or libcs).
    """
    gc.collect()
    arrow = sys.modules.get("pyarrow")
    if arrow is not None:  # the CSV and Parquet readers allocate through Arrow's own pool (mimalloc)
        arrow.default_memory_pool().release_unused()
    if _TRIM is not None:
        _TRIM(0)
