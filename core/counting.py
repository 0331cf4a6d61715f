"""Vectorised count queries: the one primitive every estimator builds on.

A count query selects records by a predicate on some QI attributes (each an
equality or a set of allowed values) and asks how many of them carry each
value of a *target* column: the SA for perturbation estimators and true
answers, the group id for Anatomy-style estimators.  :class:`Records` holds
encoded columns and answers a whole :class:`QueryBatch` at once from a
per-attribute-subset contingency index, never one boolean mask per query.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np
from scipy import sparse

#: contingency tables up to this many cells are counted with one bincount;
#: larger ones with np.unique (either way only occurring cells are kept)
DENSE_CELLS = 10_000_000
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
    of the domains.  Small domain products are counted with one ``bincount``;
    large ones with ``np.unique``.
    """

    def __init__(self, cols: Sequence[np.ndarray], domains: Sequence[int], target: np.ndarray,
                 n_target: int, weights: np.ndarray | None = None):
        self.domains = tuple(int(d) for d in domains)
        self.n_target = int(n_target)
        cells = float(np.prod(self.domains, dtype=float)) if self.domains else 1.0
        self._coder = _KeyCoder(cols, self.domains, len(target))
        key, _ = self._coder.encode(cols, len(target))
        target = np.asarray(target, dtype=np.int64)
        if self._coder.plain and cells * self.n_target <= DENSE_CELLS:
            cells = int(cells)
            dense = np.bincount(key * self.n_target + target, weights=weights,
                                minlength=cells * self.n_target).reshape(cells, self.n_target)
            keys = np.flatnonzero(dense.any(axis=1))
            matrix = sparse.csr_matrix(dense[keys].astype(float))
        else:
            keys, inverse = np.unique(key, return_inverse=True)
            data = np.ones(len(key)) if weights is None else np.asarray(weights, dtype=float)
            matrix = sparse.csr_matrix((data, (inverse.ravel(), target)), shape=(len(keys), self.n_target))
        self.keys = keys
        self.matrix = matrix

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
    ``bincount`` calls.
    """

    def __init__(self, qi_codes: Sequence[np.ndarray], domains: Sequence[int], target: np.ndarray,
                 n_target: int, weights: np.ndarray | None = None):
        self.qi_codes = tuple(qi_codes)
        self.domains = tuple(int(d) for d in domains)
        self.target = np.asarray(target)
        self.n_target = int(n_target)
        self.weights = weights
        self._indexes: dict[tuple[int, ...], CountIndex] = {}

    def __len__(self) -> int:
        return len(self.target)

    def index(self, attrs: tuple[int, ...]) -> CountIndex:
        idx = self._indexes.get(attrs)
        if idx is None:
            idx = CountIndex([self.qi_codes[a] for a in attrs], [self.domains[a] for a in attrs],
                             self.target, self.n_target, self.weights)
            self._indexes[attrs] = idx
        return idx

    def counts(self, batch: QueryBatch) -> np.ndarray:
        """(Q, n_target): matching records per target code, for every query."""
        idx = self.index(batch.attrs)
        if batch.is_equality:
            return idx.lookup(batch.values)
        return idx.match(batch.masks)

    @cached_property
    def target_totals(self) -> np.ndarray:
        return np.bincount(self.target, weights=self.weights, minlength=self.n_target).astype(float)


def select(counts: np.ndarray, sa_mask: np.ndarray) -> np.ndarray:
    """Sum each row of ``counts`` over the selected SA values: (Q,)."""
    return np.einsum("qm,qm->q", counts, sa_mask.astype(float))
