"""SPLU-Gen: small-sum privacy, large-sum utility (seed 000, Fu et al.).

Records are partitioned into *decoy groups* of gamma distinct sensitive
values (:func:`core.partition.distinct_value_groups`); every record then
publishes a value drawn from its own group: its true value with probability
``p``, each other group value with ``q = (1 - p) / (|g| - 1)``.  QI values
are published unchanged, rows are shuffled, and only the table, gamma and p
are published: the partition is kept secret (seed 000 §3.1, Step 4).

A count of one sensitive value is estimated by its published count (the
MLE of Theorem 2).  A count of ``P AND SA = s`` (P a QI predicate) is
estimated by the iterative Bayesian reconstruction of §5.1 over the four
states (P̄s̄, P̄s, Ps̄, Ps), with the transition matrix re-derived below;
two sensitive attributes use the tensor-product matrix of §5.2
(:func:`estimate_two`).

Where this module departs from the paper, and why
-------------------------------------------------
* Residual records (``N mod gamma``) are kept in groups of gamma + 1
  instead of deleted; each draw uses its group's own size.
* ``p`` may be set in ``[1/gamma, 1]``; the paper fixes ``p = 1/gamma``.
* The transition entry for a record whose value is not s
  (Fig. 6's ``a_01 = a_23 = f_s/N``) is wrong; we use
  ``f_s (1 - p) / (N - f_s)`` (see :func:`transition`).
* Which records share a decoy group (Step 2) is left open by the paper
  (its example follows Anatomy's loop over the largest buckets).  The
  default ``partition = "random"`` draws the value pairings with the
  release seed (:func:`core.partition.distinct_value_groups`), so a
  record's decoys do not depend on its own value, which is what the
  reconstruction assumes.  ``"sorted"`` is the deterministic construction
  of MECHANISMS.md (records sorted by value, position i to group i mod r),
  whose pairings are fixed: on Adult (SA occupation, 5,000 seed-000
  queries) it sends 153 large-count estimates to about 0 at gamma = 4 and
  the mean relative error of the >= 5% band to 0.43, against 0 and 0.12
  with the random layout (gamma = 3: 0.34 vs 0.19 over all large counts;
  gamma = 5 and 7 about equal).  Either way the partition is a function of
  the SA column, the ids and the seed, never of the QI values.

What to expect from the estimates
---------------------------------
The reconstruction assumes, as the paper does (§5.1), that a record whose
value is not s has s among its decoys with a chance that does not depend on
its QI values or other attributes.  The partition is built from the SA
alone, but the modulo construction puts each value's records in a
contiguous run of groups, so which values serve as decoys for which is
fixed by the value counts; a predicate P correlated with the SA then breaks
the assumption, and the error grows with |P| and f_s, not only with the
count (MECHANISMS.md section 1); the random layout (default) removes the
worst of it, the sorted one does not.  And the paper's 1% stopping rule stops
the slowly converging iteration early, between the direct count and the
fixed point (:func:`closed_form`): on a table where the assumption holds
the fixed point is unbiased and the 1% rule is not (tests measure both).

Guarantee (:meth:`SPLU.guarantee`)
---------------------------------
(eps, T_p, alpha) small-sum privacy (Definition 2, Theorem 4): every count
of at most alpha records is published with a relative error of at least eps
with probability at least T_p.  The paper leaves (eps, T_p, alpha) to the
user ("specifications to be given by the users", §2); they are parameters
here, defaulting to the only specification the paper states in full,
(0.3, 0.6, 3) (§4.2, met at gamma = 10: T_p = 0.6126).  At the paper's
recommended gamma = 5, T_p = 0.590 at f = 1: the default setting does not
meet it, and gamma = 7 does.  Checked on the release: T_p(f) for each group
size the release published (a count whose records all sit in groups of
gamma + 1 has its own tail) and every f in 1..alpha.

References
----------
seed 000 (Fu et al., "Small sum privacy and large sum utility"), §3.1
(Algorithm SPLU-Gen), §4 (Theorem 2), §4.2 (Lemma 2, Theorem 4), §5.1
(Fig. 6, eqs. (6)-(13)), §5.2 (eq. (14)), §6.4; MECHANISMS.md section 1.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..counting import QueryBatch, Records
from .. import guarantee as G
from ..errors import NotEligible, ParameterError, WorkbenchError, clip
from ..params import Param
from ..partition import check_distinct_counts, check_distinct_groups, distinct_value_groups, largest_feasible
from .. import rng as _rng
from ..engine import memo as _memo
from ..engine.combos import Combos
from ..engine.protocol import Chunk, Plan, ranks
from ..release import CodedTable, Published, Release
from ..shuffle import permute, unpermute
from ..table import Column, Dataset
from .base import Mechanism, grid_counts, grid_select, observed, published_records, table_records

#: Cap on fixed-point iterations of the Bayesian reconstruction.  The paper
#: reports a median of 16 and a mean of 325 iterations (§6.5); queries still
#: moving after this many steps keep their last iterate.
MAX_ITERATIONS = 2000

#: Defaults of the small-sum privacy specification (eps, T_p, alpha): the one
#: the paper states in full (§4.2: (0.3, 0.6, 3)-privacy at gamma = 10).
PRIVACY_EPS = 0.3
PRIVACY_TP = 0.6
PRIVACY_ALPHA = 3

#: Joint (SA1, SA2) counts are built for at most this many cells at a time.
_JOINT_CELLS = 4_000_000


# ------------------------------------------------------------------ drawing
def decoy_draw(sa_codes: np.ndarray, group: np.ndarray, p: float, rng: np.random.Generator) -> np.ndarray:
    """Each record's published value, drawn from its decoy group (vectorised).

    A record keeps its own value with probability ``p``; otherwise it takes
    the value of another member of its group chosen uniformly, so each other
    group value has probability ``q = (1 - p) / (|g| - 1)`` with ``|g|`` the
    group's own size (gamma or gamma + 1).  Because a group's values are
    distinct, "another member" and "another value" are the same thing.

    Parameters
    ----------
    sa_codes : ndarray (N,) of int
        True sensitive values.
    group : ndarray (N,) of int
        Decoy group of each record (groups of at least 2 distinct values).
    p : float
        Probability of publishing the own value.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray (N,)
        Published codes, same dtype as ``sa_codes``.

    References
    ----------
    seed 000 §3.1, Step 3.
    """
    n = len(sa_codes)
    sizes = np.bincount(group)
    members = np.argsort(group, kind="stable")  # records listed group by group
    start = np.cumsum(sizes) - sizes
    position = np.empty(n, dtype=np.int64)
    position[members] = np.arange(n) - start[group[members]]
    k = sizes[group]
    own = rng.random(n) < p
    shift = rng.integers(1, k)  # uniform on 1..k-1: another member
    other = members[start[group] + (position + shift) % k]
    return np.where(own, sa_codes, sa_codes[other]).astype(sa_codes.dtype)


# ------------------------------------------------------------------ the plan
def _bitmap(values: np.ndarray, span: int) -> tuple[np.ndarray, int]:
    """A membership filter of ``values`` (ints in ``0 .. span - 1``): ``(bits, mask)``, ``bits[v & mask]`` True for each.

    ``2**k >= 32 len(values)`` entries (at least 2**16), or ``span``'s power of
    two when that is smaller (then the filter is exact).
    """
    k = max(16, int(32 * max(1, len(values)) - 1).bit_length())
    k = min(k, max(1, int(span - 1).bit_length()))
    bits = np.zeros(1 << k, dtype=bool)
    bits[np.asarray(values, dtype=np.int64) & ((1 << k) - 1)] = True
    return bits, (1 << k) - 1


class DecoyLayout:
    """SPLU-Gen's decoy groups from the SA counts: which group a record joins and who its group's members are.

    Records are laid out by (value rank, position in the value's run):
    values by descending count (ties: lower code first), as
    :func:`core.partition.distinct_value_groups`.  A record of value ``v``
    whose rank among the value's records is ``k`` sits at sorted position
    ``P = start[v] + t`` with ``t = k`` (``"sorted"``) or ``t = pi_v(k)``, a
    keyed random permutation of the run (``"random"``, purpose
    ``"splu/run"``: which records of a value land in a straddling part or
    the residue is random; only values whose run is cut by a column
    boundary or the residue are permuted, since inside one column the
    column's row permutation already places the value's records at random).  Positions ``c r .. (c+1) r - 1`` form column
    ``c`` (``r = N // gamma``); the record at column index ``i`` joins group

    * ``"sorted"``: ``P mod r`` (MECHANISMS.md section 1, step 2);
    * ``"random"``: ``row_c(i)``, a keyed random permutation of the column's
      rows (purpose ``"splu/column"``, key = the column), so which values
      share a group is random, as in :func:`core.partition._mixed_layout`.
      The one value whose run straddles columns ``c - 1`` and ``c`` may meet
      itself in a row; each such record swaps rows with a random record of
      column ``c`` outside the value whose row holds the value in neither
      column (candidates in a keyed random order, purpose ``"splu/swap"``),
      and the ``N - r gamma`` residual records go to distinct random rows
      whose last column does not hold their value (purpose
      ``"splu/residue"``).  The swaps are stored (a few per column
      boundary), nothing per record.

    Tiny tables whose residue exceeds ``r`` get the sorted layout either way
    (as :func:`core.partition.distinct_value_groups`).  The member slots of
    a group are its columns ``0 .. gamma - 1`` (plus slot ``gamma``: its
    residual record, if any); :meth:`member_values` reads a slot's value
    back through the inverse permutation.
    """

    def __init__(self, counts: np.ndarray, gamma: int, seed: int, mixed: bool, prefix: str = "splu"):
        counts = np.asarray(counts, dtype=np.int64)
        self.counts, self.gamma, self.seed, self.prefix = counts, int(gamma), int(seed), prefix
        self.n = n = int(counts.sum())
        m = len(counts)
        self.r = r = n // gamma
        if r == 0:
            raise NotEligible(f"A group needs {gamma} records but the table has only {n}.")
        order = np.lexsort((np.arange(m), -counts))
        self.start = np.empty(m, dtype=np.int64)
        self.start[order] = np.concatenate(([0], np.cumsum(counts[order])[:-1]))
        self.run_value = order  # values in sorted-position order
        self.run_end = np.cumsum(counts[order]).astype(np.int64)
        self.main = r * gamma
        self.mixed = bool(mixed) and n - self.main <= r
        self.over_idx: dict[int, np.ndarray] = {}   # column -> overridden indices (sorted)
        self.over_row: dict[int, np.ndarray] = {}   # ... and their rows
        self.residual_rows = np.zeros(0, dtype=np.int64)
        self._filters: dict = {}  # (kind, column) -> membership filter of its overrides (built on first use)
        self._lock = threading.Lock()
        self._tables: LayoutTables | None = None  # :meth:`tables`, built on first use
        # values whose run is cut (by a column boundary or the residue): only their records' order inside the
        # run decides anything, since every column's rows are permuted anyway
        end = self.start + counts
        self.split = (counts > 0) & ((self.start // r != (end - 1) // r) | (end > self.main))
        if self.mixed:
            self._fix_straddles()
            self._place_residue()

    # ---------------------------------------------------------- positions
    def value_at(self, pos: np.ndarray) -> np.ndarray:
        """The value of the record at each sorted position."""
        return self.run_value[np.searchsorted(self.run_end, pos, side="right")]

    def run_positions(self, sa: np.ndarray, rank: np.ndarray) -> np.ndarray:
        """``pi_v(rank)`` for every record: its place in its value's permuted run (purpose ``<prefix>/run``).

        A value's permutation depends on the seed, the value and its count
        only, not on gamma (gamma decides only which runs are cut and use
        it), so the app keeps these between slider moves
        (:mod:`core.engine.memo`).
        """
        sa = np.asarray(sa, dtype=np.int64)
        return permute(self.seed, f"{self.prefix}/run", sa, np.asarray(rank, dtype=np.int64), self.counts[sa])

    def position(self, sa: np.ndarray, rank: np.ndarray, run: np.ndarray | None = None) -> np.ndarray:
        """The sorted position of each record from its value and rank (``run``: :meth:`run_positions`, if known)."""
        sa = np.asarray(sa, dtype=np.int64)
        rank = np.asarray(rank, dtype=np.int64)
        if not self.mixed:
            return self.start[sa] + rank
        if run is not None:
            out = np.where(self.split[sa], run, rank)
            out += self.start[sa]
            return out
        out = self.start[sa] + rank
        split = np.flatnonzero(self.split)
        if len(split) <= 64:  # a few cut runs (at most gamma + 1): each value's permutation with scalar key and size
            for v in split:
                sel = np.flatnonzero(sa == v)
                if len(sel):
                    out[sel] = self.start[v] + permute(self.seed, f"{self.prefix}/run", v, rank[sel], self.counts[v])
            return out
        mix = np.flatnonzero(self.split[sa])
        if len(mix):
            out[mix] = self.start[sa[mix]] + permute(self.seed, f"{self.prefix}/run", sa[mix], rank[mix],
                                                     self.counts[sa[mix]])
        return out

    def row(self, c, i: np.ndarray) -> np.ndarray:
        """Group of column ``c``'s index ``i`` (mixed layout), overrides applied."""
        return self._by_column(c, i, self._row_one)

    def index(self, c, g: np.ndarray) -> np.ndarray:
        """The index in column ``c`` whose group is ``g`` (inverse of :meth:`row`)."""
        return self._by_column(c, g, self._index_one)

    @staticmethod
    def _by_column(c, x, one) -> np.ndarray:
        """``one(col, x[c == col])`` for each column present in ``c``, put back in place.

        Each column is one keyed permutation: evaluated with its key as a
        scalar (:func:`core.shuffle.permute`'s one-key path) it needs no
        per-element round keys.
        """
        c = np.asarray(c, dtype=np.int64)
        x = np.asarray(x, dtype=np.int64)
        if c.ndim == 0:
            return one(int(c), x.reshape(-1)).reshape(x.shape)
        c, x = np.broadcast_arrays(c, x)
        shape = x.shape
        c, x = c.reshape(-1), x.reshape(-1)
        if not len(x):
            return np.zeros(shape, dtype=np.int64)
        cols = np.flatnonzero(np.bincount(c))
        if len(cols) == 1:
            return one(int(cols[0]), x).reshape(shape)
        out = np.empty(len(x), dtype=np.int64)
        for col in cols:
            sel = np.flatnonzero(c == col)
            out[sel] = one(int(col), x[sel])
        return out.reshape(shape)

    def _row_one(self, col: int, i: np.ndarray) -> np.ndarray:
        out = permute(self.seed, f"{self.prefix}/column", col, i, self.r)
        idx = self.over_idx.get(col)
        if idx is not None and len(i):
            bits, mask = self._filter("idx", col, idx)
            sel = np.flatnonzero(bits[i & mask])  # the overridden indices and about 1 in 32 others
            if len(sel):
                j = np.searchsorted(idx, i[sel])
                hit = (j < len(idx)) & (idx[np.minimum(j, len(idx) - 1)] == i[sel])
                out[sel[hit]] = self.over_row[col][j[hit]]
        return out

    def _index_one(self, col: int, g: np.ndarray) -> np.ndarray:
        out = unpermute(self.seed, f"{self.prefix}/column", col, g, self.r)
        rows = self.over_row.get(col)
        if rows is not None and len(g):
            bits, mask = self._filter("row", col, rows)
            sel = np.flatnonzero(bits[g & mask])
            if len(sel):
                by_row = self._filters.get(("by_row", col))
                if by_row is None:
                    by_row = self._filters[("by_row", col)] = np.argsort(rows)
                j = np.searchsorted(rows[by_row], g[sel])
                jj = np.minimum(j, len(rows) - 1)
                hit = (j < len(rows)) & (rows[by_row][jj] == g[sel])
                out[sel[hit]] = self.over_idx[col][by_row[jj[hit]]]
        return out

    def _filter(self, kind: str, col: int, values: np.ndarray) -> tuple[np.ndarray, int]:
        """The :func:`_bitmap` of a column's overridden indices (``"idx"``) or rows (``"row"``), kept once built."""
        filt = self._filters.get((kind, col))
        if filt is None:
            filt = self._filters[(kind, col)] = _bitmap(values, self.r)
        return filt

    # ---------------------------------------------------------- building (mixed)
    def _fix_straddles(self) -> None:
        r = self.r
        for c in range(1, self.gamma):
            first = c * r
            v = int(self.value_at(np.array([first]))[0])
            if int(self.value_at(np.array([first - 1]))[0]) != v:
                continue
            a = int(self.start[v]) - (c - 1) * r
            b = int(self.start[v] + self.counts[v]) - first
            taken = np.zeros(r, dtype=bool)  # the rows holding the value in column c - 1 (a mask: no sort)
            taken[self.row(c - 1, np.arange(a, r))] = True
            mine = permute(self.seed, f"{self.prefix}/column", c, np.arange(b), r)
            bad = np.flatnonzero(taken[mine])
            if not len(bad):
                continue
            partners = []
            t = 0
            need = len(bad)
            while need > 0:
                block = np.arange(t, min(t + max(64, 4 * need), r - b))
                t = int(block[-1]) + 1
                j = b + permute(self.seed, f"{self.prefix}/swap", c, block, r - b)
                ok = j[~taken[permute(self.seed, f"{self.prefix}/column", c, j, r)]]
                partners.append(ok[:need])
                need -= len(ok[:need])
            partners = np.concatenate(partners)
            idx = np.concatenate([bad, partners])
            rows = np.concatenate([permute(self.seed, f"{self.prefix}/column", c, partners, r), mine[bad]])
            o = np.argsort(idx)
            self.over_idx[c], self.over_row[c] = idx[o], rows[o]

    def _place_residue(self) -> None:
        rest = np.arange(self.main, self.n)
        if not len(rest):
            return
        r, last = self.r, self.gamma - 1
        used: list[int] = []
        holding: dict[int, np.ndarray] = {}  # value -> mask of the last column's rows holding it (no Python sets)
        for j, pos in enumerate(rest):
            v = int(self.value_at(np.array([pos]))[0])
            if v not in holding:
                lo = max(int(self.start[v]), last * r)
                hi = min(int(self.start[v] + self.counts[v]), self.main)
                holding[v] = np.zeros(r, dtype=bool)
                if hi > lo:
                    holding[v][self.row(last, np.arange(lo - last * r, hi - last * r))] = True
            forbidden = holding[v].copy()
            forbidden[used] = True
            t = 0
            while True:
                block = np.arange(t, min(t + 64, r))
                t = int(block[-1]) + 1
                cand = permute(self.seed, f"{self.prefix}/residue", j, block, r)
                free = cand[~forbidden[cand]]
                if len(free):
                    used.append(int(free[0]))
                    break
        self.residual_rows = np.array(used, dtype=np.int64)

    # ---------------------------------------------------------- groups
    def group_and_slot(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Group of each sorted position and its member slot in the group."""
        pos = np.asarray(pos, dtype=np.int64)
        if not self.mixed:
            return pos % self.r, pos // self.r
        group = np.empty(len(pos), dtype=np.int64)
        slot = np.minimum(pos // self.r, self.gamma)
        main = pos < self.main
        group[main] = self.row(slot[main], pos[main] % self.r)
        group[~main] = self.residual_rows[pos[~main] - self.main]
        return group, slot

    def sizes(self, group: np.ndarray) -> np.ndarray:
        """Members of each group."""
        group = np.asarray(group, dtype=np.int64)
        if not self.mixed:
            return self.n // self.r + (group < self.n % self.r)
        extra = np.zeros(len(group), dtype=np.int64) if group.ndim else np.int64(0)
        for row in self.residual_rows.tolist():  # fewer than gamma rows: a comparison each
            extra += group == row
        return self.gamma + extra

    def member_values(self, group: np.ndarray, slot: np.ndarray) -> np.ndarray:
        """The value of the member in ``slot`` of each ``group``."""
        group = np.asarray(group, dtype=np.int64)
        slot = np.asarray(slot, dtype=np.int64)
        if not self.mixed:
            return self.value_at(group + slot * self.r)
        pos = np.empty(len(group), dtype=np.int64)
        main = slot < self.gamma
        pos[main] = slot[main] * self.r + self.index(slot[main], group[main])
        if (~main).any():
            which = np.argsort(self.residual_rows)
            j = np.searchsorted(self.residual_rows[which], group[~main])
            pos[~main] = self.main + which[j]
        return self.value_at(pos)

    def tables(self, threads: int = 1) -> "LayoutTables":
        """Every record's group and every group's member values, as lookup tables (mixed layout; built once).

        :meth:`group_and_slot` and :meth:`member_values` evaluate a column's
        permutation (and its inverse) per record; the local engine's plan
        evaluates each column's permutation once over all its ``r`` indices
        instead (``N`` evaluations, on ``threads`` threads) and reads both
        directions from arrays: :class:`LayoutTables`.  The values are the
        same: the tables are those functions written out.
        """
        with self._lock:
            if self._tables is None:
                self._tables = LayoutTables.of(self, threads)
            return self._tables

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_lock"], state["_tables"] = None, None  # a lock cannot be pickled; the tables are rebuilt on use
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def size_counts(self) -> dict[str, int]:
        """``{size: groups of that size}`` (published)."""
        if not self.mixed:  # groups 0 .. n mod r - 1 hold one record more
            size, larger = self.n // self.r, self.n % self.r
        else:  # the rows holding a residual record
            size, larger = self.gamma, len(self.residual_rows)
        # counted, not listed group by group (r is about N / gamma: a Python list of it took 50 ms at 5M)
        return {str(s): int(c) for s, c in ((size, self.r - larger), (size + 1, larger)) if c}


@dataclass(frozen=True, eq=False)
class LayoutTables:
    """A mixed :class:`DecoyLayout` written out: each sorted position's group, each group's member values.

    Attributes
    ----------
    group : ndarray (N,) of int32
        Group of the record at each sorted position (:meth:`DecoyLayout.group_and_slot`).
    values : ndarray ((gamma + 1) r,)
        ``values[s r + g]``: the value of group g's member in slot s
        (:meth:`DecoyLayout.member_values`; slot gamma only for the residual
        groups), in the narrowest unsigned type of the SA codes.
    extra : ndarray (r,) of uint8
        1 for a group of gamma + 1 (it holds a residual record), else 0.
    """

    group: np.ndarray
    values: np.ndarray
    extra: np.ndarray

    @classmethod
    def of(cls, lay: DecoyLayout, threads: int = 1) -> "LayoutTables":
        r, gamma, main = lay.r, lay.gamma, lay.main
        m = len(lay.counts)
        narrow = np.uint8 if m <= 256 else np.uint16 if m <= 65536 else np.int64
        group = np.empty(lay.n, dtype=np.int32 if r < 2**31 else np.int64)
        values = np.zeros((gamma + 1) * r, dtype=narrow)
        # the value at each sorted position: each value's run, in run order
        sorted_values = np.repeat(lay.run_value.astype(narrow), lay.counts[lay.run_value])

        def column(c: int) -> None:
            rows = lay.row(c, np.arange(r, dtype=np.int64))
            group[c * r:(c + 1) * r] = rows
            values[c * r + rows] = sorted_values[c * r:(c + 1) * r]

        if threads > 1 and gamma > 1:
            with ThreadPoolExecutor(threads, thread_name_prefix="splu-layout") as pool:
                list(pool.map(column, range(gamma)))
        else:
            for c in range(gamma):
                column(c)
        rest = lay.residual_rows
        group[main:] = rest
        values[gamma * r + rest] = sorted_values[main:]
        extra = np.zeros(r, dtype=np.uint8)
        extra[rest] = 1
        return cls(group=group, values=values, extra=extra)


#: the local engine's SPLU-Gen plan writes a mixed layout out (:class:`LayoutTables`, about 5 bytes a record)
#: up to this many records; larger tables evaluate the permutations per record
TABLE_ROWS = 1 << 25


class SPLUPlan(Plan):
    """SPLU-Gen's plan: the decoy layout (:class:`DecoyLayout`) and p; ranks by SA value.

    Each record finds its group and member slot from (value, rank), keeps
    its value with probability ``p`` (first word of its block of purpose
    ``purpose``) and otherwise takes the value of the member ``shift``
    slots further on, ``shift`` uniform on ``1 .. |g| - 1`` (second word):
    each other group value with ``q = (1 - p) / (|g| - 1)``, seed 000 §3.1
    Step 3.
    """

    def __init__(self, seed: int, sa: str, layout: DecoyLayout, p: float, purpose: str = "splu",
                 tables: bool = False, ranked: tuple[np.ndarray, np.ndarray] | None = None, **fields):
        ranked = ranked if layout.mixed else None
        super().__init__(seed=seed, rank_by="sa" if ranked is None else None, **fields)
        self.sa, self.layout, self.p, self.purpose = sa, layout, float(p), purpose
        #: read groups and member values from :meth:`DecoyLayout.tables` (the local engine; same values)
        self.use_tables = bool(tables) and layout.mixed and layout.n <= TABLE_ROWS
        #: every record's rank by SA and :meth:`DecoyLayout.run_positions`, kept between releases by the app
        #: (:func:`whole_table_runs`); the engine then ranks nothing
        self.ranked = ranked

    def __getstate__(self):
        state = dict(self.__dict__)
        if state["ranked"] is not None:  # pickled (the Dask engine): the engine ranks the batches again
            state["ranked"], state["rank_by"] = None, "sa"
        return state

    def apply(self, chunk: Chunk) -> dict[str, np.ndarray]:
        lay = self.layout
        rank, run = chunk.rank, None
        if self.ranked is not None:
            rank, run = (a[chunk.start:chunk.stop] for a in self.ranked)
        pos = lay.position(chunk.sa, rank, run)
        u = _rng.uniforms(self.seed, self.purpose, chunk.start, len(chunk), 2)
        out = np.array(chunk.sa, copy=True)
        move = np.flatnonzero(u[:, 0] >= self.p)  # the records that publish a decoy, not their own value
        if not len(move):
            return {self.sa: out}
        u1 = u[move, 1]
        del u
        if self.use_tables:
            out[move] = self._decoys_from_tables(pos[move], u1)
            return {self.sa: out}
        group, slot = lay.group_and_slot(pos)
        del pos
        k = lay.sizes(group)
        group, slot, k = group[move], slot[move], k[move]
        # another member: shift uniform on 1 .. k - 1 slots further on, modulo k
        shift = np.floor(u1 * (k - 1)).astype(np.int64)
        np.minimum(shift, k - 2, out=shift)
        shift += 1
        target = slot
        target += shift
        del shift
        np.subtract(target, k, out=target, where=target >= k)
        out[move] = lay.member_values(group, target)
        return {self.sa: out}

    def _decoys_from_tables(self, pos: np.ndarray, u1: np.ndarray) -> np.ndarray:
        """The decoy value published by each record at sorted position ``pos`` (second uniform ``u1``), by lookups.

        The per-record path's arithmetic with the group size as a scalar:
        every group has gamma members but the few holding a residual record
        (gamma + 1), whose records are redone with their own size.  Same
        values: ``floor(u1 (k - 1))`` is the same product for a scalar or
        an array ``k``.
        """
        lay = self.layout
        tab = lay.tables(_LAYOUT_THREADS)
        gamma, r = lay.gamma, lay.r
        group = tab.group[pos]
        slot = pos // r
        np.minimum(slot, gamma, out=slot)
        shift = np.floor(u1 * (gamma - 1)).astype(np.int64)  # uniform on 1 .. gamma - 1 slots further on
        np.minimum(shift, gamma - 2, out=shift)
        shift += 1
        target = slot
        target += shift
        del shift
        np.subtract(target, gamma, out=target, where=target >= gamma)  # modulo gamma (target < 2 gamma)
        big = np.flatnonzero(tab.extra[group])  # records of a group of gamma + 1
        if len(big):
            k = gamma + 1
            tb = np.minimum(pos[big] // r, gamma)  # their slot, then the target slot modulo gamma + 1
            tb += 1 + np.minimum(np.floor(u1[big] * (k - 1)).astype(np.int64), k - 2)
            tb[tb >= k] -= k
            target[big] = tb
        target *= r
        target += group
        return tab.values[target]


def whole_table_runs(data, layout: DecoyLayout) -> tuple[np.ndarray, np.ndarray]:
    """Every record's rank among its value's records (input order) and its :meth:`DecoyLayout.run_positions`.

    What the engine's batches carry (ranks by SA) and what the layout
    permutes, for the whole table at once, in the narrowest unsigned types.
    Neither depends on gamma or p (a run's permutation depends on the seed,
    the value and its count), so the app keeps them per table and seed.
    """
    sa = np.asarray(data.sa_codes, dtype=np.int64)
    rank, _ = ranks(sa, len(layout.counts))
    top = max(1, int(layout.counts.max(initial=1)))
    return _memo.narrow(rank, top), _memo.narrow(layout.run_positions(sa, rank), top)


#: threads writing a layout's tables out (one column each at a time; numpy releases the GIL in its loops)
_LAYOUT_THREADS = min(2, os.cpu_count() or 1)


# --------------------------------------------------- iterative reconstruction
def transition(f: np.ndarray, n: float | np.ndarray, p: float) -> np.ndarray:
    """Per-attribute 2x2 transition matrices ``[[1 - d, d], [1 - p, p]]``.

    Row/column 0 is "not s", 1 is "s".  ``d`` is the chance that a record
    whose true value is not s publishes s:

    ``d = f_s (1 - p) / (N - f_s)``.

    Derivation (general p, groups of any size): exactly ``f_s`` decoy groups
    contain s, one s record each.  Their other ``|g| - 1`` members publish s
    with probability ``q_g = (1 - p) / (|g| - 1)`` each, so the expected
    number of non-s records publishing s is
    ``sum_g (|g| - 1) q_g = f_s (1 - p)``, out of ``N - f_s`` non-s records.
    A record holding s publishes s with probability p.  As in the paper we
    assume a non-s record's chance does not depend on its QI values (the
    partition sees only the SA).  With ``p = 1/gamma``,
    ``d = f_s (gamma - 1) / (gamma (N - f_s))``.

    The paper's Fig. 6 has ``a_01 = a_23 = f_s / N``: it uses
    ``f_s gamma / N`` as the chance that s is among a non-s record's decoys,
    but that is the chance for any record; given ``t.s != s`` it is
    ``f_s (gamma - 1) / (N - f_s)``.  With the paper's entry the expected
    published count of s is ``f_s (1 + 1/gamma - f_s/N)``, contradicting its
    own Theorem 2 (published count unbiased); with ours it is
    ``p f_s + (N - f_s) d = f_s``.  ``tests/test_splu.py`` checks both
    against the exact expectation of the published counts.

    Parameters
    ----------
    f : ndarray (R,)
        Current count of records holding s.
    n : float or ndarray (R,)
        Table size N.
    p : float
        Probability of publishing the own value.

    Returns
    -------
    ndarray (R, 2, 2)

    References
    ----------
    seed 000 §5.1, Fig. 6 and eqs. (6)-(9) (corrected); §5.2, matrix M_1.
    """
    f = np.asarray(f, dtype=float)
    rest = np.maximum(np.asarray(n, dtype=float) - f, 1e-300)
    d = np.clip(f * (1.0 - p) / rest, 0.0, 1.0)
    out = np.empty(f.shape + (2, 2))
    out[..., 0, 0] = 1.0 - d
    out[..., 0, 1] = d
    out[..., 1, 0] = 1.0 - p
    out[..., 1, 1] = p
    return out


def state_matrix(x: np.ndarray, p: float) -> np.ndarray:
    """Full transition matrix ``A = M_0 ⊗ M_1 ⊗ ... ⊗ M_w`` for states ``x``.

    States are indexed by bits (P, s_1, ..., s_w), P the most significant,
    1 meaning "satisfies": for w = 1 the order is P̄s̄, P̄s, Ps̄, Ps, the
    paper's phi_0..phi_3.  ``M_0`` is the identity (QI values are not
    perturbed); ``M_k`` is :func:`transition` with ``f_k`` the current count
    of states whose bit k is set.

    Parameters
    ----------
    x : ndarray (R, 2**(w+1))
        Current state counts, one row per reconstruction problem.
    p : float

    Returns
    -------
    ndarray (R, K, K)
        ``A[r, i, j]`` = probability that a record in state i is published
        in state j.

    References
    ----------
    seed 000 §5.2 (``M = M_0 ⊗ M_1 ⊗ ... ⊗ M_w``).
    """
    r, k = x.shape
    w = int(round(np.log2(k))) - 1
    n = x.sum(axis=1)
    cube = x.reshape((r,) + (2,) * (w + 1))
    a = np.broadcast_to(np.eye(2), (r, 2, 2))
    for attr in range(1, w + 1):
        axes = tuple(i for i in range(1, w + 2) if i != attr + 1)  # axis 1 is P
        f = cube.sum(axis=axes)[:, 1]
        m = transition(f, n, p)
        size = a.shape[1]
        a = np.einsum("rab,rcd->racbd", a, m).reshape(r, size * 2, size * 2)
    return a


@dataclass(frozen=True, eq=False)
class Reconstruction:
    """Result of :func:`reconstruct`: state counts and how the iteration ended."""

    x: np.ndarray  # (R, K) estimated counts per state
    iterations: np.ndarray  # (R,) steps taken
    converged: np.ndarray  # (R,) stopped by the tolerance, not by the cap


def reconstruct(y: np.ndarray, p: float, tolerance: float = 0.01,
                max_iterations: int = MAX_ITERATIONS) -> Reconstruction:
    """Iterative Bayesian reconstruction of state counts, many problems at once.

    ``x_i <- sum_j y_j a_ij x_i / sum_r a_rj x_r`` (eqs. (13)/(14)) with
    ``A = A(x)`` rebuilt from the current iterate (:func:`state_matrix`),
    starting at ``x = y``.  A problem stops when every component changed by
    at most ``tolerance`` relative to its previous value (the paper's rule,
    §5.1); stopped problems are frozen while the rest go on, until all
    have stopped or ``max_iterations`` is reached.

    Guards (the paper is silent on them): the relative change of a
    component is measured against ``max(x_i, 1)``, i.e. counts below one
    record are compared in absolute terms.  Without this a component
    decaying towards the boundary 0 shrinks by a constant factor per step
    and never meets a relative rule (on Adult, 11% of the seed-000 queries
    ran past 20,000 iterations).  A component at 0 stays at 0 (the update
    is multiplicative); a column with no mass (``sum_r a_rj x_r = 0``)
    contributes nothing.

    Parameters
    ----------
    y : ndarray (R, K)
        Published state counts (K = 4 for one SA, 8 for two).
    p : float
        Probability of publishing the own value.
    tolerance : float
        Relative change below which a component has converged.
    max_iterations : int

    Returns
    -------
    Reconstruction

    Notes
    -----
    Each update keeps the total of each P block (the QI values are not
    perturbed), so ``x_Ps + x_Ps̄ = |P|``.  When the iteration has an
    interior fixed point it solves ``A(x)^T x = y``; for one SA that gives
    ``f_s = O(s)`` (the published count, Theorem 2's MLE),
    ``d = O(s)(1-p)/(N-O(s))`` and ``x_Ps = (y_Ps - d |P|) / (p - d)``.  The
    iteration approaches it slowly (an EM algorithm with much missing
    information), so the paper's 1% rule stops well before it; a
    tolerance near 0 reaches it (tested).  When the linear solution is
    negative the iteration tends to the boundary ``x_Ps = 0`` instead.

    References
    ----------
    seed 000 §5.1, eqs. (11)-(13); §5.2, eq. (14); Agrawal & Srikant's
    iterative reconstruction (the paper's ref. [4]).

    Examples
    --------
    >>> y = np.array([[776.0, 84.0, 124.0, 16.0]])   # P̄s̄, P̄s, Ps̄, Ps
    >>> res = reconstruct(y, p=0.2, tolerance=1e-9)
    >>> round(float(res.x[0, 3]), 3), round(float(closed_form(y, p=0.2)[0, 3]), 3)
    (32.0, 32.0)
    >>> round(float(reconstruct(y, p=0.2).x[0, 3]), 1)   # the paper's 1% rule stops early
    19.5
    """
    y = np.asarray(y, dtype=float)
    x = y.copy()
    rows = len(y)
    iterations = np.zeros(rows, dtype=np.int64)
    converged = np.zeros(rows, dtype=bool)
    active = np.arange(rows)
    xa, ya = x, y
    for step in range(1, max_iterations + 1):
        new = bayes_step(xa, ya, p)
        done = (np.abs(new - xa) <= tolerance * np.maximum(xa, 1.0)).all(axis=1)
        xa = new
        if done.any():
            finished = active[done]
            x[finished] = xa[done]
            iterations[finished] = step
            converged[finished] = True
            keep = ~done
            active, xa, ya = active[keep], xa[keep], ya[keep]
            if len(active) == 0:
                break
    if len(active):
        x[active] = xa
        iterations[active] = max_iterations
    return Reconstruction(x=x, iterations=iterations, converged=converged)


def bayes_step(x: np.ndarray, y: np.ndarray, p: float) -> np.ndarray:
    """One update of eq. (13)/(14) without forming the K x K matrix.

    ``A = I ⊗ M_1 ⊗ ... ⊗ M_w`` acts on the state cube one attribute axis
    at a time, and each 2x2 ``M_k = [[1-d, d], [1-p, p]]`` has rows summing
    to 1, so ``A^T x`` and ``A r`` take a few element-wise operations per
    attribute.  Same result as :func:`state_matrix` with two ``einsum``
    (tested), about four times faster on small batches.
    """
    r, k = x.shape
    w = k.bit_length() - 2
    shape = (r,) + (2,) * (w + 1)
    cube = x.reshape(shape)
    n = x.sum(axis=1)
    ds = []
    for attr in range(w):
        f = cube[_along(w, attr, 1)].reshape(r, -1).sum(axis=1)
        d = np.minimum(f * (1.0 - p) / np.maximum(n - f, 1e-300), 1.0)
        ds.append(d.reshape((r,) + (1,) * w))
    # denominators sum_r a_rj x_r = (A^T x)_j, one attribute axis at a time
    den = cube
    for attr, d in enumerate(ds):
        a0, a1 = den[_along(w, attr, 0)], den[_along(w, attr, 1)]
        den = np.empty(shape)
        den[_along(w, attr, 1)] = d * a0 + p * a1
        den[_along(w, attr, 0)] = a0 + a1 - den[_along(w, attr, 1)]
    ratio = np.divide(y.reshape(shape), den, out=np.zeros(shape), where=den > 0)
    # sum_j a_ij ratio_j = (A ratio)_i
    back = ratio
    for attr, d in enumerate(ds):
        a0, a1 = back[_along(w, attr, 0)], back[_along(w, attr, 1)]
        diff = a1 - a0
        back = np.empty(shape)
        back[_along(w, attr, 0)] = a0 + d * diff
        back[_along(w, attr, 1)] = a0 + p * diff
    return x * back.reshape(r, k)


def _along(w: int, attr: int, bit: int) -> tuple:
    """Index of the state cube (rows, P, s_1..s_w) fixing attribute ``attr``'s bit."""
    return (slice(None),) * (attr + 2) + (bit,) + (slice(None),) * (w - 1 - attr)


def closed_form(y: np.ndarray, p: float) -> np.ndarray:
    """The interior fixed point of :func:`reconstruct`: ``x = A(y)^{-T} y``.

    At an interior fixed point ``A(x)^T x = y``.  Because every ``M_k`` has
    rows summing to 1, the published count of ``s_k`` is then
    ``p f_k + d_k (N - f_k) = f_k``: the fixed point has ``f_k = O(s_k)``,
    so ``A(x) = A(y)`` and the fixed point is one linear solve.  For one SA
    it is ``x_Ps = (y_Ps - d |P|) / (p - d)`` with
    ``d = O(s)(1-p)/(N-O(s))``.  Not clipped (may be negative or exceed
    |P|); the iteration, which keeps counts non-negative, tends to it when
    it is interior and to the boundary otherwise.  Used to check the
    iteration and the bias of the estimators.

    Parameters
    ----------
    y : ndarray (R, K)
        Published state counts (:func:`state_counts`, :func:`joint_state_counts`).
    p : float

    Returns
    -------
    ndarray (R, K)

    References
    ----------
    seed 000 §5.1, eq. (10) (``Pr(r_i|x) = sum_j a_ji x_j / N``) read as a
    linear system.
    """
    y = np.asarray(y, dtype=float)
    a = state_matrix(y, p)
    return np.linalg.solve(np.swapaxes(a, 1, 2), y[..., None])[..., 0]


# ---------------------------------------------------------- privacy numbers
def published_count_pmf(f: int, gamma: int, p: float, size: int | None = None) -> np.ndarray:
    """Distribution of the published count of a value held by ``f`` records.

    With groups of gamma, the f groups containing s contribute
    ``Binomial(f, p)`` (the s records) plus ``Binomial(f (gamma-1), q)``
    (their decoys), ``q = (1-p)/(gamma-1)``; for ``p = 1/gamma`` this is
    ``Binomial(gamma f, 1/gamma)`` (seed 000 §4).  Groups of gamma + 1
    (at most gamma - 1 of them) are ignored.

    ``size`` (default gamma): the groups' size, for a count whose records all
    sit in groups of ``size`` (e.g. gamma + 1), with ``q = (1-p)/(size-1)``.

    Returns
    -------
    ndarray
        ``pmf[x]`` for ``x = 0 .. size f``.
    """
    size = gamma if size is None else int(size)
    from scipy import stats  # here: importing the mechanisms (every command) stays light

    q = (1 - p) / (size - 1)
    own = stats.binom.pmf(np.arange(f + 1), f, p)
    k = f * (size - 1)
    decoy = stats.binom.pmf(np.arange(k + 1), k, q)
    return np.convolve(own, decoy)


def privacy_tail(f, gamma: int, p: float, eps: float, size: int | None = None) -> np.ndarray:
    """``T_p(f)``: probability that a count f is published with relative error beyond eps.

    For ``p = 1/gamma`` this is :func:`core.bounds.splu.privacy_tail`
    (imported lazily; computed here when that module is unavailable).  For
    other p the published count is a sum of two binomials
    (:func:`published_count_pmf`) and the tails are summed exactly.  The
    boundary convention (``ceil((1-eps) f) .. floor((1+eps) f)`` counts as
    close) is the one of the bounds module.

    References
    ----------
    seed 000 Lemma 2, Theorem 4; MECHANISMS.md section 1.
    """
    f = np.atleast_1d(np.asarray(f, dtype=np.int64))
    if np.isclose(p, 1.0 / gamma) and size in (None, gamma):
        try:
            from ..bounds.splu import privacy_tail as exact

            return np.asarray(exact(f, gamma, eps), dtype=float)
        except ImportError:  # pragma: no cover - the bounds module is optional here
            pass
    lo = np.ceil((1.0 - eps) * f - 1e-9).astype(np.int64)
    hi = np.floor((1.0 + eps) * f + 1e-9).astype(np.int64)
    out = np.empty(len(f))
    for i, fi in enumerate(f):  # alpha values at most: not a per-record loop
        pmf = published_count_pmf(int(fi), gamma, p, size)
        close = pmf[max(lo[i], 0): hi[i] + 1].sum()
        out[i] = max(0.0, 1.0 - close)
    return out


# ------------------------------------------------------------- the mechanism
class SPLU(Mechanism):
    """SPLU-Gen as a :class:`core.mechanisms.base.Mechanism`.

    References
    ----------
    seed 000 §3.1 (Algorithm SPLU-Gen), §4-5 (estimation); MECHANISMS.md section 1.
    """

    name = "splu"
    title = "SPLU-Gen (small-sum privacy, large-sum utility)"
    paper = "seed 000 (Fu et al., small sum privacy and large sum utility)"
    summary = ("Records are split into secret groups of γ different sensitive values, and every record "
               "publishes a value drawn from its group: its own with probability p (1/γ by default), another "
               "group value otherwise. Counts of many people come out close to the truth; counts of a few "
               "people are hidden in noise. The groups are not published.")
    order = 20
    params = (
        Param("gamma", "γ", "Decoy group size: each record's published value is drawn from a secret group of "
              "γ different sensitive values.",
              5, kind="int", low=2, high=50, step=1, safer="higher",
              paper="seed 000 §6.2.3.2: γ = 5 (§6.6 recommends 5 to 10)"),
        Param("p", "p", "Chance a record publishes its own value (the rest is split evenly over its group's "
              "other values). Empty = 1/γ, the paper's choice; must be at least 1/γ.",
              None, low=0, high=1, closed="right", optional=True, step=0.01, safer="lower",
              paper="seed 000 §3.1 Step 3: p = q = 1/γ"),
        Param("tolerance", "τ", "Estimation stops when no reconstructed count changes by more than this "
              "fraction in one iteration.",
              0.01, low=0, high=0.5, closed="right", step=0.001,
              paper="seed 000 §5.1: 1% relative change"),
        Param("estimator", "est", "How counts of (condition AND sensitive value) are estimated: iterative "
              "Bayesian reconstruction, or the count in the published table as is.",
              "bayes", kind="choice", choices=("bayes", "direct"),
              paper="seed 000 §5.1 eq. (13); direct = count in D′ (Lemma 4)"),
        Param("sa2", "S₂", "Optional second sensitive column, randomised independently with its own decoy "
              "groups (same γ).",
              None, kind="text", optional=True,
              paper="seed 000 §5.2, §6.4 (Occupation with Age)"),
        Param("partition", "layout", "How records are put in decoy groups: random (which values share a group "
              "is drawn with the seed, as the estimator assumes) or sorted (records sorted by value, fixed "
              "pairings; the deterministic construction).",
              "random", kind="choice", choices=("random", "sorted"),
              paper="seed 000 §3.1 Step 2 leaves it open (Anatomy's loop); see the module docstring"),
        Param("eps", "ε", "Small-sum privacy: how far off (as a share of the true count) a small count must be "
              "published to count as hidden.",
              PRIVACY_EPS, low=0, high=1, closed="neither", step=0.01, safer="higher",
              paper="seed 000 Example 2, §4.2: ε = 0.3"),
        Param("t_p", "T_p", "Small-sum privacy: the smallest acceptable chance that a small count is published "
              "that far off.",
              PRIVACY_TP, low=0, high=1, closed="neither", step=0.01, safer="higher",
              paper="seed 000 §4.2: T_p = 0.6 ((0.3, 0.6, 3)-privacy at γ = 10)"),
        Param("alpha", "α", "Small-sum privacy: counts of at most α records are small and must stay hidden.",
              PRIVACY_ALPHA, kind="int", low=1, high=100, step=1, safer="higher",
              paper="seed 000 §4.2: α = 3"),
    )
    main_param = "gamma"
    sweep = (2, 3, 4, 5, 7, 10)
    bounds = ("splu-privacy", "splu-utility")

    # ---------------------------------------------------------- parameters
    @staticmethod
    def resolved_p(values: Mapping[str, Any]) -> float:
        return 1.0 / values["gamma"] if values.get("p") is None else float(values["p"])

    def check_params(self, values: dict[str, Any]) -> None:
        gamma, p = values["gamma"], values["p"]
        if p is not None and p < 1.0 / gamma - 1e-12:
            raise ParameterError(
                f"The 'p' parameter of splu must be a number in [1/γ, 1] = [{1 / gamma:.4g}, 1] for γ = {gamma} "
                f"(below 1/γ a record would publish its own value less often than each decoy). Got {p:g}."
            )

    def _second(self, data: Dataset, name: str) -> Column:
        if name == data.sa:
            raise ParameterError(f"The 'sa2' parameter of splu must name a column other than the sensitive "
                                 f"attribute '{data.sa}'. Got {clip(name)}.")
        if name in data.qi:
            raise ParameterError(f"The 'sa2' parameter of splu must not be a QI column: '{clip(name)}' would be "
                                 f"published both exactly and randomised. Choose it out of the QIs or pick another.")
        col = data.column(name)
        if col.size < 2:
            raise ParameterError(f"The second sensitive attribute '{clip(name)}' has a single value; "
                                 "there is nothing to protect.")
        return col

    def derived(self, data: Dataset, values: Mapping[str, Any]) -> dict[str, Any]:
        gamma = values["gamma"]
        p = self.resolved_p(values)
        best = largest_feasible(data.sa_counts)
        out: dict[str, Any] = {
            "p": p,
            "q": (1 - p) / (gamma - 1),
            "q_groups_of_gamma_plus_1": (1 - p) / gamma,
            "largest_feasible_gamma": best,
            "groups": data.n // gamma,
        }
        if values.get("sa2"):
            try:
                col = self._second(data, values["sa2"])
                out["largest_feasible_gamma"] = min(best, largest_feasible(np.bincount(col.codes)))
            except WorkbenchError:  # shown live: a bad sa2 is reported by check()
                pass
        return out

    # ---------------------------------------------------------- protocol
    def check(self, data: Dataset, values: Mapping[str, Any]) -> None:
        gamma = values["gamma"]
        # the SA counts, not the records: on the Dask engine the data is its counts (no record arrays)
        check_distinct_counts("gamma", gamma, np.asarray(data.sa_counts), data.sa_labels)
        if values.get("sa2"):
            col = self._second(data, values["sa2"])
            try:
                check_distinct_groups("gamma", gamma, col.codes, col.labels, col.size)
            except NotEligible as exc:
                raise NotEligible(f"For the second sensitive attribute '{col.name}': {exc}",
                                  suggestion=exc.suggestion) from None

    planned = True
    #: its guarantee reads only gamma, p and the group sizes, all decided by the plan: the nearest-setting
    #: search judges a candidate without drawing its records (core.mechanisms.setting_verdict)
    verdict_from_plan = True

    def plan(self, summary: Combos, values: Mapping[str, Any], seed: int, prefix: str = "splu") -> SPLUPlan:
        """Algorithm SPLU-Gen as a plan: decoy groups from the SA counts, the draw per record; publish the table, gamma and p.

        The groups are :class:`DecoyLayout`'s (``partition = "random"``: keyed
        random permutations of each value's run and of each column's rows,
        drawn from the seed; ``"sorted"``: the deterministic layout); the
        draw is :class:`SPLUPlan`'s.  ``prefix`` names the purposes of the
        draws (``"splu2"`` for a second SA, so its draws are independent).

        Published metadata: gamma, the resolved p, the number of groups and
        how many have each size (residual records are kept in groups of
        gamma + 1, with a note), and the same for a second SA.  The
        partition itself is not published.

        Privacy checks (manifest):

        * ``max_posterior = p``: an adversary whose prior about a record is
          only the table's value counts, who knows the algorithm and even
          the decoy groups, believes the record's published value is its
          true value with probability ``f_v p / E[O(v)] = p``, and any other
          value w with at most ``q``.  Background knowledge linking QIs to
          the SA can do better; there is no differential-privacy-style
          bound, since a value outside a record's group is never published.
        * ``small_sum_privacy``: ``T_p(f)`` for every small count
          ``f = 1..alpha`` at ``eps`` (the parameters) and its minimum (Lemma 2,
          Theorem 4); by Lemma 3 it carries over to ``P AND s``.  These
          are data-independent on purpose: the table's actual smallest
          counts are exactly what SPLU protects, so the manifest, which
          is published with the table, does not name them.

        References
        ----------
        seed 000 §3.1 Steps 1-4, §4.2, §5.3; MECHANISMS.md section 1.
        """
        gamma = values["gamma"]
        p = self.resolved_p(values)
        n = summary.n
        layout = DecoyLayout(summary.sa_counts, gamma, seed, values["partition"] == "random", prefix)
        sizes = layout.size_counts()
        published: dict[str, Any] = {"gamma": gamma, "p": p, "groups": layout.r, "group_sizes": sizes,
                                     "partition_published": False}
        notes = []
        residual = n - gamma * layout.r
        if residual:
            notes.append(f"N = {n:,} is not a multiple of γ = {gamma}: the {residual} residual record"
                         f"{'s were' if residual > 1 else ' was'} kept in larger groups (the paper deletes them); "
                         f"group sizes: {', '.join(f'{c:,} of {s}' for s, c in sizes.items())}.")
        state: dict[str, Any] = {"p": p, "gamma": gamma, "sa2": None}
        eps, alpha = float(values.get("eps", PRIVACY_EPS)), int(values.get("alpha", PRIVACY_ALPHA))
        f = np.arange(1, alpha + 1)
        tail = privacy_tail(f, gamma, p, eps)
        binding = int(np.argmin(tail))
        privacy = {
            "max_posterior": p,
            "own_to_decoy_ratio": p / ((1 - p) / (gamma - 1)),
            "small_sum_privacy": {"eps": eps, "alpha": alpha, "T_p": float(tail[binding]),
                                  "binding_count": int(f[binding]),
                                  "T_p_by_count": {str(int(k)): float(t) for k, t in zip(f, tail)}},
            "partition_published": False,
        }
        memo, data = _memo.bind(summary), _memo.local_data(summary)
        ranked = None
        if memo is not None and layout.mixed:
            ranked = memo((f"{prefix}/runs", int(seed)), lambda: whole_table_runs(data, layout))
        return SPLUPlan(seed, summary.sa_name, layout, p, prefix, tables=data is not None, ranked=ranked,
                        labels={summary.sa_name: summary.sa_labels},
                        published=published, privacy=privacy, notes=tuple(notes), state=state)

    def publish(self, data: Dataset, values: Mapping[str, Any], seed: int, batch_rows: int | None = None) -> Published:
        """The local engine's release; a second SA (``sa2``) is a second plan on that column (purposes ``splu2/...``).

        The second column's records are ranked and drawn by their own plan
        over the same rows; the published order depends only on the seed
        and N, so its column lines up with the first release's rows, and the
        first SA's release is the same with or without ``sa2``.
        """
        from ..engine import local

        out = local.publish(data, self, values, seed, batch_rows)
        if not values.get("sa2"):
            return out
        col = self._second(data, values["sa2"])
        twin = dataclasses.replace(data, sa=col.name, sa_codes=col.codes, sa_labels=col.labels)
        combos2 = Combos.of(twin)
        plan2 = self.plan(combos2, values, seed, prefix="splu2")
        sa2 = local.run(twin, plan2, batch_rows, combos2).tables["release"].columns[col.name]
        table = out.tables["release"]
        table = CodedTable(columns={**table.columns, col.name: sa2}, labels={**table.labels, col.name: col.labels})
        published = dict(out.published)
        published["second_sensitive"] = {"column": col.name, "groups": plan2.layout.r,
                                         "group_sizes": plan2.layout.size_counts()}
        notes = (*out.notes, f"'{col.name}' is a second sensitive attribute, randomised independently with its own "
                             f"decoy groups of γ = {values['gamma']} (seed 000 §5.2).")
        return dataclasses.replace(out, tables={"release": table}, published=published, notes=notes,
                                   state={**out.state, "sa2": col.name})

    # ---------------------------------------------------------- guarantee
    def promise(self, values: Mapping[str, Any]) -> str:
        return (f"(ε, T_p, α) small-sum privacy with ε = {values['eps']:g}, T_p = {values['t_p']:g}, "
                f"α = {values['alpha']}: every count of at most α records is published off by at least ε of "
                f"itself with probability at least T_p (seed 000 Definition 2, Theorem 4).")

    def small_sum(self, release: Release, values: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """``(f, T_p(f))`` for f = 1..alpha, the smallest over the group sizes the release published."""
        gamma, p = int(release.published["gamma"]), float(release.published["p"])
        f = np.arange(1, int(values["alpha"]) + 1)
        sizes = sorted(int(k) for k in release.published.get("group_sizes", {str(gamma): 1}))
        tails = [privacy_tail(f, gamma, p, float(values["eps"]), k) for k in sizes]
        return f, np.min(tails, axis=0)

    def guarantee(self, data: Dataset, values: Mapping[str, Any], release: Release) -> G.Verdict:
        """T_p(f) for f = 1..alpha on the release's gamma, p and group sizes against the required T_p."""
        f, tail = self.small_sum(release, values)
        i = int(np.argmin(tail))
        need = float(values["t_p"])
        short = tail < need - 1e-12
        figures = {"T_p": float(tail[i]), "binding_count": int(f[i]), "T_p_required": need,
                   "gamma": int(release.published["gamma"]), "p": float(release.published["p"])}
        fail = None
        if short.any():
            fail = G.failure(f"T_p ≥ {need:g} (chance a count f ≤ α = {values['alpha']} is published off by ≥ "
                             f"ε = {values['eps']:g})", float(tail[i]), need, int(short.sum()), len(f),
                             "small counts f = 1..α", upper=False)
        return G.judge(self.name, self.promise(values), figures, [fail])

    def nearest(self, data: Dataset, values: Mapping[str, Any], verdict: G.Verdict):
        """p = 1/γ first (when p was raised), then larger γ up to the largest feasible (T_p grows with γ)."""
        if values.get("p") is not None:
            yield {"p": None}
        best = largest_feasible(data.sa_counts)
        for gamma in range(int(values["gamma"]) + 1, min(best, 50) + 1):
            yield {"gamma": gamma, "p": None} if values.get("p") is not None else {"gamma": gamma}

    def estimate(self, release: Release, batch: QueryBatch, rng: np.random.Generator) -> np.ndarray:
        """Estimated count of ``P AND SA in S`` for every query of ``batch``.

        ``estimator = "direct"``: the published count ``O(P, S)``.
        ``estimator = "bayes"``: for each selected value s, the published
        state counts ``y = (N - |P| - O(s) + O(P,s), O(s) - O(P,s),
        |P| - O(P,s), O(P,s))`` (P̄s̄, P̄s, Ps̄, Ps) are reconstructed with
        :func:`reconstruct` and ``x_Ps`` is the estimate; a query selecting
        several values gets the sum of its per-value estimates.  All
        (query, value) pairs are reconstructed together.

        References
        ----------
        seed 000 §5.1, eq. (13); Lemma 4 (direct count).
        """
        return self.estimate_many(release, [batch], rng)[0]

    def estimate_grid(self, release: Release, conditions: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        """:meth:`estimate` of the grid, each condition counted once: the same (query, value) pairs, in its order."""
        records = published_records(release)
        counts = grid_counts(records, conditions)  # (C, m)
        if release.params.get("estimator", "bayes") == "direct":
            return grid_select(counts)
        c = len(counts)
        n = records.total
        o_ps = counts.ravel()  # pair (condition, value) in the grid's query order
        o_s = records.target_totals[np.tile(np.arange(m), c)]
        size = np.repeat(counts.sum(axis=1), m)
        y = np.stack([n - size - o_s + o_ps, o_s - o_ps, size - o_ps, o_ps], axis=1)
        x = reconstruct(y, release.state["p"], release.params.get("tolerance", 0.01)).x[:, 3]
        return np.bincount(np.arange(c * m), weights=x, minlength=c * m).reshape(c, m)

    def estimate_many(self, release: Release, batches, rng: np.random.Generator) -> list[np.ndarray]:
        """All batches' (query, value) pairs reconstructed in one vectorised iteration.

        One call instead of one per batch: the iteration runs until its
        slowest pair converges, so batching it once costs the slowest pair
        of the workload, not the sum over batches.
        """
        if release.params.get("estimator", "bayes") == "direct":
            return [observed(release, b)[0] for b in batches]
        parts = [state_counts(release, b) for b in batches]
        if not parts:
            return []
        y = np.concatenate([y for _, y in parts])
        res = reconstruct(y, release.state["p"], release.params.get("tolerance", 0.01))
        out, start = [], 0
        for (q, yb), b in zip(parts, batches):
            x = res.x[start:start + len(yb), 3]
            start += len(yb)
            out.append(np.bincount(q, weights=x, minlength=len(b)))
        return out


def state_counts(release: Release, batch: QueryBatch) -> tuple[np.ndarray, np.ndarray]:
    """Published counts of the four states for every selected (query, value) pair.

    Returns
    -------
    q : ndarray (R,)
        Query of each pair (a query selecting several values has several).
    y : ndarray (R, 4)
        ``(N - |P| - O(s) + O(P,s), O(s) - O(P,s), |P| - O(P,s), O(P,s))``:
        P̄s̄, P̄s, Ps̄, Ps, from the published table only.
    """
    records = published_records(release)
    counts = records.counts(batch)
    q, s = np.nonzero(batch.sa)
    n = records.total
    o_ps = counts[q, s]
    o_s = records.target_totals[s]
    size = counts.sum(axis=1)[q]
    return q, np.stack([n - size - o_s + o_ps, o_s - o_ps, size - o_ps, o_ps], axis=1)


def joint_records(release: Release) -> Records:
    """Published records with the pair (SA, second SA) as one target code ``s1 * m2 + s2``."""
    cache = release.state.setdefault("_records", {})
    if "splu-joint" not in cache:
        sa2 = release.state.get("sa2")
        if not sa2:
            raise ParameterError("This SPLU release has no second sensitive attribute; sanitize with "
                                 "sa2=COLUMN to estimate joint counts.")
        t = release.tables["release"]
        sa = release.source["sensitive"]
        m1, m2 = len(t.labels[sa]), len(t.labels[sa2])
        target = t.columns[sa].astype(np.int64) * m2 + t.columns[sa2]
        cache["splu-joint"] = table_records(release, target, m1 * m2)
    return cache["splu-joint"]


def estimate_two(release: Release, batch: QueryBatch, sa2: np.ndarray,
                 estimator: str | None = None, tolerance: float | None = None) -> np.ndarray:
    """Estimated count of ``P AND S1 in A AND S2 in B`` for every query (two sensitive attributes).

    The 8 states are the bits (P, s1, s2) (P most significant); their
    published counts come by inclusion-exclusion from ``O(P, s1, s2)``,
    ``O(P, s1)``, ``O(P, s2)``, ``|P|`` and the table-wide counts, and are
    reconstructed with the transition matrix ``I ⊗ M_1 ⊗ M_2``
    (:func:`state_matrix`; each ``M_k`` is the corrected single-attribute
    matrix, and the two attributes are randomised independently, so the
    tensor product is exact given each record's state).  Queries selecting
    several values of either attribute get the sum over value pairs.

    Parameters
    ----------
    release : Release
        An ``splu`` release sanitized with ``sa2`` set.
    batch : QueryBatch
        QI predicates; ``batch.sa`` selects values of the first SA.
    sa2 : ndarray (Q,) of int or (Q, m2) of bool
        Selected values of the second SA (codes into the release's labels
        for that column, ``release.tables["release"].labels[name]``).
    estimator, tolerance : optional
        Override the release's ``estimator`` ("bayes" or "direct") and
        ``tolerance``.

    Returns
    -------
    ndarray (Q,)

    References
    ----------
    seed 000 §5.2, eq. (14) (``K = 2^(w+1)`` states, ``M = M_0 ⊗ M_1 ⊗ M_2``); §6.4.
    """
    return estimate_two_many(release, [batch], [sa2], estimator, tolerance)[0]


def estimate_two_many(release: Release, batches, sa2s, estimator: str | None = None,
                      tolerance: float | None = None) -> list[np.ndarray]:
    """:func:`estimate_two` for several batches, reconstructed in one vectorised iteration.

    As :meth:`SPLU.estimate_many` does for one SA: the iteration runs until
    its slowest (query, value pair) converges, so one call for a whole joint
    workload costs that, not the sum over its batches.  ``sa2s[k]`` are the
    second-SA values of ``batches[k]``.
    """
    estimator = estimator or release.params.get("estimator", "bayes")
    tolerance = tolerance or release.params.get("tolerance", 0.01)
    parts = [joint_state_counts(release, b, v) for b, v in zip(batches, sa2s)]
    if not parts:
        return []
    y = np.concatenate([y for _, y in parts])
    x = y[:, 7] if estimator == "direct" else reconstruct(y, release.state["p"], tolerance).x[:, 7]
    out, start = [], 0
    for (q, yb), b in zip(parts, batches):
        out.append(np.bincount(q, weights=x[start:start + len(yb)], minlength=len(b)))
        start += len(yb)
    return out


def joint_state_counts(release: Release, batch: QueryBatch, sa2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Published counts of the 8 states (P, s1, s2) for every selected (query, s1, s2).

    Returns
    -------
    q : ndarray (R,)
        Query of each value pair.
    y : ndarray (R, 8)
        Counts indexed by the bits (P, s1, s2), P most significant
        (index 7 is ``P AND s1 AND s2``), by inclusion-exclusion from
        ``O(P, s1, s2)``, ``O(P, s1)``, ``O(P, s2)``, ``|P|`` and the
        table-wide counts of the published table.
    """
    records = joint_records(release)
    name2 = release.state["sa2"]
    t = release.tables["release"]
    m1 = len(t.labels[release.source["sensitive"]])
    m2 = len(t.labels[name2])
    sa2 = np.asarray(sa2)
    if sa2.ndim == 1:
        mask2 = np.zeros((len(sa2), m2), dtype=bool)
        mask2[np.arange(len(sa2)), sa2] = True
    else:
        mask2 = sa2.astype(bool)
    if mask2.shape != (len(batch), m2):
        raise ParameterError(f"sa2 must give one row per query ({len(batch)}) over {m2} values of '{name2}'; "
                             f"got shape {sa2.shape}.")
    n = records.total
    totals = records.target_totals.reshape(m1, m2)
    tot1, tot2 = totals.sum(axis=1), totals.sum(axis=0)
    qs, ys = [], []
    step = max(1, _JOINT_CELLS // (m1 * m2))
    for begin in range(0, len(batch), step):  # memory chunks, not one query at a time
        rows = np.arange(begin, min(len(batch), begin + step))
        cube = records.counts(batch.take(rows)).reshape(len(rows), m1, m2)
        q, s1, s2 = np.nonzero(batch.sa[rows][:, :, None] & mask2[rows][:, None, :])
        a = cube[q, s1, s2]
        b1 = cube.sum(axis=2)[q, s1]
        b2 = cube.sum(axis=1)[q, s2]
        size = cube.sum(axis=(1, 2))[q]
        inside = np.stack([size - b1 - b2 + a, b2 - a, b1 - a, a], axis=1)  # (s1, s2) = 00, 01, 10, 11
        t12 = totals[s1, s2]
        whole = np.stack([n - tot1[s1] - tot2[s2] + t12, tot2[s2] - t12, tot1[s1] - t12, t12], axis=1)
        qs.append(rows[q])
        ys.append(np.concatenate([whole - inside, inside], axis=1))
    if not qs:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 8))
    return np.concatenate(qs), np.concatenate(ys)


MECHANISMS = [SPLU()]
