"""Vectorised count queries: the one primitive every estimator builds on.

A count query selects records by a predicate on some QI attributes (each an
equality or a set of allowed values) and asks how many of them carry each
value of a *target* column: the SA for perturbation estimators and true
answers, the group id for Anatomy-style estimators.  :class:`Records` holds
encoded columns and answers a whole :class:`QueryBatch` at once from a
per-attribute-subset contingency index (:class:`CountIndex`), never one
boolean mask per query.

Three things keep a workload over dozens of attribute subsets cheap:

* **Cells over shared QI combinations.**  A table (or a release) is
  counted on its distinct (QI..., target) cells with their counts
  (:func:`distinct_rows`: mixed-radix keys sorted batch by batch), not on
  its records; the cells' QI combinations are coded once per table
  (:class:`QIGroups`), and each attribute subset's rank of every
  combination is computed once per table, so an index is one ``bincount``
  over the cells.  A release that publishes the table's QI columns (in
  another order) is coded by the same groups as the workload's true
  answers (:func:`core.mechanisms.base.share_groups`).  Census 10M, SPLU,
  seed 000's 5,000 queries, profiled: the workload and the estimates took
  22 s in ``Records.index`` over the records, now 4 s together.

* **Superset projection.**  The index of a subset is built from the cells
  of the smallest cached index over a superset of its attributes when that
  has fewer cells than there are records (counts add up the same way), and
  :meth:`Records.prepare` builds the subsets of a workload largest first so
  each can be projected.
* **Weighted cells instead of expanded records.**  Estimators that spread a
  record over its group's published sensitive values (Anatomy, bucketization,
  PriView) count ``sum_g c(e, g) w(g, x)`` for every QI combination e.
  :meth:`Records.from_groups` computes these cells as one sparse product
  ``index(QIT by group) @ W`` instead of repeating every QIT record once per
  ST entry of its group (seed 002 appendix 10.10; seed 004 §8).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import sparse

#: contingency tables up to this many cells may be counted with one bincount
#: over the whole table; larger ones by hashing the occurring combinations
#: (either way only occurring cells are kept)
DENSE_CELLS = 10_000_000
#: ... and only when the table has at most this many cells per input row (or
#: DENSE_FLOOR cells): zeroing and scanning a table much larger than the
#: input costs more than hashing the input (measured: 500K rows into 5M
#: cells is about even)
DENSE_PER_ROW = 8
DENSE_FLOOR = 1 << 16
#: upper limit on queries x combinations evaluated at once for set predicates
_CHUNK_CELLS = 40_000_000


@dataclass(frozen=True, eq=False)
class QueryBatch:
    """Queries that constrain the same QI attributes.

    Parameters
    ----------
    attrs : tuple of int
        Indices of the constrained QI columns (into ``Dataset.qi``).
    values : ndarray (Q, d) of int, optional
        Equality predicates ``A_j = values[q, j]`` (codes).
    masks : tuple of ndarray (Q, D_j) of bool, optional
        Set predicates ``A_j IN {v : masks[j][q, v]}`` (ORs, ranges).
        Exactly one of ``values`` and ``masks`` is given.
    sa : ndarray (Q, m) of bool
        The SA values the query counts (one ``True`` for ``SA = v``).
    """

    attrs: tuple[int, ...]
    sa: np.ndarray
    values: np.ndarray | None = None
    masks: tuple[np.ndarray, ...] | None = None

    def __post_init__(self):
        if (self.values is None) == (self.masks is None):
            raise ValueError("give exactly one of values and masks")

    def __len__(self) -> int:
        return len(self.sa)

    @property
    def is_equality(self) -> bool:
        return self.values is not None

    def qi_masks(self, domains: Sequence[int]) -> tuple[np.ndarray, ...]:
        """Predicates as boolean masks over each attribute's domain."""
        if self.masks is not None:
            return self.masks
        q = len(self)
        out = []
        for j, a in enumerate(self.attrs):
            mask = np.zeros((q, domains[a]), dtype=bool)
            mask[np.arange(q), self.values[:, j]] = True
            out.append(mask)
        return tuple(out)

    def take(self, rows: np.ndarray) -> "QueryBatch":
        return QueryBatch(
            attrs=self.attrs,
            sa=self.sa[rows],
            values=None if self.values is None else self.values[rows],
            masks=None if self.masks is None else tuple(m[rows] for m in self.masks),
        )


