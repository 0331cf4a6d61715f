"""The local engine: run a plan over a :class:`core.table.Dataset` in batches, in one process.

``publish(data, mechanism, values, seed)`` is the whole release path of a
planned mechanism (:mod:`core.engine.protocol`):

1. :meth:`core.engine.combos.Combos.of` summarises the table (one pass);
2. ``mechanism.plan(combos, values, seed)`` decides everything table-wide;
3. :func:`run` applies the plan to batches of ``batch_rows`` records,
   giving each record its key and rank over the whole table (the counts of
   earlier batches carried forward), and adds the plan's tallies;
4. the records are put in the published order: sorted by
   :func:`core.rng.order_keys` of the seed, ties by position
   (:func:`published_order`).

The release does not depend on ``batch_rows``: every draw is keyed by the
record's position (:mod:`core.rng`) and every rank is counted over the
whole table (tests: one batch, 7 rows and 1,000 rows give the same bytes).

Partitioned output (``--out DIR``): part ``b`` holds the records whose order
key has top bits ``b``, ``B = parts_bits(n)`` bits, chosen from ``n`` only so
that both engines write the same parts; in the published order the parts
are contiguous slices (:func:`part_bounds`).
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Mapping

import numpy as np

from .. import rng as _rng
from ..release import CodedTable, Published
from .combos import Combos, LazyCombos, rank_keys
from .protocol import Chunk, Plan, add_tallies, ranks

#: records per batch by default (about 40 MB of codes and draws per batch on a census table)
DEFAULT_BATCH = 1 << 20
#: a part of a partitioned output holds at most this many records (the exponent: 2**21, about 2.1M)
PART_ROWS_LOG2 = 21


def parts_bits(n: int) -> int:
    """Top bits of the order key that name a record's part: the smallest ``B`` with ``n / 2**B <= 2**21``.

    A function of ``n`` only, so every engine cuts the same parts (about 1
    to 2.1M records each; 0 bits, one part, up to 2,097,152 records).
    """
    n = int(n)
    return 0 if n <= 1 else ((n - 1) >> PART_ROWS_LOG2).bit_length()


def _argsort_exact(keys: np.ndarray) -> np.ndarray:
    """``argsort`` by key, ties by position (quicksort, then a stable sort only if a tie occurred)."""
    order = np.argsort(keys)
    sk = keys[order]
    if len(sk) > 1 and np.any(sk[1:] == sk[:-1]):
        return np.argsort(keys, kind="stable")
    return order


def position_dtype(n: int):
    """The integer type of record positions among ``n`` records: int32 below 2**31 records (half int64's memory)."""
    return np.int32 if int(n) < 2**31 else np.int64


def published_order(keys: np.ndarray) -> np.ndarray:
    """Positions sorted by order key, ties by position: the published order of the records."""
    return ordered_parts(keys)[0]


def ordered_parts(keys: np.ndarray, bits: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`published_order` of ``keys`` and :func:`part_bounds` of the sorted keys, in one pass.

    Sorted part by part (records grouped by the top :func:`parts_bits`
    bits with a radix sort, then each part sorted on its own), which keeps
    each sort in cache: 10M keys take about a third of a plain stable
    argsort's time.  Positions are :func:`position_dtype` of ``n`` and the
    part bounds are the running counts of records per part, so no sorted
    copy of the keys is made (the order's memory at 100M records: 4 bytes
    a record, the keys' 8 while sorting).
    """
    keys = np.asarray(keys, dtype=np.uint64)
    n = len(keys)
    bits = parts_bits(n) if bits is None else int(bits)  # the parts to cut (records kept of a larger table: its)
    pos = position_dtype(n)
    if bits == 0:
        return _argsort_exact(keys).astype(pos, copy=False), np.array([0, n], dtype=np.int64)
    top = (keys >> np.uint64(64 - bits)).astype(np.uint8 if bits <= 8 else np.uint16 if bits <= 16 else np.uint32)
    bounds = np.zeros((1 << bits) + 1, dtype=np.int64)
    np.cumsum(np.bincount(top, minlength=1 << bits), out=bounds[1:])
    by_part = _group_by_part(top, bounds, pos)  # positions grouped by part, increasing inside each
    del top
    out = np.empty(n, dtype=pos)
    for b in range(1 << bits):
        lo, hi = bounds[b], bounds[b + 1]
        if hi > lo:
            idx = by_part[lo:hi]
            out[lo:hi] = idx[_argsort_exact(keys[idx])]
    return out, bounds


#: records grouped by part at a time (each group's stable argsort makes a temporary of 8 bytes a record)
GROUP_ROWS = 1 << 22


def _group_by_part(top: np.ndarray, bounds: np.ndarray, pos) -> np.ndarray:
    """Positions grouped by part number ``top``, increasing inside each part (a stable argsort of ``top``).

    Done ``GROUP_ROWS`` records at a time, each group's positions appended
    to its parts' slices (``bounds``: where each part starts), so the only
    full-size array is the result, of type ``pos``.
    """
    n_parts = len(bounds) - 1
    out = np.empty(len(top), dtype=pos)
    fill = bounds[:-1].copy()
    for lo in range(0, len(top), GROUP_ROWS):
        t = top[lo:lo + GROUP_ROWS]
        o = np.argsort(t, kind="stable")
        cuts = np.zeros(n_parts + 1, dtype=np.int64)
        np.cumsum(np.bincount(t, minlength=n_parts), out=cuts[1:])
        for b in np.flatnonzero(cuts[1:] > cuts[:-1]):
            k = cuts[b + 1] - cuts[b]
            out[fill[b]:fill[b] + k] = o[cuts[b]:cuts[b + 1]] + lo
            fill[b] += k
    return out


def part_bounds(sorted_keys: np.ndarray, bits: int) -> np.ndarray:
    """Start of each part in keys sorted ascending (``2**bits + 1`` bounds; part b is ``[bounds[b], bounds[b+1])``)."""
    if bits == 0:
        return np.array([0, len(sorted_keys)], dtype=np.int64)
    top = np.asarray(sorted_keys, dtype=np.uint64) >> np.uint64(64 - bits)
    return np.searchsorted(top, np.arange((1 << bits) + 1, dtype=np.uint64)).astype(np.int64)


#: records gathered at a time when a column is put in published order (bounds the temporaries)
GATHER_ROWS = 1 << 22


def code_dtype(dtype, size: int | None):
    """The smallest unsigned type for codes of ``size`` labels (strictly inside its range), or ``dtype`` itself.

    ``size`` None (plain values: group ids, counts) or a non-integer
    ``dtype`` keeps ``dtype``.
    """
    dtype = np.dtype(dtype)
    if size is None or dtype.kind not in "iu":
        return dtype
    for narrow in (np.uint8, np.uint16, np.uint32):
        if size <= np.iinfo(narrow).max:
            return np.dtype(narrow) if np.dtype(narrow).itemsize < dtype.itemsize else dtype
    return dtype


def gather(codes: np.ndarray, order: np.ndarray, size: int | None = None) -> np.ndarray:
    """``codes[order]`` in batches, as the smallest unsigned type holding codes below ``size`` (None: codes' own type).

    A column with labels holds codes ``0 .. size - 1``; at 100M records
    its published copy takes 1 byte a record instead of the dataset's 4.
    The values are the same (consumers cast before any arithmetic that
    could overflow: :mod:`core.counting` works in int64).
    """
    codes = np.asarray(codes)
    out = np.empty(len(order), dtype=code_dtype(codes.dtype, size))
    for lo in range(0, len(order), GATHER_ROWS):
        hi = lo + GATHER_ROWS
        out[lo:hi] = codes[order[lo:hi]]
    return out


def chunks(data, plan: Plan, batch_rows: int | None = None, combos: Combos | None = None):
    """The :class:`Chunk` of every batch of ``data``, with keys and whole-table ranks for ``plan.rank_by``."""
    n = data.n
    batch = int(batch_rows or DEFAULT_BATCH)
    if batch < 1:
        raise ValueError("batch_rows must be at least 1")
    keys = rank_keys(plan.rank_by, data.m, lambda: Combos.of(data) if combos is None else combos)
    before = None
    for start in range(0, n, batch):
        stop = min(n, start + batch)
        qi = tuple(c[start:stop] for c in data.qi_codes)
        sa = data.sa_codes[start:stop]
        key = rank = None
        if keys is not None:
            key, n_keys = keys.key_of(plan.rank_by, qi, sa)
            if before is None:
                before = np.zeros(n_keys, dtype=np.int64)
            rank, counts = ranks(key, n_keys, before)
            before += counts
        yield Chunk(start=start, qi=qi, sa=sa, key=key, rank=rank)


#: threads applying a plan to batches at once (numpy releases the GIL in its loops); WORKBENCH_APPLY_THREADS
#: overrides, 1 applies in the calling thread only
APPLY_THREADS = int(os.environ.get("WORKBENCH_APPLY_THREADS", "0")) or min(2, os.cpu_count() or 1)


def _applied(plan: Plan, work):
    """``(chunk, plan.apply(chunk))`` for each chunk of ``work``, in order, up to :data:`APPLY_THREADS` at once.

    A plan's ``apply`` reads the plan and the chunk only (every draw is
    keyed by the record), so batches can be applied in any order and on
    any thread: the results are taken in batch order, the same release.
    The chunks themselves (ranks carried from batch to batch) are made in
    order on the calling thread, at most ``APPLY_THREADS`` ahead.
    """
    work = iter(work)
    first = next(work, None)
    if first is None:
        return
    second = next(work, None)
    if second is None or APPLY_THREADS < 2:
        yield first, plan.apply(first)
        if second is not None:
            yield second, plan.apply(second)
            for chunk in work:
                yield chunk, plan.apply(chunk)
        return
    with ThreadPoolExecutor(APPLY_THREADS, thread_name_prefix="apply") as pool:
        pending = deque([(first, pool.submit(plan.apply, first)), (second, pool.submit(plan.apply, second))])
        for chunk in work:
            while len(pending) >= APPLY_THREADS:
                done, future = pending.popleft()
                yield done, future.result()
            pending.append((chunk, pool.submit(plan.apply, chunk)))
        while pending:
            done, future = pending.popleft()
            yield done, future.result()


def run(data, plan: Plan, batch_rows: int | None = None, combos: Combos | None = None) -> Published:
    """Apply ``plan`` to every record of ``data`` in batches; the :class:`core.release.Published` in published order.

    Parameters
    ----------
    data : core.table.Dataset
        Anything with ``n``, ``m``, ``qi``, ``qi_codes``, ``qi_labels``,
        ``sa_codes`` and ``domains`` (codes of any integer dtype).
    plan : Plan
    batch_rows : int, optional
        Records per batch (default :data:`DEFAULT_BATCH`); the release is
        the same for every value.
    combos : Combos, optional
        The table's summary, when the caller has it.
    """
    n = data.n
    cols: dict[str, np.ndarray] = {}
    given: dict[str, np.dtype] = {}  # each output column's dtype as the plan returns it
    keep = None
    totals: dict[str, int] = {}
    expected = set(plan.labels)
    # a plan without a per-record table (an interactive mechanism's answers) publishes nothing per record
    work = chunks(data, plan, batch_rows, combos) if plan.table is not None else ()
    ordered = order = bounds = None
    if plan.table is not None and type(plan).in_order is not Plan.in_order and type(plan).tally is Plan.tally:
        # a plan that can give its columns in published order at once (it publishes every record)
        order, bounds = _order_and_bounds(plan.seed, n, None)
        ordered = plan.in_order(order)
        if ordered is not None:
            work = ()
    for chunk, out in _applied(plan, work):
        got = set(out) - {"_keep"}
        if got != expected:
            raise RuntimeError(f"the plan's apply returned columns {sorted(got)}, not {sorted(expected)}")
        lo, hi = chunk.start, chunk.stop
        for name, values in out.items():
            values = np.asarray(values)
            if name == "_keep":
                if keep is None:
                    keep = np.ones(n, dtype=bool)
                keep[lo:hi] = values
                continue
            if name not in cols:
                # a coded column is kept in the narrowest type of its labels (Mondrian: 7 range columns)
                cols[name] = np.empty(n, dtype=code_dtype(values.dtype, None if plan.labels.get(name) is None
                                                          else len(plan.labels[name])))
                given[name] = values.dtype
            elif given[name] != values.dtype:
                raise RuntimeError(f"the plan's column {name} changed dtype between batches")
            cols[name][lo:hi] = values
        totals = add_tallies(totals, plan.tally(chunk, out))
    tables: dict[str, CodedTable] = {}
    if plan.table is not None:
        if ordered is None:
            # the published order and, for a partitioned output, where each part starts (parts_bits of n)
            order, bounds = _order_and_bounds(plan.seed, n, keep)
        columns: dict[str, np.ndarray] = {}
        labels: dict[str, np.ndarray | None] = {}
        if plan.keep_qi:
            qi_columns = _qi_in_order(data, plan.seed, n, order, keep)
            for j, c in enumerate(data.qi):
                labels[c], columns[c] = data.qi_labels[j], qi_columns[j]
        for name, lab in plan.labels.items():
            if ordered is not None:  # in the type the batches would have given
                col = np.asarray(ordered[name])
                columns[name], labels[name] = col.astype(code_dtype(col.dtype, None if lab is None else len(lab)),
                                                         copy=False), lab
                continue
            # each output column is put in order and its input-order copy dropped before the next
            col = cols.pop(name, np.empty(0, dtype=np.int64))
            columns[name], labels[name] = (gather(col, order, None if lab is None else len(lab))
                                           if len(col) else col), lab
            del col
        tables[plan.table] = CodedTable(columns=columns, labels=labels)
    out = plan.published_result(tables, totals)
    return out if bounds is None else replace(out, parts=tuple(int(b) for b in bounds))


#: optional memo of the published order of all n records and its part bounds, ``memo(key, compute)``
#: (None: computed every time).  They depend on the seed and n only, not on the mechanism or its
#: parameters, so an app moving a slider reuses them (the app installs its byte-bounded cache here:
#: pages/ui/cached.py).
ORDER_MEMO = None


def _order_and_bounds(seed: int, n: int, keep: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The published order (positions of the kept records) and where each part starts in it.

    With every record kept, both are the same for every mechanism and
    setting with this seed; :data:`ORDER_MEMO`, when set, keeps them (on a
    large table drawing and sorting the order keys is about two thirds of
    UP's release).
    """
    def compute(kept=None):
        keys = _rng.order_keys(seed, 0, n)
        if kept is not None:
            keys = keys[kept]
        # the parts are cut by n's bit count (every engine's), also when records were dropped
        order, bounds = ordered_parts(keys, parts_bits(n))
        del keys
        return (order if kept is None else kept[order].astype(position_dtype(n), copy=False)), bounds

    if keep is not None:
        return compute(np.flatnonzero(keep))
    if ORDER_MEMO is not None:
        # the parts' bit count is in the key: bounds cut for another part size must never be reused
        return ORDER_MEMO(("published_order", int(seed), int(n), parts_bits(n)), compute)
    return compute()


#: optional memo of a dataset's QI columns in the published order, ``memo(data, key, compute)`` (None:
#: gathered every time).  With every record kept they depend on the table and the seed only, not on the
#: mechanism or its parameters (census 5M: 7 gathers of 5M codes, a quarter of SPLU's release); the app
#: installs its byte-bounded cache, scoped like the dataset (pages/ui/cached.py).
QI_MEMO = None


def _qi_in_order(data, seed: int, n: int, order: np.ndarray, keep: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """Each QI column of ``data`` put in the published ``order`` (:func:`gather`; :data:`QI_MEMO` when set)."""
    def compute():
        return tuple(gather(codes, order, len(labels)) for codes, labels in zip(data.qi_codes, data.qi_labels))

    if keep is not None or QI_MEMO is None:
        return compute()
    return QI_MEMO(data, ("published_qi", int(seed), int(n), parts_bits(n)), compute)


def record_order(seed: int, n: int, keep: np.ndarray | None = None) -> np.ndarray:
    """Positions of the published records in published order (``keep``: records left in the release)."""
    return _order_and_bounds(seed, n, keep)[0]


def publish(data, mechanism, values: Mapping[str, Any], seed: int, batch_rows: int | None = None) -> Published:
    """Plan from the table's summary, apply in batches, publish (the local engine's release).

    The summary is a :class:`core.engine.combos.LazyCombos`: the
    combinations are counted only if the plan or the ranks need them.
    """
    plan = mechanism.plan(LazyCombos(data), values, seed)
    return run(data, plan, batch_rows)


__all__ = ["DEFAULT_BATCH", "parts_bits", "position_dtype", "published_order", "ordered_parts", "part_bounds",
           "code_dtype", "gather", "chunks", "run", "record_order", "publish"]
