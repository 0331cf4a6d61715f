"""Compact counts of a bound table: its distinct (QI..., SA) combinations with their counts.

:class:`Combos` is the summary every plan is built from
(:mod:`core.engine.protocol`): SA counts, micro-group (QI combination)
counts and sizes, value counts per group, medians ... are all functions of
it.  It is built locally from a :class:`core.table.Dataset`
(:meth:`Combos.of`) or per partition and merged (:meth:`Combos.merge`, the
Dask engine), and its weighted :meth:`Combos.records` answer any count
query (QI predicate x SA set) exactly as the table would.

Rows are sorted lexicographically by (QI codes..., SA code), so the rows of
one QI combination are contiguous and QI combinations are numbered in the
same lexicographic order (:meth:`Combos.qi_groups`), which is the order of
:func:`core.mechanisms.reconstruction.group_ids` on the table.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Sequence

import numpy as np

from ..counting import QIGroups, Records, distinct_rows

#: mixed-radix keys are used while the product of the domains stays below this
_KEY_LIMIT = 2 ** 62
#: results of one kind kept per combinations by :meth:`Combos.remember`
DERIVED_KEEP = 4


def _fits(domains: Sequence[int]) -> bool:
    span = 1
    for d in domains:
        span *= max(int(d), 1)
        if span >= _KEY_LIMIT:
            return False
    return True


def _mixed_key(cols: Sequence[np.ndarray], domains: Sequence[int]) -> np.ndarray:
    """``((c0 * d1 + c1) * d2 + c2) ...`` as int64: increasing in the lexicographic order of the codes.

    Each column (a Dataset's narrow codes) is added in place, cast to int64 by the ufunc's buffer, never
    copied whole to int64 (8 bytes a record).
    """
    n = len(cols[0]) if cols else 0
    key = np.zeros(n, dtype=np.int64)
    for col, dom in zip(cols, domains):
        key *= max(int(dom), 1)
        col = np.asarray(col)
        np.add(key, col if col.dtype.kind in "iu" else col.astype(np.int64), out=key, casting="unsafe")
    return key


def _unmix(key: np.ndarray, domains: Sequence[int]) -> list[np.ndarray]:
    out = []
    for dom in reversed(domains):
        dom = max(int(dom), 1)
        out.append(key % dom)
        key = key // dom
    return out[::-1]


def _aggregate(cols: Sequence[np.ndarray], domains: Sequence[int], weights: np.ndarray | None
               ) -> tuple[list[np.ndarray], np.ndarray]:
    """Distinct rows of ``cols`` in lexicographic order, with their (weighted) counts as int64.

    Integer weights (counts of rows that are mostly sorted runs: merging
    partitions' combinations) are merged by a stable sort of the keys;
    a small domain product is counted with one bincount; otherwise
    :func:`core.counting.distinct_rows` (mixed-radix keys sorted batch by
    batch, a group-by when they would not fit 64 bits).
    """
    n = len(cols[0])
    if _fits(domains) and weights is not None and np.asarray(weights).dtype.kind in "iu":
        # integer counts of rows that are sorted runs already (Combos.merge of partitions' combinations): a
        # stable sort (timsort) of their keys merges the runs, counts added as integers, no hashing
        key = _mixed_key(cols, domains)
        order = np.argsort(key, kind="stable")
        key = key[order]
        new = np.ones(n, dtype=bool)
        new[1:] = key[1:] != key[:-1]
        first = np.flatnonzero(new)
        if not n:
            return [np.zeros(0, dtype=np.int64) for _ in cols], np.zeros(0, dtype=np.int64)
        return _unmix(key[first], domains), np.add.reduceat(np.asarray(weights)[order], first).astype(np.int64)
    if _fits(domains) and weights is None:
        span = int(np.prod([max(int(d), 1) for d in domains], dtype=object))
        if span <= max(4 * n, 1 << 16):
            flat = np.bincount(_mixed_key(cols, domains), minlength=span)
            uniq = np.flatnonzero(flat).astype(np.int64)
            return _unmix(uniq, domains), flat[uniq].astype(np.int64)
    out, count = distinct_rows(cols, domains, None if weights is None else np.asarray(weights, dtype=np.float64))
    return out, (np.rint(count).astype(np.int64) if count.dtype.kind == "f" else count.astype(np.int64))


@dataclass(frozen=True, eq=False)
class Combos:
    """The distinct (QI..., SA) combinations of a bound table and how many records hold each.

    Attributes
    ----------
    qi : tuple of ndarray (C,) of int64
        QI codes of each combination, one array per QI column.
    sa : ndarray (C,) of int64
        SA code of each combination.
    count : ndarray (C,) of int64
        Records holding it (all > 0).
    domains : tuple of int
        QI domain sizes (labels per QI column).
    m : int
        SA domain size.
    sa_name, qi_names : str, tuple of str, optional
        Column names of the bound table (set by :meth:`of`).
    sa_labels, qi_labels : ndarray, tuple of ndarray, optional
        The labels the codes index (set by :meth:`of`; plans publish them,
        e.g. UP's domain).
    """

    qi: tuple[np.ndarray, ...]
    sa: np.ndarray
    count: np.ndarray
    domains: tuple[int, ...]
    m: int
    sa_name: str | None = None
    qi_names: tuple[str, ...] = ()
    sa_labels: np.ndarray | None = None
    qi_labels: tuple[np.ndarray, ...] = ()
    #: which QI columns are numeric (their labels sorted as numbers; Mondrian publishes ranges of them)
    qi_numeric: tuple[bool, ...] = ()

    # ---------------------------------------------------------- building
    @classmethod
    def of(cls, data) -> "Combos":
        """The combinations of a :class:`core.table.Dataset` (memoised per dataset object).

        Codes of any integer dtype are accepted; the table is read once.
        """
        cached = _CACHE.get(data)
        if cached is not None:
            return cached
        out = cls.from_codes(data.qi_codes, data.sa_codes, data.domains, data.m).named(
            data.sa, data.qi, data.sa_labels, data.qi_labels, getattr(data, "qi_numeric", ()))
        try:
            _CACHE[data] = out
        except TypeError:  # an object that cannot be weakly referenced: not memoised
            pass
        return out

    @classmethod
    def from_codes(cls, qi_codes: Sequence[np.ndarray], sa_codes: np.ndarray, domains: Sequence[int], m: int,
                   weights: np.ndarray | None = None) -> "Combos":
        """The combinations of code columns (one partition's, or a whole table's)."""
        domains = tuple(int(d) for d in domains)
        cols, count = _aggregate([*qi_codes, sa_codes], (*domains, int(m)), weights)
        return cls(qi=tuple(cols[:-1]), sa=cols[-1], count=count, domains=domains, m=int(m))

    def named(self, sa_name: str, qi_names, sa_labels, qi_labels, qi_numeric=()) -> "Combos":
        """The same counts with the bound table's column names, labels and numeric flags."""
        return replace(self, sa_name=sa_name, qi_names=tuple(qi_names), sa_labels=sa_labels,
                       qi_labels=tuple(qi_labels), qi_numeric=tuple(bool(x) for x in qi_numeric))

    @classmethod
    def merge(cls, parts: Sequence["Combos"]) -> "Combos":
        """The combinations of a table from those of its parts (counts of equal combinations added)."""
        parts = list(parts)
        if not parts:
            raise ValueError("merge needs at least one part")
        first = parts[0]
        if len(parts) == 1:
            return first
        for p in parts[1:]:
            if p.domains != first.domains or p.m != first.m:
                raise ValueError("parts to merge must share their domains")
        qi = [np.concatenate([p.qi[j] for p in parts]) for j in range(len(first.domains))]
        sa = np.concatenate([p.sa for p in parts])
        count = np.concatenate([p.count for p in parts])
        out = cls.from_codes(qi, sa, first.domains, first.m, weights=count)
        return out.named(first.sa_name, first.qi_names, first.sa_labels, first.qi_labels, first.qi_numeric)

    # ---------------------------------------------------------- figures
    def __len__(self) -> int:
        return len(self.count)

    @property
    def n(self) -> int:
        """Records in the table."""
        return int(self.count.sum())

    @cached_property
    def sa_counts(self) -> np.ndarray:
        """Records per SA value, ``(m,)`` int64."""
        return np.bincount(self.sa, weights=self.count, minlength=self.m).astype(np.int64)

    @cached_property
    def _qi_start(self) -> np.ndarray:
        """Index of the first row of each QI combination (rows are sorted by QI first)."""
        if len(self) == 0:
            return np.zeros(0, dtype=np.int64)
        new = np.zeros(len(self), dtype=bool)
        new[0] = True
        for col in self.qi:
            new[1:] |= col[1:] != col[:-1]
        return np.flatnonzero(new)

    def qi_groups(self) -> tuple[np.ndarray, int]:
        """``(group of each row, number of groups)``: the distinct QI combinations, numbered in lexicographic order."""
        step = np.zeros(len(self), dtype=np.int64)
        step[self._qi_start[1:]] = 1
        return np.cumsum(step), len(self._qi_start)

    @property
    def n_qi_groups(self) -> int:
        return len(self._qi_start)

    def qi_codes_of(self, groups) -> tuple[np.ndarray, ...]:
        """The QI codes of the micro groups ``groups`` (:meth:`qi_groups` numbering), one array per QI column."""
        first = self._qi_start[np.asarray(groups, dtype=np.int64)]
        return tuple(col[first] for col in self.qi)

    def qi_sizes(self) -> np.ndarray:
        """Records per QI combination (micro group), in :meth:`qi_groups` order."""
        return np.add.reduceat(self.count, self._qi_start) if len(self) else np.zeros(0, dtype=np.int64)

    @cached_property
    def groups(self) -> QIGroups:
        """The distinct QI combinations (:meth:`qi_groups` order) as a :class:`core.counting.QIGroups`.

        Kept with the combinations (memoised per dataset by :meth:`of`), so
        the workload's true answers and every release that publishes the
        table's QI columns are counted on one coding of the QI tuples.
        """
        start = self._qi_start
        return QIGroups([c[start] for c in self.qi], self.domains, len(start))

    def records(self) -> Records:
        """The table as weighted :class:`core.counting.Records` (one row per combination, weight = count).

        Coded by :attr:`groups`, so each attribute subset's index is one
        ``bincount`` over the combinations.
        """
        group, _ = self.qi_groups()
        return Records.on_groups(self.groups, group, self.sa, self.m, weights=self.count.astype(np.float64),
                                 aggregate=False)

    # ---------------------------------------------------------- derived results
    @cached_property
    def _derived(self) -> tuple[OrderedDict, threading.Lock]:
        return OrderedDict(), threading.Lock()

    def remember(self, key, compute, keep: int = DERIVED_KEEP):
        """``compute()``, kept with these combinations under ``key`` (the ``keep`` most recently used per key kind).

        For results that are functions of the combinations and a few
        parameters (Mondrian's partition for a (k, l)): a slider move that
        changes another parameter, or a search that tries the same setting
        again, reuses them.  They live as long as the combinations (memoised
        per dataset by :meth:`of`); each is per-combination arrays, at most
        the size of the combinations themselves.  ``key[0]`` names the kind:
        at most ``keep`` entries of each kind are kept.
        """
        store, lock = self._derived
        with lock:
            if key in store:
                store.move_to_end(key)
                return store[key]
        value = compute()
        with lock:
            store[key] = value
            store.move_to_end(key)
            kind = [k for k in store if k[0] == key[0]]
            for old in kind[:max(0, len(kind) - keep)]:
                del store[old]
        return value

    # ---------------------------------------------------------- lookups
    @cached_property
    def _row_keys(self):
        return _Keys([*self.qi, self.sa], (*self.domains, self.m))

    @cached_property
    def _group_keys(self):
        start = self._qi_start
        return _Keys([c[start] for c in self.qi], self.domains)

    def row_of(self, qi_codes: Sequence[np.ndarray], sa_codes: np.ndarray) -> np.ndarray:
        """Index of each record's (QI..., SA) combination among the rows (records must be of this table)."""
        return self._row_keys.lookup([*qi_codes, sa_codes])

    @property
    def group_lookup(self) -> "_Keys":
        """What :meth:`group_of` looks records up in (per QI combination, picklable): ``.lookup(qi_codes)``.

        A plan that needs each record's QI combination but no rank holds
        it instead of asking the engine for ``rank_by="qi"`` (Mondrian).
        """
        return self._group_keys

    def group_of(self, qi_codes: Sequence[np.ndarray]) -> np.ndarray:
        """Index of each record's QI combination among :meth:`qi_groups` (records must be of this table)."""
        return self._group_keys.lookup(list(qi_codes))

    def key_of(self, rank_by: str | None, qi_codes: Sequence[np.ndarray], sa_codes: np.ndarray
               ) -> tuple[np.ndarray | None, int]:
        """The rank key of each record for ``rank_by`` (:mod:`core.engine.protocol`) and the number of keys."""
        if rank_by is None:
            return None, 0
        if rank_by == "sa":
            return np.asarray(sa_codes, dtype=np.int64), self.m
        if rank_by == "qi":
            return self.group_of(qi_codes), self.n_qi_groups
        if rank_by == "qi_sa":
            return self.row_of(qi_codes, sa_codes), len(self)
        raise ValueError(f"unknown rank key {rank_by!r}")


class SaKeys:
    """The rank keys of a plan that ranks records by SA value (``rank_by="sa"``): the SA codes themselves.

    Such a plan (SPLU-Gen, SDR, Anatomy, bucketization) needs no
    combinations to rank records, so both engines rank with this instead
    of :meth:`Combos.key_of`, which would group the whole table first.
    """

    def __init__(self, m: int):
        self.m = int(m)

    def key_of(self, rank_by: str | None, qi_codes: Sequence[np.ndarray], sa_codes: np.ndarray
               ) -> tuple[np.ndarray, int]:
        if rank_by != "sa":
            raise ValueError(f"SaKeys ranks by SA value only, not {rank_by!r}")
        return np.asarray(sa_codes, dtype=np.int64), self.m


def rank_keys(rank_by: str | None, m: int, combos) -> "Combos | SaKeys | None":
    """What ranks records for ``rank_by``: nothing, :class:`SaKeys`, or the combinations (``combos()``, built now)."""
    if rank_by is None:
        return None
    return SaKeys(m) if rank_by == "sa" else combos()


class LazyCombos:
    """A table's summary that computes the combinations only when a plan reads them.

    ``n``, ``m``, ``domains``, ``sa_counts``, the names and the labels come
    straight from the dataset (one ``bincount``); anything else
    (``qi``, ``sa``, ``count``, ``qi_groups()``, ``records()`` ...) builds
    :meth:`Combos.of` on first use.  The local engine passes this to
    ``Mechanism.plan``, so UP and DBR never pay for the group-by.
    """

    def __init__(self, data):
        self._data = data
        self.n, self.m = int(data.n), int(data.m)
        self.domains = tuple(int(d) for d in data.domains)
        self.sa_name, self.qi_names = data.sa, tuple(data.qi)
        self.sa_labels, self.qi_labels = data.sa_labels, tuple(data.qi_labels)
        self.qi_numeric = tuple(bool(x) for x in getattr(data, "qi_numeric", ()))

    @cached_property
    def sa_counts(self) -> np.ndarray:
        """The dataset's own counts when it keeps them (:class:`core.table.Dataset`, counted once per table:
        a plan per slider move counted 5M codes again, 35 ms), as a copy a plan may change."""
        kept = getattr(self._data, "sa_counts", None)
        if kept is None:
            kept = np.bincount(np.asarray(self._data.sa_codes), minlength=self.m)
        return np.array(kept, dtype=np.int64)

    @property
    def combos(self) -> Combos:
        """The full :class:`Combos` (built once, memoised per dataset)."""
        return Combos.of(self._data)

    def __len__(self) -> int:
        return len(Combos.of(self._data))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(Combos.of(self._data), name)


class _Keys:
    """Sorted distinct code tuples and a lookup of records into them (exact, no hashing collisions).

    While the product of the domains fits, a tuple's key is its mixed-radix
    number; otherwise columns are folded one at a time, each prefix replaced
    by its index among the distinct prefixes, so keys never overflow.
    """

    def __init__(self, cols: Sequence[np.ndarray], domains: Sequence[int]):
        self.domains = tuple(max(int(d), 1) for d in domains)
        self.direct = _fits(self.domains)
        if self.direct:
            self.keys = _mixed_key(cols, self.domains)
            return
        self.levels = []  # sorted distinct prefix keys per level
        key = np.asarray(cols[0], dtype=np.int64)
        for j in range(1, len(cols)):
            uniq = np.unique(key)
            self.levels.append(uniq)
            key = np.searchsorted(uniq, key).astype(np.int64) * self.domains[j] + np.asarray(cols[j], dtype=np.int64)
        self.keys = key

    def lookup(self, cols: Sequence[np.ndarray]) -> np.ndarray:
        if self.direct:
            key = _mixed_key(cols, self.domains)
        else:
            key = np.asarray(cols[0], dtype=np.int64)
            for j in range(1, len(cols)):
                key = (np.searchsorted(self.levels[j - 1], key).astype(np.int64) * self.domains[j]
                       + np.asarray(cols[j], dtype=np.int64))
        return np.searchsorted(self.keys, key).astype(np.int64)


_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

__all__ = ["Combos", "LazyCombos"]