class CountIndex:
    """Counts of records per (combination of values on ``attrs``, target code).

    Only combinations that occur are kept (sorted keys and the non-zero
    cells in compressed-row form), so an index costs memory in proportion
    to the data, not to the product of the domains.  A domain product that
    is small, absolutely and against the number of input rows, is counted
    with one ``bincount``; otherwise the occurring combinations are hashed
    (``pandas.factorize``, sorted so that equality predicates can be looked
    up by binary search) and counted in the compact table of those.

    Parameters
    ----------
    cols : sequence of ndarray (N,) of int
        The codes of each attribute of the index.
    domains : sequence of int
        Domain size of each attribute.
    target : ndarray (N,) of int
        Target code of each row (SA value, group id, ...).
    n_target : int
        Number of target codes.
    weights : ndarray (N,) of float, optional
        Weight of each row (default 1): weighted records, or the cells of a
        larger index being projected.
    """

    def __init__(self, cols: Sequence[np.ndarray], domains: Sequence[int], target: np.ndarray,
                 n_target: int, weights: np.ndarray | None = None):
        self.domains = tuple(int(d) for d in domains)
        self.n_target = m = int(n_target)
        n = len(target)
        cells = float(np.prod(self.domains, dtype=float)) if self.domains else 1.0
        self._coder = _KeyCoder(cols, self.domains, n)
        key, _ = self._coder.encode(cols, n)
        if self._coder.plain and cells * m <= DENSE_CELLS and cells * m <= max(DENSE_PER_ROW * n, DENSE_FLOOR):
            self._fill(key, int(cells), None, target, weights)  # the key is its own code: one bincount
        else:
            codes, keys = pd.factorize(key, sort=True)
            self._fill(codes, len(keys), np.asarray(keys, dtype=np.int64), target, weights)

    @classmethod
    def from_codes(cls, codes: np.ndarray, keys: np.ndarray, coder: "_KeyCoder", target: np.ndarray,
                   n_target: int, weights: np.ndarray | None = None) -> "CountIndex":
        """An index from rows already coded: ``codes[i]`` is row i's position in the sorted ``keys`` of ``coder``.

        What :meth:`Records.index` uses on rows of a :class:`QIGroups`: the
        subset's keys are computed once per table, so each index is one
        ``bincount`` of ``codes * n_target + target``.
        """
        self = cls.__new__(cls)
        self.domains = coder.domains
        self.n_target = int(n_target)
        self._coder = coder
        self._fill(codes, len(keys), np.asarray(keys, dtype=np.int64), target, weights)
        return self

    def _fill(self, codes: np.ndarray, n_codes: int, keys: np.ndarray | None, target: np.ndarray,
              weights: np.ndarray | None) -> None:
        """Count rows per (code, target) and keep the non-zero cells (``keys=None``: the codes are the keys)."""
        m = self.n_target
        n = len(codes)
        cell = np.asarray(codes, dtype=np.int64) * m + np.asarray(target, dtype=np.int64)
        table = n_codes * m
        if table <= max(DENSE_PER_ROW * n, DENSE_FLOOR):  # the table of codes: one bincount
            total = np.bincount(cell, weights=weights, minlength=table)
            nz = np.flatnonzero(total)
            data = total[nz].astype(float, copy=False)
        else:  # hash the occurring cells
            cell_codes, uniq = pd.factorize(cell, sort=True)
            data = np.bincount(cell_codes, weights=weights, minlength=len(uniq)).astype(float, copy=False)
            nz = np.asarray(uniq, dtype=np.int64)
            keep = data != 0
            if not keep.all():
                nz, data = nz[keep], data[keep]
        row, col = np.divmod(nz, m)
        new = np.ones(len(row), dtype=bool)
        new[1:] = row[1:] != row[:-1]  # rows are sorted: each combination's cells are contiguous
        first = np.flatnonzero(new)
        used = row[first]
        self.keys = used if keys is None else keys[used]
        self.indptr = np.append(first, len(row)).astype(np.int64)
        self.indices = col.astype(np.int64, copy=False)
        self.data = data

    @property
    def nnz(self) -> int:
        """Number of non-zero cells (what projecting from this index costs)."""
        return len(self.data)

    @cached_property
    def matrix(self) -> sparse.csr_matrix:
        """The cells as a sparse (combinations x targets) matrix."""
        return sparse.csr_matrix((self.data, self.indices, self.indptr), shape=(len(self.keys), self.n_target))

    @cached_property
    def values(self) -> np.ndarray:
        """Per-attribute codes of each occurring combination: (E, d)."""
        return self._coder.decode(self.keys)

    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every non-zero cell: (values (E, d), target code (E,), count (E,))."""
        rows = np.repeat(np.arange(len(self.keys)), np.diff(self.indptr))
        return self.values[rows], self.indices, self.data

    def lookup(self, values: np.ndarray) -> np.ndarray:
        """Counts for equality predicates: (Q, n_target) dense.

        Rows repeated one after another are looked up once: the risk's
        attacks ask each sampled micro group's values once per SA value
        (:func:`core.risk.group_batches`, m rows in a row), so on census with
        50 values the keys were encoded and searched 50 times each.  The same
        counts either way (each row's are its own).
        """
        q = len(values)
        if q > 1 and values.shape[1]:
            new = np.ones(q, dtype=bool)
            new[1:] = (values[1:] != values[:-1]).any(axis=1)
            starts = np.flatnonzero(new)
            if 2 * len(starts) <= q:
                return np.repeat(self._lookup_rows(values[starts]), np.diff(np.append(starts, q)), axis=0)
        return self._lookup_rows(values)

    def _lookup_rows(self, values: np.ndarray) -> np.ndarray:
        key, known = self._coder.encode([values[:, j] for j in range(values.shape[1])], len(values))
        out = np.zeros((len(values), self.n_target))
        if len(self.keys) == 0:
            return out
        pos = np.minimum(np.searchsorted(self.keys, key), len(self.keys) - 1)
        found = np.flatnonzero((self.keys[pos] == key) & known)
        if len(found):
            rows = pos[found]
            start = self.indptr[rows]
            size = self.indptr[rows + 1] - start
            total = int(size.sum())
            if total:
                at = np.repeat(start - (np.cumsum(size) - size), size) + np.arange(total)
                out[np.repeat(found, size), self.indices[at]] = self.data[at]
        return out

    def match(self, masks: Sequence[np.ndarray]) -> np.ndarray:
        """Counts for set predicates (ORs of values): (Q, n_target) dense."""
        values = self.values
        q = len(masks[0]) if masks else 0
        out = np.zeros((q, self.n_target))
        e = len(values)
        if e == 0 or q == 0:
            return out
        step = max(1, _CHUNK_CELLS // e)
        for start in range(0, q, step):
            stop = min(q, start + step)
            hit = np.ones((stop - start, e), dtype=bool)
            for j, mask in enumerate(masks):
                hit &= mask[start:stop][:, values[:, j]]
            out[start:stop] = (self.matrix.T @ hit.T.astype(float)).T
        return out


class _KeyCoder:
    """One int64 key per combination of attribute values.

    Normally the mixed-radix index (``np.ravel_multi_index``).  When the
    product of the domains would overflow 64 bits (many high-cardinality
    columns), keys are built column by column as ranks among the
    combinations seen in the data, and the same steps map a query's values
    (unseen combinations are flagged, they count zero).
    """

    LIMIT = 2**62

    def __init__(self, cols: Sequence[np.ndarray], domains: Sequence[int], n: int):
        self.domains = tuple(domains)
        self.plain = float(np.prod(self.domains, dtype=float)) < self.LIMIT if self.domains else True
        self.steps: list[np.ndarray] = []
        if not self.plain:
            key = np.asarray(cols[0], dtype=np.int64)
            for col, size in zip(cols[1:], self.domains[1:]):
                combined = key * size + np.asarray(col, dtype=np.int64)
                uniq, key = np.unique(combined, return_inverse=True)
                key = key.ravel()
                self.steps.append(uniq)

    def encode(self, cols: Sequence[np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
        """(keys, known): ``known`` is False for combinations the data never had (compressed keys only)."""
        if not self.domains:
            return np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool)
        if self.plain:
            return (np.ravel_multi_index(tuple(np.asarray(c, dtype=np.int64) for c in cols), self.domains),
                    np.ones(n, dtype=bool))
        key = np.asarray(cols[0], dtype=np.int64)
        known = np.ones(n, dtype=bool)
        for col, size, uniq in zip(cols[1:], self.domains[1:], self.steps):
            combined = key * size + np.asarray(col, dtype=np.int64)
            pos = np.minimum(np.searchsorted(uniq, combined), len(uniq) - 1)
            ok = uniq[pos] == combined
            known &= ok
            key = np.where(ok, pos, 0)
        return key, known

    def decode(self, keys: np.ndarray) -> np.ndarray:
        """Per-attribute codes of each key: (E, d)."""
        if not self.domains:
            return np.zeros((len(keys), 0), dtype=np.int64)
        if self.plain:
            return np.stack(np.unravel_index(keys, self.domains), axis=1)
        out = np.empty((len(keys), len(self.domains)), dtype=np.int64)
        key = np.asarray(keys, dtype=np.int64)
        for j in range(len(self.domains) - 1, 0, -1):
            combined = self.steps[j - 1][key]
            out[:, j] = combined % self.domains[j]
            key = combined // self.domains[j]
        out[:, 0] = key
        return out


#: rows coded or counted at once when locating or aggregating a large table (bounds the int64 temporaries)
BATCH_ROWS = 1 << 22


class QIGroups:
    """The distinct QI combinations of a table: one coding of QI tuples shared by everything counted on it.

    A table's records, and every release that publishes the same QI
    columns (in any order), can be counted as cells over these groups:
    each row is mapped once to its group (:meth:`locate`), the rows are
    aggregated to (group, target) cells (:meth:`Records.on_groups`), and
    the index of an attribute subset is one ``bincount`` of the subset's
    rank of each cell's group (:meth:`subset`, computed once per table and
    subset on the G groups, not on the N records).  The answers are those
    of the rows themselves: the groups are only a dictionary of the code
    tuples that occur.

    Parameters
    ----------
    columns : sequence of ndarray (G,) of int
        Codes of each QI attribute, one entry per distinct combination.
    domains : sequence of int
        Domain size of every QI attribute.
    n_groups : int, optional
        Number of groups (needed only when there are no QI attributes:
        then every row is the one empty combination).
    """

    def __init__(self, columns: Sequence[np.ndarray], domains: Sequence[int], n_groups: int | None = None):
        self.columns = tuple(np.asarray(c, dtype=np.int64) for c in columns)
        self.domains = tuple(int(d) for d in domains)
        if len(self.columns) != len(self.domains):
            raise ValueError("one column per domain")
        self.n = int(n_groups if n_groups is not None else (len(self.columns[0]) if self.columns else 1))
        self._subsets: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, _KeyCoder]] = {}

    def __len__(self) -> int:
        return self.n

    @classmethod
    def of_rows(cls, cols: Sequence[np.ndarray], domains: Sequence[int]) -> tuple["QIGroups", np.ndarray]:
        """The groups of some rows' QI codes, and each row's group: ``(groups, group (N,))``."""
        n = len(cols[0]) if len(cols) else 0
        if not len(cols):
            return cls((), (), 1 if n else 0), np.zeros(n, dtype=np.int64)
        coder = _KeyCoder(cols, domains, n)
        key, _ = coder.encode(cols, n)
        group, keys = pd.factorize(key, sort=True)
        values = coder.decode(np.asarray(keys, dtype=np.int64))
        return cls(list(values.T), domains, len(keys)), group

    def subset(self, attrs: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, "_KeyCoder"]:
        """``(rank (G,), keys (U,), coder)``: each group's position among the sorted keys of its values on ``attrs``.

        Computed once per subset and kept (threads asking at the same time
        may both compute it; the results are equal).
        """
        attrs = tuple(attrs)
        got = self._subsets.get(attrs)
        if got is None:
            cols = [self.columns[a] for a in attrs]
            coder = _KeyCoder(cols, [self.domains[a] for a in attrs], self.n)
            key, _ = coder.encode(cols, self.n)
            rank, keys = pd.factorize(key, sort=True)
            got = (rank.astype(np.int32 if len(keys) < 2**31 else np.int64), np.asarray(keys, dtype=np.int64), coder)
            self._subsets[attrs] = got
        return got

    @cached_property
    def _lookup(self) -> tuple["_KeyCoder", pd.Index]:
        coder = _KeyCoder(self.columns, self.domains, self.n)
        return coder, pd.Index(coder.encode(self.columns, self.n)[0])

    def locate(self, cols: Sequence[np.ndarray]) -> np.ndarray | None:
        """The group of each row of ``cols`` (codes over the same domains), or None if a row's combination is not one.

        Rows are coded in batches of :data:`BATCH_ROWS`, so locating a large
        table needs no int64 copy of it (the result is int32).
        """
        n = len(cols[0]) if len(cols) else 0
        out = np.empty(n, dtype=np.int32 if self.n < 2**31 else np.int64)
        if not len(cols):
            if n and self.n != 1:
                return None
            out[:] = 0
            return out
        coder, index = self._lookup
        for start in range(0, n, BATCH_ROWS):
            part = [np.asarray(c[start:start + BATCH_ROWS]) for c in cols]
            if any(len(p) and (p.min() < 0 or p.max() >= d) for p, d in zip(part, self.domains)):
                return None
            key, known = coder.encode(part, len(part[0]))
            pos = index.get_indexer(key)
            if not known.all() or (pos < 0).any():
                return None
            out[start:start + len(pos)] = pos
        return out


def distinct_rows(cols: Sequence[np.ndarray], domains: Sequence[int], weights: np.ndarray | None = None
                  ) -> tuple[list[np.ndarray], np.ndarray]:
    """Distinct rows of ``cols`` in lexicographic order, with how many rows hold each (or their weight).

    While the product of the domains fits 64 bits, each row's key is its
    mixed-radix number, computed in place in batches of :data:`BATCH_ROWS`
    rows (one reused int64 buffer, no int64 copy of the table).  Without
    weights each batch is sorted (numpy's sort of int64 keys is several
    times faster than hashing them) and its runs counted; with weights each
    batch's keys are hashed and the weights summed per key.  The batches'
    distinct keys are then merged and sorted.  Wider domains fall back to a
    pandas group-by.

    Parameters
    ----------
    cols : sequence of ndarray (N,) of int
        Codes of each column (any integer dtype), at least one column.
    domains : sequence of int
        Domain size of each column.
    weights : ndarray (N,) of float, optional

    Returns
    -------
    list of ndarray (C,) of int64, ndarray (C,)
        The distinct rows (one array per column) and their counts (int64)
        or summed weights (float).
    """
    domains = tuple(max(int(d), 1) for d in domains)
    n = len(cols[0])
    if float(np.prod(domains, dtype=float)) >= _KeyCoder.LIMIT:
        frame = pd.DataFrame({f"c{j}": np.asarray(c, dtype=np.int64) for j, c in enumerate(cols)})
        frame["w"] = np.ones(n, dtype=np.int64) if weights is None else np.asarray(weights)
        grouped = frame.groupby([f"c{j}" for j in range(len(cols))], sort=True)["w"].sum()
        return ([grouped.index.get_level_values(j).to_numpy(np.int64) for j in range(len(cols))],
                grouped.to_numpy(np.int64 if weights is None else float))
    buf = np.empty(min(n, BATCH_ROWS), dtype=np.int64)
    keys, totals = [], []
    for start in range(0, n, BATCH_ROWS):
        stop = min(n, start + BATCH_ROWS)
        key = buf[: stop - start]
        key[:] = cols[0][start:stop]
        for col, dom in zip(cols[1:], domains[1:]):
            key *= dom
            key += col[start:stop]
        if weights is None:
            key.sort()
            new = np.ones(len(key), dtype=bool)
            new[1:] = key[1:] != key[:-1]
            first = np.flatnonzero(new)
            keys.append(key[first])
            totals.append(np.diff(np.append(first, len(key))))
        else:
            codes, uniq = pd.factorize(key)
            keys.append(np.asarray(uniq, dtype=np.int64))
            totals.append(np.bincount(codes, weights=weights[start:stop], minlength=len(uniq)))
    if not keys:
        return [np.zeros(0, dtype=np.int64) for _ in cols], np.zeros(0, dtype=np.int64 if weights is None else float)
    key, total = np.concatenate(keys), np.concatenate(totals)
    if len(keys) > 1 or weights is not None:
        if len(keys) > 1:
            codes, uniq = pd.factorize(key)
            key = np.asarray(uniq, dtype=np.int64)
            total = np.bincount(codes, weights=total, minlength=len(uniq))
            if weights is None:
                total = np.rint(total).astype(np.int64)
        order = np.argsort(key)
        key, total = key[order], total[order]
    out = []
    for dom in reversed(domains):
        key, digit = np.divmod(key, dom)
        out.append(digit)
    return out[::-1], total


class Records:
    """Encoded records (QI codes and one target column) answering query batches.

    Indexes are built lazily per attribute subset and kept, so a workload of
    thousands of queries over a few dozen subsets costs a few dozen
    ``bincount`` calls.  A subset's index is projected from the smallest
    cached index over a superset of its attributes when that has fewer cells
    than there are records; :meth:`prepare` orders the work so that it can.

    Parameters
    ----------
    qi_codes : sequence of ndarray (N,) of int
        Codes of every QI attribute.
    domains : sequence of int
        Domain size of every QI attribute.
    target : ndarray (N,) of int
        Target code of each record.
    n_target : int
        Number of target codes.
    weights : ndarray (N,) of float, optional
        Weight of each record (default 1).  Weighted cells (one row per
        occurring combination, weight = its count) are records too.
    """

    #: a subset that this many queries ask gets its own index even when its domain product is large
    OWN_INDEX_QUERIES = 30
    #: domain product x targets up to which a subset's own index is always worth building
    SMALL_INDEX = 4_000_000

    def __init__(self, qi_codes: Sequence[np.ndarray], domains: Sequence[int], target: np.ndarray,
                 n_target: int, weights: np.ndarray | None = None):
        self._qi = tuple(qi_codes)
        self.domains = tuple(int(d) for d in domains)
        self.target = np.asarray(target)
        self.n_target = int(n_target)
        self.weights = weights
        #: the QI combinations the rows are coded by (:meth:`on_groups`), and each row's
        self.groups: QIGroups | None = None
        self.group: np.ndarray | None = None
        self._indexes: dict[tuple[int, ...], CountIndex] = {}
        self._on_superset: set[tuple[int, ...]] = set()

    @property
    def qi_codes(self) -> tuple[np.ndarray, ...]:
        """Codes of every QI attribute, one entry per row (decoded from the groups for :meth:`on_groups`)."""
        if self._qi is None:
            self._qi = tuple(col[self.group] for col in self.groups.columns)
        return self._qi

    @classmethod
    def on_groups(cls, groups: QIGroups, group: np.ndarray, target: np.ndarray, n_target: int,
                  weights: np.ndarray | None = None, aggregate: bool = True) -> "Records":
        """Rows coded by ``groups`` (row i holds combination ``group[i]``), counted as (group, target) cells.

        Every index is then one ``bincount`` over the cells of the subset's
        rank of their group (:meth:`QIGroups.subset`), and gives the
        answers the rows give (sums of the same weights; for fractional
        weights up to float rounding).

        Parameters
        ----------
        groups : QIGroups
        group : ndarray (N,) of int
            Group of each row (:meth:`QIGroups.locate`).
        target : ndarray (N,) of int
        n_target : int
        weights : ndarray (N,) of float, optional
        aggregate : bool
            False when the rows are distinct cells already (a
            :class:`core.engine.combos.Combos`).
        """
        if aggregate:
            (group, target), weights = distinct_rows([group, target], [len(groups), n_target], weights)
            weights = weights.astype(float)
        out = cls((), groups.domains, target, n_target, weights)
        out._qi = None
        out.groups, out.group = groups, np.asarray(group)
        return out

    @classmethod
    def on_rows(cls, qi_codes: Sequence[np.ndarray], domains: Sequence[int], target: np.ndarray, n_target: int,
                weights: np.ndarray | None = None, groups: QIGroups | None = None) -> "Records":
        """Rows aggregated to their distinct (QI..., target) cells (:func:`distinct_rows`), coded by QI groups.

        The cells' QI combinations are looked up in ``groups`` (a table's
        :class:`QIGroups`, shared with its workload) when every one is
        there; otherwise they are the cells' own distinct combinations.
        Either way the answers are the rows' (integer counts exactly;
        fractional weights summed in another order, so up to rounding).
        """
        domains = tuple(int(d) for d in domains)
        if not len(qi_codes):
            return cls(qi_codes, domains, target, n_target, weights)
        cols, total = distinct_rows([*qi_codes, target], [*domains, n_target], weights)
        qi, target = cols[:-1], cols[-1]
        group = groups.locate(qi) if groups is not None and groups.domains == domains else None
        if group is None:  # the cells' own QI combinations: the cells are sorted by them
            new = np.ones(len(target), dtype=bool)
            new[1:] = np.any([c[1:] != c[:-1] for c in qi], axis=0) if len(target) > 1 else new[1:]
            start = np.flatnonzero(new)
            groups = QIGroups([c[start] for c in qi], domains, len(start))
            group = np.cumsum(new) - 1
        return cls.on_groups(groups, group, target, n_target, total.astype(float), aggregate=False)

    def fresh(self) -> "Records":
        """The same rows with an empty index cache (a workload whose indexes should not stay with these rows)."""
        out = copy.copy(self)
        out._indexes, out._on_superset = {}, set()
        return out

    def __len__(self) -> int:
        return len(self.target)

    @classmethod
    def from_groups(cls, qi_codes: Sequence[np.ndarray], domains: Sequence[int], record_group: np.ndarray,
                    st_group: np.ndarray, st_target: np.ndarray, st_count: np.ndarray,
                    n_target: int, record_weights: np.ndarray | None = None,
                    groups: QIGroups | None = None) -> "Records":
        """Weighted cells of a group-based release: a QI table with a group id per row, and an ST.

        Anatomy-style estimators read a QIT record of group g as every value
        x that g's ST lists, with weight ``c(g, x) / |g|``, so a query with QI
        condition C estimates ``sum_g c(g, C) c(g, x) / |g|`` (seed 002
        appendix 10.10; seed 004 §8.2 for PriView's two-table form, where
        x is the pair (A_j, SA)).  Summed per QI combination e these weights
        are the cells ``sum_g c(e, g) c(g, x) / |g|``: one index of the QIT
        by group (``c(e, g)``, a sparse E x G matrix) times the ST's sparse
        ``W[g, x] = c(g, x) / |g|``, with ``|g|`` the group's ST total.  The
        result answers every query exactly as the QIT expanded by its ST
        would (:func:`core.mechanisms.base.bucket_records`, the tests' twin),
        without materialising one row per (record, ST entry): on census
        500K the PriView expansion has 5M rows, the cells 1.5M.

        Parameters
        ----------
        qi_codes : sequence of ndarray (N,) of int
            QIT columns.
        domains : sequence of int
            Their domain sizes.
        record_group : ndarray (N,) of int
            Group id of each QIT row.
        st_group, st_target, st_count : ndarray (S,)
            ST rows: group id, target code (the SA value, or any code the
            caller combines, e.g. ``a * m + s``), count.
        n_target : int
            Number of target codes.
        record_weights : ndarray (N,), optional
            How many QIT records each row stands for (default 1): a QIT
            known by its distinct rows and their counts (the Dask engine's)
            gives the cells its records give.
        groups : QIGroups, optional
            The QI combinations of the table the release was made from
            (:func:`core.mechanisms.base.share_groups`): when every cell's
            combination is one of them, the cells are coded by them, so each
            attribute subset's ranks are the table's (computed once for every
            release of it) instead of the cells' own.  The same answers.

        Returns
        -------
        Records
            One weighted row per non-zero cell (QI combination, target).
        """
        record_group = np.asarray(record_group, dtype=np.int64)
        st_group = np.asarray(st_group, dtype=np.int64)
        count = np.asarray(st_count, dtype=float)
        g = int(max(np.max(record_group, initial=-1), np.max(st_group, initial=-1)) + 1)
        size = np.bincount(st_group, weights=count, minlength=g)
        w = sparse.csr_matrix((count / size[st_group], (st_group, np.asarray(st_target, dtype=np.int64))),
                              shape=(g, int(n_target)))
        weights = None if record_weights is None else np.asarray(record_weights, dtype=float)
        by_group = CountIndex(list(qi_codes), domains, record_group, g, weights)
        cells = (by_group.matrix @ w).tocoo()
        if not len(domains):
            return cls([], domains, cells.col.astype(np.int64), n_target, weights=cells.data)
        row = cells.row.astype(np.int64)
        located = (groups.locate(list(by_group.values.T))
                   if groups is not None and groups.domains == tuple(int(d) for d in domains) else None)
        if located is not None:  # the table's combinations: their subset ranks are shared with its other releases
            return cls.on_groups(groups, located[row], cells.col.astype(np.int64), n_target, weights=cells.data,
                                 aggregate=False)
        # the cells' QI combinations are the index's rows: coded by them, each subset's index is one bincount
        own = QIGroups(list(by_group.values.T), domains, len(by_group.keys))
        return cls.on_groups(own, row, cells.col.astype(np.int64), n_target, weights=cells.data, aggregate=False)

    def index(self, attrs: tuple[int, ...]) -> CountIndex:
        """The index of ``attrs`` (built once, then cached).

        Counts over ``attrs`` are sums of the cells of any index over a
        superset of them, so a new index is built from the smallest cached
        superset's non-zero cells when there are fewer of those than records
        (the same sums, up to float rounding for fractional weights), and
        from the records otherwise.

        Parameters
        ----------
        attrs : tuple of int
            QI attribute positions.

        Returns
        -------
        CountIndex
        """
        attrs = tuple(attrs)
        idx = self._indexes.get(attrs)
        if idx is None and self.groups is not None:
            rank, keys, coder = self.groups.subset(attrs)
            idx = CountIndex.from_codes(rank[self.group], keys, coder, self.target, self.n_target, self.weights)
            self._indexes[attrs] = idx
        elif idx is None:
            sup = self._smallest_superset(attrs)
            if sup is not None and sup[1].nnz < len(self):
                have, big = sup
                values, target, weights = big.entries()
                cols = [values[:, have.index(a)] for a in attrs]
            else:
                cols, target, weights = [self.qi_codes[a] for a in attrs], self.target, self.weights
            idx = CountIndex(cols, [self.domains[a] for a in attrs], target, self.n_target, weights)
            self._indexes[attrs] = idx
        return idx

    def _smallest_superset(self, attrs: tuple[int, ...]) -> tuple[tuple[int, ...], CountIndex] | None:
        """The cached index with fewest cells whose attributes include ``attrs`` (None if there is none)."""
        want = set(attrs)
        best = None
        for sup, cand in self._indexes.items():
            if want <= set(sup) and (best is None or cand.nnz < best[1].nnz):
                best = (sup, cand)
        return best

    def prepare(self, batches: Sequence[QueryBatch]) -> None:
        """Get ready for ``batches``: build the indexes that pay, larger subsets first.

        Larger subsets first, so that each smaller one is projected from the
        smallest index over a superset (fewer cells than records).  A subset
        gets its own index when any batch asks it by equality (looking values
        up needs one, and projecting costs about what a scan of the superset
        would), when its domain product is small (one ``bincount``), or when
        many queries ask it; the few set-predicate queries of a large subset
        are matched on the smallest superset index instead, its extra
        attributes unconstrained, which costs less than projecting.  Calling
        it is optional: :meth:`counts` gives the same answers without it.

        Parameters
        ----------
        batches : sequence of QueryBatch
            The workload about to be counted.
        """
        asked: dict[tuple[int, ...], int] = {}
        equality: set[tuple[int, ...]] = set()
        for b in batches:
            attrs = tuple(b.attrs)
            asked[attrs] = asked.get(attrs, 0) + len(b)
            if b.is_equality:
                equality.add(attrs)
        for attrs in sorted(asked, key=lambda a: (-len(a), a)):
            if attrs in self._indexes:
                continue
            table = float(np.prod([self.domains[a] for a in attrs], dtype=float)) * self.n_target
            if attrs in equality or table <= self.SMALL_INDEX or asked[attrs] >= self.OWN_INDEX_QUERIES:
                self.index(attrs)
            else:
                self._on_superset.add(attrs)

    def counts(self, batch: QueryBatch) -> np.ndarray:
        """Matching (weighted) records per target code, for every query of ``batch``.

        Parameters
        ----------
        batch : QueryBatch
            Equality or set predicates on one attribute subset.

        Returns
        -------
        ndarray (Q, n_target)
        """
        attrs = tuple(batch.attrs)
        if attrs in self._on_superset and attrs not in self._indexes and not batch.is_equality:
            sup = self._smallest_superset(attrs)
            have, idx = sup if sup is not None else (tuple(range(len(self.domains))), None)
            if idx is None:
                idx = self.index(have)
            given = dict(zip(attrs, batch.masks))
            return idx.match([given.get(a, np.ones((len(batch), self.domains[a]), dtype=bool)) for a in have])
        idx = self.index(attrs)
        if batch.is_equality:
            return idx.lookup(batch.values)
        return idx.match(batch.masks)

    @cached_property
    def target_totals(self) -> np.ndarray:
        return np.bincount(self.target, weights=self.weights, minlength=self.n_target).astype(float)

    @property
    def total(self) -> float:
        """Records counted: the rows, or the sum of the weights of weighted cells (``len`` is the rows)."""
        return float(len(self.target)) if self.weights is None else float(np.sum(self.weights))


def select(counts: np.ndarray, sa_mask: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Sum each row of ``counts`` over the selected SA values: (Q,).

    ``rows``: query q reads row ``rows[q]`` of ``counts`` (an estimator's
    distinct value rows), as ``counts[rows]`` would, without building it.
    Where every query selects one SA value (the risk's attacks: one query per
    micro group and value) and the counts are finite, the sum is that value
    read off, plus 0.0 as the sum's own zero start gives it (-0.0 becomes 0.0):
    the same numbers bit for bit (tested), without the (Q, m) mask in floats
    (on census:100,000, 91,400 x 50 a release).
    """
    sa = np.asarray(sa_mask)
    q = np.arange(len(sa)) if rows is None else np.asarray(rows, dtype=np.int64)
    if sa.dtype == bool and sa.ndim == 2 and len(sa) and sa.shape[1] \
            and (np.count_nonzero(sa, axis=1) == 1).all() and np.isfinite(counts).all():
        return counts[q, np.argmax(sa, axis=1)] + 0.0
    return np.einsum("qm,qm->q", counts if rows is None else counts[q], sa.astype(float))


def unique_rows(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, axis=0, return_inverse=True)`` for a 2-D array of non-negative integer codes.

    The same rows in the same (lexicographic) order and the same inverse
    (1-D), found by sorting one int64 key per row (its mixed-radix number
    over the columns' ranges) instead of the rows as records: 5-10x faster
    on the risk map's 20,000 target rows.  Falls back to ``np.unique``
    when the key would overflow or a code is negative.
    """
    values = np.asarray(values)
    if values.ndim != 2 or not len(values) or not values.shape[1] or values.min() < 0:
        rows, inv = np.unique(values, axis=0, return_inverse=True)
        return rows, inv.ravel()
    dims = tuple(int(x) + 1 for x in values.max(axis=0))
    if float(np.prod(dims, dtype=float)) >= 2**62:
        rows, inv = np.unique(values, axis=0, return_inverse=True)
        return rows, inv.ravel()
    key = np.ravel_multi_index(tuple(values.T.astype(np.int64)), dims)
    keys, inv = np.unique(key, return_inverse=True)
    rows = np.stack(np.unravel_index(keys, dims), axis=1).astype(values.dtype, copy=False)
    return rows, inv.ravel()
