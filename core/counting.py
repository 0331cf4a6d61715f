"""Vectorised count queries: the one primitive every estimator builds on.

A count query selects records by a predicate on some QI attributes (each an
equality or a set of allowed values) and asks how many of them carry each
value of a *target* column: the SA for perturbation estimators and true
answers, the group id for Anatomy-style estimators.  :class:`Records` holds
encoded columns and answers a whole :class:`QueryBatch` at once from a
per-attribute-subset contingency index (:class:`CountIndex`), never one
boolean mask per query.

Two things keep a workload over dozens of attribute subsets cheap:

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

    Only combinations that occur are kept (sorted keys and a sparse matrix),
    so an index costs memory in proportion to the data, not to the product
    of the domains.  A domain product that is small, absolutely and against
    the number of input rows, is counted with one ``bincount``; otherwise the
    occurring combinations are hashed (``pandas.factorize``, sorted so that
    equality predicates can be looked up by binary search) and counted in
    the compact table of those.

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
        target = np.asarray(target, dtype=np.int64)
        table = cells * m
        if self._coder.plain and table <= DENSE_CELLS and table <= max(DENSE_PER_ROW * n, DENSE_FLOOR):
            dense = np.bincount(key * m + target, weights=weights, minlength=int(table)).reshape(-1, m)
            keys = np.flatnonzero(dense.any(axis=1))
            matrix = sparse.csr_matrix(dense[keys].astype(float, copy=False))
        else:
            codes, keys = pd.factorize(key, sort=True)
            u = len(keys)
            if u * m <= max(DENSE_PER_ROW * n, DENSE_FLOOR):  # the compact table of occurring combinations
                dense = np.bincount(codes * m + target, weights=weights, minlength=u * m).reshape(u, m)
                matrix = sparse.csr_matrix(dense.astype(float, copy=False))
            else:
                cell_codes, cell = pd.factorize(codes * m + target)
                total = np.bincount(cell_codes, weights=weights, minlength=len(cell)).astype(float)
                matrix = sparse.csr_matrix((total, (cell // m, cell % m)), shape=(u, m))
                matrix.eliminate_zeros()
            keys = np.asarray(keys, dtype=np.int64)
        self.keys = keys
        self.matrix = matrix

    @property
    def nnz(self) -> int:
        """Number of non-zero cells (what projecting from this index costs)."""
        return int(self.matrix.nnz)

    @cached_property
    def values(self) -> np.ndarray:
        """Per-attribute codes of each occurring combination: (E, d)."""
        return self._coder.decode(self.keys)

    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every non-zero cell: (values (E, d), target code (E,), count (E,))."""
        coo = self.matrix.tocoo()
        return self.values[coo.row], coo.col.astype(np.int64), coo.data

    def lookup(self, values: np.ndarray) -> np.ndarray:
        """Counts for equality predicates: (Q, n_target) dense."""
        key, known = self._coder.encode([values[:, j] for j in range(values.shape[1])], len(values))
        out = np.zeros((len(values), self.n_target))
        if len(self.keys) == 0:
            return out
        pos = np.minimum(np.searchsorted(self.keys, key), len(self.keys) - 1)
        found = (self.keys[pos] == key) & known
        if found.any():
            out[found] = self.matrix[pos[found]].toarray()
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
        self.qi_codes = tuple(qi_codes)
        self.domains = tuple(int(d) for d in domains)
        self.target = np.asarray(target)
        self.n_target = int(n_target)
        self.weights = weights
        self._indexes: dict[tuple[int, ...], CountIndex] = {}
        self._on_superset: set[tuple[int, ...]] = set()

    def __len__(self) -> int:
        return len(self.target)

    @classmethod
    def from_groups(cls, qi_codes: Sequence[np.ndarray], domains: Sequence[int], record_group: np.ndarray,
                    st_group: np.ndarray, st_target: np.ndarray, st_count: np.ndarray,
                    n_target: int) -> "Records":
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
        by_group = CountIndex(list(qi_codes), domains, record_group, g)
        cells = (by_group.matrix @ w).tocoo()
        # one contiguous array per attribute: every later projection reads whole columns
        columns = np.ascontiguousarray(by_group.values[cells.row].T)
        return cls(list(columns), domains, cells.col.astype(np.int64), n_target, weights=cells.data)

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
        if idx is None:
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


def select(counts: np.ndarray, sa_mask: np.ndarray) -> np.ndarray:
    """Sum each row of ``counts`` over the selected SA values: (Q,)."""
    return np.einsum("qm,qm->q", counts, sa_mask.astype(float))
