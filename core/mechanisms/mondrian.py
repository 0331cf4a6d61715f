"""Mondrian: multidimensional generalization with k-anonymity and l-diversity (seed 004's baseline).

The table is cut recursively (LeFevre, DeWitt & Ramakrishnan, ICDE 2006,
"strict" multidimensional partitioning): a partition is cut on the QI whose
range, normalised by the whole table's range, is widest, at the median;
the cut is *allowable* when both sides have at least k records and at
least l distinct sensitive values (distinct l-diversity, Machanavajjhala
et al.).  When the widest attribute has no allowable cut the next widest is
tried; a partition with no allowable cut on any attribute becomes a group.
Every group's QI values are then published generalized: a numeric QI as
the range ``[lo, hi]`` of its values in the group (seed 004 Fig. 1(b)
prints ``[20, 60]``), a categorical QI as the set of its values in the group
(``{Female, Male}``; a single value is printed alone).  The sensitive value
of every record is published as it is.

Choices where the papers are silent (documented here, tested):

* **Categorical QIs are cut on ordered codes** (their labels in sorted
  order), exactly like numeric ones: the median code, left = codes below
  it.  No generalization hierarchy is needed; the published generalization
  of a categorical QI is the set of values present in the group (a
  hierarchy-free set generalization).  The span of a categorical QI is its
  code range over the whole table's code range.
* **Median and ties** as in the common Python implementation (anonypy,
  pandas median): the cut value is the ``floor(n/2)``-th smallest (0-based)
  value of the partition and left = values strictly below it, so a
  partition whose lower half is one repeated value may still be cut unevenly,
  and a constant attribute cannot be cut.  Ties between equally wide
  attributes go to the earlier QI.  With these rules our partition is the
  same as anonypy's ``Mondrian.partition`` given the codes as integers
  (checked in tests/test_mondrian.py).
* **Parameters**: ``beta`` (default 0.1, the value seed 004 uses with
  alpha = 0.1) sets ``l = ceil(1/beta)`` as the issue asks, so the baseline
  and Ambiguity are compared at the same diversity (Theorem 5);
  ``l`` may be given directly instead; ``k`` defaults to 10, which
  ``l = 10`` distinct values already imply, so at the defaults the groups
  are decided by diversity, and a larger k makes them coarser.
* **Estimation** (seed 004 §6, last paragraph): a query's count in a group
  is the group's count of the selected SA values times, for each
  constrained QI, the share of the group's generalized domain that the
  condition selects: uniformity inside the range (numeric) or value set
  (categorical).  The *domain* of a numeric range is the set of the
  attribute's values in the loaded table that lie in ``[lo, hi]`` (the
  codes lo..hi): on Adult, where every age 17-90 occurs, this is uniformity
  over the integers.  The paper's own example (§1: ``Age >= 45`` on
  ``[20, 60]`` estimated as (60 - 45)/(60 - 20) = 3/8) measures continuous
  length, which would give an equality query (``Age = 60``) zero; on the
  4-value toy age column our discrete reading gives 3/4.
* **Presence** (seed 004 Theorem 1 applied to a generalized group): an
  adversary who knows a group's box knows that |G| of the
  ``prod_i |dom_i(G)|`` QI tuples inside it are in the table, so
  ``Pr(t in T) = |G| / prod_i |dom_i(G)|`` (capped at 1: a group may hold
  more records than distinct tuples).  **Association** (Theorem 2):
  ``c / |G|`` for the most frequent SA value c of the group.  Distinct
  l-diversity does not bound it by beta = 1/l; the manifest says how many
  groups exceed beta.

Built from counts (issue 15, :mod:`core.engine.protocol`): the partition
runs on the table's distinct (QI..., SA) combinations weighted by their
counts (:func:`combo_partition`; a cut compares QI codes only, so the
records of a QI combination always share a group and the partition is the
records' own), and each record finds its group from its QI combination;
nothing in Mondrian is drawn except the published group ids and order.

Guarantee (:meth:`Mondrian.guarantee`): what its parameters name, checked
on the published ``groups`` table: k-anonymity (every group has at least k
records), distinct l-diversity (at least l values) and, because the
workbench sets Mondrian by seed 004's beta to compare it with Ambiguity at
the same beta, beta-association (no value above a share beta of its
group).  Distinct l-diversity does not imply the last one: on Adult at the
defaults all 462 groups exceed beta = 0.1.  No partition meets it while the
table's most frequent value has a share above beta, so the nearest setting
that meets it raises beta to that share (rounded up to 0.005) if needed and
then finds the smallest k (bisection on the partition alone) whose groups
all stay at or below beta.

References
----------
LeFevre, DeWitt, Ramakrishnan, "Mondrian multidimensional k-anonymity"
(ICDE 2006); seed 004 (Hui Wang, JCST 2010) §1, §6 and Fig. 13-14 (the
generalization baseline); MECHANISMS.md section 5, last paragraph.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping

import numpy as np
from scipy import sparse

from .. import guarantee as G
from ..counting import QueryBatch, select, unique_rows
from ..errors import NotEligible
from ..params import Param
from .. import shuffle
from ..engine import memo as _memo
from ..engine.combos import Combos
from ..engine.protocol import Chunk, Plan
from ..release import CodedTable, Release
from ..table import Dataset
from .base import Mechanism, grid_of_rows

#: histograms (partitions x domain) larger than this switch to a sort per attribute
_HIST_CELLS = 20_000_000
#: groups x queries evaluated at once by the estimator
_EST_CELLS = 8_000_000
#: categorical memberships of at most this many (group, value) cells are kept dense for estimation
_DENSE_SETS = 4_000_000


# ------------------------------------------------------------------ the partition
@dataclass(frozen=True, eq=False)
class Partition:
    """Mondrian groups: ``group[r]`` is record r's group (0..n_groups-1, in the order they were finished)."""

    group: np.ndarray
    n_groups: int
    levels: int


def required_l(beta: float) -> int:
    """l = ceil(1/beta), with a tolerance so 1/0.1 is 10, not 11."""
    return int(math.ceil(1.0 / beta - 1e-9))


def mondrian_partition(codes, positions, sa: np.ndarray, m: int, k: int, l: int,
                       weights: np.ndarray | None = None) -> Partition:
    """Strict multidimensional Mondrian with allowable cuts = k records and l distinct SA values per side.

    Parameters
    ----------
    codes : sequence of int arrays (n,)
        QI codes (sorted labels), one array per QI.
    positions : sequence of float arrays (D_j,)
        Where each code lies on its attribute's axis, for the spans: the
        numeric label for numeric QIs, the code itself for categorical ones.
    sa : int array (n,)
        SA codes in 0..m-1.
    k, l : int
        Smallest group size and smallest number of distinct SA values per group.
    weights : int array (n,), optional
        Records each row stands for (default 1 each).  Rows that are the
        distinct (QI..., SA) combinations of a table with their counts
        (:class:`core.engine.combos.Combos`) give the table's partition:
        a cut compares QI codes only, so records with the same QI values
        always share a group, and sizes, medians and distinct values are
        the same counted by weight.

    All partitions of one level are cut at once (histograms per partition
    and attribute, one ``bincount`` each), so the cost is a few passes over
    the records per level, about log2(n / k) levels.
    """
    n = len(sa)
    d = len(codes)
    positions = [np.asarray(p, dtype=float) for p in positions]
    domains = [len(p) for p in positions]
    scale = np.empty(d)
    for j in range(d):
        if n:
            scale[j] = positions[j][np.max(codes[j])] - positions[j][np.min(codes[j])]
        else:
            scale[j] = 0.0
    # the rows still being cut, compacted as partitions finish: codes (rows x QIs), SA, weights
    mat = np.empty((n, d), dtype=np.int32 if max(domains, default=0) < 2**31 else np.int64)
    for j in range(d):
        mat[:, j] = codes[j]
    sa_r = np.asarray(sa, dtype=np.int64)
    w_r = np.ones(n) if weights is None else np.asarray(weights, dtype=np.int64).astype(np.float64)
    group = np.full(n, -1, dtype=np.int64)
    rows = np.arange(n)
    part = np.zeros(n, dtype=np.int64)
    n_part = 1 if n else 0
    n_groups = 0
    levels = 0
    while n_part:
        levels += 1
        units = np.bincount(part, minlength=n_part)
        sizes = np.bincount(part, weights=w_r, minlength=n_part).astype(np.int64)
        half = sizes // 2
        spans = np.zeros((n_part, d))
        ok = np.zeros((n_part, d), dtype=bool)
        thresholds = np.zeros((n_part, d), dtype=np.int64)
        seen_base = part * (2 * m) + sa_r  # (partition, right side, SA value); + m on the left side
        for j in range(d):
            c = mat[:, j]
            dom = domains[j]
            if n_part * dom <= _HIST_CELLS:
                idx = part * dom
                idx += c
                hist = np.bincount(idx, weights=w_r, minlength=n_part * dom).reshape(n_part, dom)
                del idx
                present = hist > 0
                lo = present.argmax(axis=1)
                hi = dom - 1 - present[:, ::-1].argmax(axis=1)
                cum = hist.cumsum(axis=1)
                thr = (cum > half[:, None]).argmax(axis=1)  # code of the floor(n/2)-th smallest (0-based)
                # records strictly below the cut value: the histogram's running count before it
                n_left = np.where(thr > 0, cum[np.arange(n_part), np.maximum(thr - 1, 0)], 0.0)
                left = c < thr[part]
            else:  # large domains: one sort of (partition, code)
                order = np.lexsort((c, part))
                sc = c[order]
                start = np.concatenate(([0], np.cumsum(units)[:-1]))
                cw = np.cumsum(w_r[order])  # records up to and including each sorted row
                base = np.concatenate(([0], cw))[start]
                at = np.searchsorted(cw, base + half, side="right")  # the floor(n/2)-th record (0-based)
                lo, hi, thr = sc[start], sc[start + units - 1], sc[at]
                left = c < thr[part]
                n_left = np.bincount(part, weights=left * w_r, minlength=n_part)
            if scale[j] > 0:
                spans[:, j] = (positions[j][hi] - positions[j][lo]) / scale[j]
            side = left * m
            side += seen_base
            seen = np.bincount(side, minlength=n_part * 2 * m).reshape(n_part, 2, m) > 0
            del side
            distinct = seen.sum(axis=2)  # [:, 0] right side, [:, 1] left side
            ok[:, j] = ((n_left >= k) & (sizes - n_left >= k)
                        & (distinct[:, 1] >= l) & (distinct[:, 0] >= l))
            thresholds[:, j] = thr
        # widest normalised span first, ties to the earlier QI (stable sort)
        order = np.argsort(-spans, axis=1, kind="stable")
        ok_sorted = np.take_along_axis(ok, order, axis=1)
        can = ok_sorted.any(axis=1)
        chosen = order[np.arange(n_part), ok_sorted.argmax(axis=1)]
        # finished partitions become groups (numbered in partition order)
        done = ~can
        gid_of = np.full(n_part, -1, dtype=np.int64)
        gid_of[done] = n_groups + np.arange(int(done.sum()))
        n_groups += int(done.sum())
        rec_done = done[part]
        if rec_done.any():
            group[rows[rec_done]] = gid_of[part[rec_done]]
            keep = ~rec_done
            rows, part, mat, sa_r, w_r = rows[keep], part[keep], mat[keep], sa_r[keep], w_r[keep]
        if not len(rows):
            break
        # children of splitting partition p: 2 r(p) (left) and 2 r(p) + 1 (right)
        rank = np.cumsum(can) - 1
        col = chosen[part]
        value = mat[np.arange(len(rows)), col] if d else np.zeros(len(rows), dtype=np.int64)
        left = value < thresholds[part, col]
        part = 2 * rank[part] + (~left)
        n_part = 2 * int(can.sum())
    return Partition(group=group, n_groups=n_groups, levels=levels)


# ------------------------------------------------------------------ generalized domains
def _label(value) -> str:
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


@dataclass(frozen=True, eq=False)
class Boxes:
    """Each group's generalized domain per QI, its SA counts and size.

    ``lo``/``hi`` (G, d) bound the codes; ``sets[j]`` is a (G, D_j) CSR
    membership for categorical QIs (None for numeric ones, whose domain is
    every code lo..hi); ``dom`` (G, d) the domain sizes; ``st`` (G, m) CSR
    counts; ``size`` (G,).
    """

    lo: np.ndarray
    hi: np.ndarray
    sets: tuple
    dom: np.ndarray
    st: sparse.csr_matrix
    size: np.ndarray
    numeric: tuple[bool, ...]

    @cached_property
    def dense_sets(self) -> tuple:
        """``sets`` as dense (G, D_j) arrays, which the estimator reads group rows and value columns of.

        None for a numeric QI, or where the array would exceed
        :data:`_DENSE_SETS` cells (the sparse ``sets`` are read instead).
        Built on first use and kept with the boxes (the release's state).
        """
        return tuple(None if s is None or s.shape[0] * s.shape[1] > _DENSE_SETS else s.toarray() for s in self.sets)

    @cached_property
    def _kept(self) -> dict:
        """What :meth:`reach` and :meth:`holders` computed, per attribute (kept with the boxes)."""
        return {}

    def reach(self, a: int, size: int) -> np.ndarray:
        """(size,) how many groups' boxes hold each code of QI ``a``."""
        key = ("reach", a)
        if key not in self._kept:
            if self.numeric[a]:  # a box holds lo..hi: +1 at lo, -1 after hi
                edges = (np.bincount(self.lo[:, a], minlength=size + 1)
                         - np.bincount(self.hi[:, a] + 1, minlength=size + 1))
                self._kept[key] = np.cumsum(edges)[:size]
            else:
                self._kept[key] = np.asarray(self.sets[a].sum(axis=0)).ravel()[:size]
        return self._kept[key]

    def holders(self, a: int, size: int) -> sparse.csr_matrix:
        """(size, G) CSR: the groups whose box holds each code of QI ``a``, in ascending group order."""
        key = ("holders", a)
        if key not in self._kept:
            G = len(self.size)
            if self.numeric[a]:
                span = self.dom[:, a]
                group = np.repeat(np.arange(G), span)
                code = np.repeat(self.lo[:, a] - (np.cumsum(span) - span), span) + np.arange(int(span.sum()))
                got = sparse.csr_matrix((np.ones(len(group)), (code, group)), shape=(size, G))
            else:
                got = self.sets[a].T.tocsr()
            got.sort_indices()
            self._kept[key] = got
        return self._kept[key]


def group_boxes(codes, domains, numeric, group: np.ndarray, n_groups: int, sa: np.ndarray, m: int,
                weights: np.ndarray | None = None) -> Boxes:
    """Each group's box, SA counts and size; ``weights``: records each row stands for (default 1)."""
    d = len(codes)
    lo = np.zeros((n_groups, d), dtype=np.int64)
    hi = np.zeros((n_groups, d), dtype=np.int64)
    dom = np.zeros((n_groups, d), dtype=np.int64)
    sets = []
    for j in range(d):
        c = np.asarray(codes[j], dtype=np.int64)
        # min / max per group via one sort (faster than ufunc.at)
        order = np.lexsort((c, group))
        g_sorted, c_sorted = group[order], c[order]
        first = np.searchsorted(g_sorted, np.arange(n_groups))
        last = np.searchsorted(g_sorted, np.arange(n_groups), side="right") - 1
        lo[:, j], hi[:, j] = c_sorted[first], c_sorted[last]
        if numeric[j]:
            sets.append(None)
            dom[:, j] = hi[:, j] - lo[:, j] + 1
        else:
            mem = sparse.csr_matrix((np.ones(len(c)), (group, c)), shape=(n_groups, domains[j]))
            mem.sum_duplicates()
            mem.data[:] = 1.0
            sets.append(mem)
            dom[:, j] = np.diff(mem.indptr)
    w = np.ones(len(sa)) if weights is None else np.asarray(weights, dtype=float)
    st = sparse.csr_matrix((w, (group, np.asarray(sa, dtype=np.int64))), shape=(n_groups, m))
    st.sum_duplicates()
    size = np.bincount(group, weights=w, minlength=n_groups).astype(np.int64)
    return Boxes(lo, hi, tuple(sets), dom, st, size, tuple(bool(x) for x in numeric))


def box_labels(boxes: Boxes, labels) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per QI: the distinct generalization strings and each group's index into them."""
    out_labels, out_codes = [], []
    for j, lab in enumerate(labels):
        if boxes.numeric[j]:
            keys = boxes.lo[:, j] * (len(lab) + 1) + boxes.hi[:, j]
            uniq, inv = np.unique(keys, return_inverse=True)
            strings = []
            for key in uniq:
                a, b = divmod(int(key), len(lab) + 1)
                strings.append(_label(lab[a]) if a == b else f"[{_label(lab[a])}, {_label(lab[b])}]")
        else:
            mem = boxes.sets[j]
            rows = [tuple(mem.indices[mem.indptr[g]:mem.indptr[g + 1]].tolist()) for g in range(mem.shape[0])]
            index: dict[tuple, int] = {}
            inv = np.array([index.setdefault(r, len(index)) for r in rows], dtype=np.int64)
            strings = []
            for r in index:
                vals = [_label(lab[c]) for c in r]
                strings.append(vals[0] if len(vals) == 1 else "{" + ", ".join(vals) + "}")
        out_labels.append(np.array(strings, dtype=object))
        out_codes.append(inv.ravel())
    return out_labels, out_codes


def presence(boxes: Boxes) -> np.ndarray:
    """|G| / prod_i |dom_i(G)| per group, capped at 1 (seed 004 Theorem 1 on a generalized box)."""
    log_prod = np.log(boxes.dom.astype(float)).sum(axis=1)
    return np.minimum(1.0, np.exp(np.log(boxes.size.astype(float)) - log_prod))


def association(boxes: Boxes) -> np.ndarray:
    """max_s c(G, s) / |G| per group (seed 004 Theorem 2)."""
    return boxes.st.max(axis=1).toarray().ravel() / boxes.size


def _estimate_shared(boxes: Boxes, batch: QueryBatch, sa: np.ndarray, domains) -> np.ndarray | None:
    """:func:`estimate_boxes` for equality queries repeating their QI values under several SA conditions.

    The product ``prod_i |dom_i(G) ∩ {v_i}| / |dom_i(G)|`` depends on the QI
    values only: computed once per distinct value row for every group, then
    one product with the ST gives each SA value's estimate (the same sums up
    to float rounding).  The risk map's attack asks exactly this (every
    sampled micro group under each of the m values).  None when the value
    rows repeat less than twice on average (the per-SA pass reads fewer groups).

    The product is non-zero only on the groups whose box holds the row's
    value of every attribute, so it is computed on the groups holding its
    value of the attribute whose values the rows find in fewest boxes
    (:func:`_per_value_sparse`), over every group otherwise; the same terms
    summed in the same order, so the same figures to the last bit.
    """
    values = np.asarray(batch.values, dtype=np.int64)
    rows, inv = unique_rows(values)
    if 2 * len(rows) > len(values):
        return None
    return select(per_value_rows(boxes, batch.attrs, rows, domains), sa, rows=inv.ravel())


def per_value_rows(boxes: Boxes, attrs: tuple[int, ...], rows: np.ndarray, domains) -> np.ndarray:
    """(U, m): every SA value's estimate for each distinct value row of ``attrs`` (:func:`_estimate_shared`)."""
    per_value = _per_value_sparse(boxes, attrs, rows, domains)
    if per_value is None:
        G = len(boxes.size)
        st_t = boxes.st.T.tocsr()
        per_value = np.zeros((len(rows), boxes.st.shape[1]))
        step = max(1, _EST_CELLS // max(G, 1))
        for start in range(0, len(rows), step):
            block = rows[start:start + step]
            prod = np.ones((G, len(block)))
            for j, a in enumerate(attrs):
                v = block[:, j]
                if boxes.numeric[a]:
                    prod *= (boxes.lo[:, a][:, None] <= v[None, :]) & (v[None, :] <= boxes.hi[:, a][:, None])
                else:
                    dense = boxes.dense_sets[a]
                    prod *= dense[:, v] if dense is not None else boxes.sets[a][:, v].toarray()
                prod /= boxes.dom[:, a][:, None]
            per_value[start:start + step] = np.asarray(st_t @ prod).T
    return per_value


#: :func:`_per_value_sparse` is used while the (row, group) pairs it reads are at most this share of rows x groups
_SPARSE_SHARE = 0.25


def _per_value_sparse(boxes: Boxes, attrs, rows: np.ndarray, domains) -> np.ndarray | None:
    """Each row's ``sum_G c(G, x) prod_i |dom_i(G) ∩ {v_i}| / |dom_i(G)|`` (U, m), from the groups holding it.

    Starts from the groups whose box holds the row's value of one attribute
    (:meth:`Boxes.holders`, of the attribute whose values the rows find in
    fewest boxes) and multiplies the other attributes in there.  None (the
    caller reads every group) when that is not much fewer (:data:`_SPARSE_SHARE`)
    or a categorical attribute's membership is not kept dense.
    """
    G = len(boxes.size)
    if not G or any(not boxes.numeric[a] and boxes.dense_sets[a] is None for a in attrs):
        return None
    reach = [boxes.reach(a, int(domains[a]))[rows[:, j]].sum() for j, a in enumerate(attrs)]
    first = int(np.argmin(reach))
    a0 = attrs[first]
    if reach[first] > _SPARSE_SHARE * len(rows) * G or (boxes.numeric[a0] and boxes.dom[:, a0].sum() > _DENSE_SETS):
        return None
    lists = boxes.holders(a0, int(domains[a0]))
    per_value = np.zeros((len(rows), boxes.st.shape[1]))
    step = max(1, _EST_CELLS * len(rows) // max(int(reach[first]), 1))
    for start in range(0, len(rows), step):
        block = rows[start:start + step]
        sub = lists[block[:, first]]
        cols = sub.indices
        at = np.repeat(np.arange(len(block)), np.diff(sub.indptr))
        data = np.ones(len(cols))
        for j, a in enumerate(attrs):
            v = block[at, j]
            if boxes.numeric[a]:
                data *= (boxes.lo[cols, a] <= v) & (v <= boxes.hi[cols, a])
            else:
                data *= boxes.dense_sets[a][cols, v]
            data /= boxes.dom[cols, a]
        product = sparse.csr_matrix((data, cols, sub.indptr), shape=(len(block), G))
        per_value[start:start + step] = (product @ boxes.st).toarray()
    return per_value


def estimate_boxes(boxes: Boxes, batch: QueryBatch, domains) -> np.ndarray:
    """Uniformity estimate: sum_G c(G, SA) prod_i |dom_i(G) ∩ C_i| / |dom_i(G)| (seed 004 §6, Fig. 5)."""
    q = len(batch)
    out = np.zeros(q)
    if q == 0 or boxes.size.size == 0:
        return out
    sa = np.asarray(batch.sa, dtype=bool)
    if batch.is_equality and len(batch.attrs):
        shared = _estimate_shared(boxes, batch, sa, domains)
        if shared is not None:
            return shared
    masks = batch.qi_masks(domains)
    single = sa.sum(axis=1) == 1
    v_of = np.where(single, sa.argmax(axis=1), -1)
    st_csc = boxes.st.tocsc()
    for v in np.unique(v_of):
        qs = np.flatnonzero(v_of == v)
        if v >= 0:
            col = st_csc[:, int(v)]
            rows = col.indices
            weight = col.data  # (G_v,) one SA value: the same group weights for every query
        else:
            rows = np.arange(len(boxes.size))
            weight = None
        if len(rows) == 0:
            continue
        step = max(1, _EST_CELLS // len(rows))
        for start in range(0, len(qs), step):
            qq = qs[start:start + step]
            prod = np.ones((len(rows), len(qq)))
            for j, a in enumerate(batch.attrs):
                mask = masks[j][qq]
                if boxes.numeric[a]:
                    cm = np.concatenate([np.zeros((len(qq), 1)), np.cumsum(mask, axis=1)], axis=1)
                    hits = cm[:, boxes.hi[rows, a] + 1] - cm[:, boxes.lo[rows, a]]  # (Qc, G_v)
                    prod *= hits.T
                else:
                    dense = boxes.dense_sets[a]
                    prod *= (dense[rows] @ mask.T if dense is not None
                             else boxes.sets[a][rows] @ mask.T.astype(float))
                prod /= boxes.dom[rows, a][:, None]
            if weight is not None:
                out[qq] = weight @ prod
            else:
                w = (boxes.st[rows] @ sa[qq].T.astype(float))
                out[qq] = np.asarray((prod * w).sum(axis=0)).ravel()
    return out


# ------------------------------------------------------------------ from counts
def _numeric(summary) -> tuple[bool, ...]:
    """Which QIs are numeric: the summary's flags, else numeric labels (:func:`core.table.encode` sorts them as numbers)."""
    flags = getattr(summary, "qi_numeric", None)
    if flags:
        return tuple(bool(x) for x in flags)
    return tuple(bool(np.issubdtype(np.asarray(lab).dtype, np.number)) for lab in summary.qi_labels)


def _positions(labels, numeric) -> list[np.ndarray]:
    return [np.asarray(lab, dtype=float) if num else np.arange(len(lab), dtype=float)
            for lab, num in zip(labels, numeric)]


def combo_partition(summary: Combos, k: int, l: int) -> tuple[Partition, np.ndarray]:
    """Mondrian on the table's distinct (QI..., SA) combinations weighted by their counts.

    Returns the partition of the combinations and the group of each QI
    combination (:meth:`Combos.qi_groups` order): a cut compares QI codes
    only, so all records of one QI combination share a group, and the
    partition is the one the records give (tests/test_groups_counts.py).
    It depends on (k, l) only, not on beta: it is kept with the
    combinations (:meth:`Combos.remember`), so a move of beta's slider that
    keeps l = ceil(1/beta), and the nearest-setting search, reuse it.
    """
    def compute():
        numeric = _numeric(summary)
        part = mondrian_partition(summary.qi, _positions(summary.qi_labels, numeric), summary.sa, summary.m, k, l,
                                  weights=summary.count)
        qg, nq = summary.qi_groups()
        of_qi = np.empty(nq, dtype=np.int64)
        of_qi[qg] = part.group
        return part, of_qi

    remember = getattr(summary, "remember", None)  # kept with the combinations: beta's slider moves reuse it
    return compute() if remember is None else remember(("mondrian/partition", int(k), int(l)), compute)


#: (k, l) settings whose groups' counts :func:`group_shares` keeps with the combinations
SHARES_KEEP = 64


def group_shares(summary: Combos, k: int, l: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group of the (k, l) partition: the records of its most frequent SA value, and its records (float64).

    What the nearest-setting search reads of a partition (the largest
    share, whether every group meets a beta).  Kept with the combinations
    for :data:`SHARES_KEEP` settings (two whole numbers per group, far
    smaller than the partition, of which only a few are kept): the search
    tries the same (k, l) on every slider move of beta, and a move that
    finds them kept does not partition again (Adult: 25 partitions, a
    second, before).  The figures are the ones counted from the partition.
    """
    def compute():
        part, _ = combo_partition(summary, k, l)
        counts = np.bincount(part.group * m + summary.sa, weights=summary.count,
                             minlength=part.n_groups * m).reshape(part.n_groups, m)
        return counts.max(axis=1), counts.sum(axis=1)

    remember = getattr(summary, "remember", None)
    if remember is None:
        return compute()
    return remember(("mondrian/shares", int(k), int(l), int(m)), compute, keep=SHARES_KEEP)


class MondrianPlan(Plan):
    """Mondrian's plan: each QI combination's group id and generalized codes; a record's from its QI combination.

    ``keys`` finds a record's QI combination (:attr:`Combos.group_lookup`:
    the distinct QI combinations' sorted keys), so no rank is needed (``rank_by=None``: the engine counts
    nothing per record).  ``gen_of_qi[j]`` holds QI j's generalized code of
    every QI combination in the narrowest unsigned type of its labels, the
    type the engine publishes it in.  ``qi_group`` (the local engine in the
    app only, :mod:`core.engine.memo`): every record's QI combination,
    which depends on the table only, kept between slider moves; with it,
    ``memo`` and the dataset's ``sa_codes``, :meth:`in_order` gives the
    columns in published order at once.
    """

    def __init__(self, seed: int, gid_of_qi: np.ndarray, gen_of_qi: list[np.ndarray], keys, qi: tuple[str, ...],
                 sa: str, qi_group: np.ndarray | None = None, memo=None, sa_codes: np.ndarray | None = None,
                 **fields):
        super().__init__(seed=seed, rank_by=None, keep_qi=False, **fields)
        self.gid_of_qi, self.gen_of_qi, self.keys, self.qi, self.sa = gid_of_qi, gen_of_qi, keys, qi, sa
        self.qi_group, self.memo, self.sa_codes = qi_group, memo, sa_codes

    def __getstate__(self):
        # pickled (the Dask engine): each partition looks its records up itself
        return {**self.__dict__, "qi_group": None, "memo": None, "sa_codes": None}

    def in_order(self, order: np.ndarray) -> dict[str, np.ndarray] | None:
        """With the app's memo: every column in published order from each record's QI combination in that order.

        The QI combinations and the SA codes in published order depend on
        the table and the seed only, so the memo keeps them; a slider move
        then looks each record's group id and generalized codes up in the
        (small) per-combination tables, in order, instead of building every
        column in input order and gathering it by ``order`` (census 5M: 9
        gathers of 5M records, about half a second a move).  The values are
        :meth:`apply`'s, put in ``order``.
        """
        if self.qi_group is None or self.memo is None or self.sa_codes is None:
            return None
        from ..engine.local import gather

        key = self.memo(("qi-groups/published", int(self.seed)),
                        lambda: _memo.narrow(gather(self.qi_group, order), max(1, len(self.gid_of_qi))))
        sa = self.memo(("sa/published", int(self.seed)), lambda: gather(self.sa_codes, order))
        return {"gid": self.gid_of_qi[key], **{c: self.gen_of_qi[j][key] for j, c in enumerate(self.qi)},
                self.sa: sa}

    def apply(self, chunk: Chunk) -> dict[str, np.ndarray]:
        if self.qi_group is not None:
            key = self.qi_group[chunk.start:chunk.stop]
        else:
            key = self.keys.lookup(chunk.qi)
        return {"gid": self.gid_of_qi[key], **{c: self.gen_of_qi[j][key] for j, c in enumerate(self.qi)},
                self.sa: chunk.sa}


def _narrow(codes: np.ndarray, size: int) -> np.ndarray:
    """Codes below ``size`` in the smallest unsigned type the engines publish them in (:func:`core.engine.local.code_dtype`)."""
    from ..engine.local import code_dtype

    return np.asarray(codes).astype(code_dtype(np.int64, size), copy=False)


def _qi_groups(summary) -> np.ndarray | None:
    """Every record's QI combination (:meth:`Combos.group_of`), from the app's memo; None without one."""
    memo = _memo.bind(summary)
    data = _memo.local_data(summary)
    if memo is None or data is None:
        return None
    return memo(("qi-groups",), lambda: _memo.narrow(Combos.of(data).group_of(data.qi_codes),
                                                      max(1, Combos.of(data).n_qi_groups)))


def _grouping(summary, k: int, l: int, seed: int) -> dict[str, Any]:
    """Everything of the release that depends on (k, l) and the seed, not on beta (kept with the combinations).

    The partition (:func:`combo_partition`), the group ids drawn at group
    level, the boxes, the generalized labels and codes, the groups table
    and its figures.
    """
    def compute():
        part, of_qi = combo_partition(summary, k, l)
        relabel = shuffle.relabel(seed, "mondrian/gid", part.n_groups)
        group = relabel[part.group]
        qi = tuple(summary.qi_names)
        numeric = _numeric(summary)
        boxes = group_boxes(summary.qi, summary.domains, numeric, group, part.n_groups, summary.sa, summary.m,
                            weights=summary.count)
        gen_labels, gen_codes = box_labels(boxes, summary.qi_labels)
        pres, assoc = presence(boxes), association(boxes)
        distinct = np.diff(boxes.st.indptr)
        groups = CodedTable(
            columns={"gid": np.arange(part.n_groups), "size": boxes.size,
                     **{c: gen_codes[j] for j, c in enumerate(qi)},
                     "sa_values": distinct, "presence": pres, "association": assoc},
            labels={"gid": None, "size": None, **{c: gen_labels[j] for j, c in enumerate(qi)},
                    "sa_values": None, "presence": None, "association": None},
        )
        gid_of_qi = relabel[of_qi]
        return {"part": part, "gid_of_qi": gid_of_qi, "numeric": numeric, "boxes": boxes, "gen_labels": gen_labels,
                "gen_of_qi": [_narrow(gen_codes[j][gid_of_qi], len(gen_labels[j])) for j in range(len(qi))],
                "pres": pres, "assoc": assoc, "distinct": distinct, "groups": groups}

    remember = getattr(summary, "remember", None)
    return compute() if remember is None else remember(("mondrian/grouping", int(k), int(l), int(seed)), compute)


# ------------------------------------------------------------------ the mechanism
class Mondrian(Mechanism):
    name = "mondrian"
    title = "Mondrian generalization (k-anonymity, l-diversity)"
    paper = "baseline in seed 004 (LeFevre et al. 2006)"
    summary = ("The table is cut again and again at the median of its widest QI until no cut keeps at least k "
               "records and l different sensitive values on both sides. Each group's QI values are then "
               "published as ranges (numbers) or sets (categories), so a person is hidden among the group's "
               "records; queries are answered by assuming records are spread evenly inside each range.")
    order = 85
    params = (
        Param("beta", "β", "Sets the diversity as Ambiguity's β does: each group needs ℓ = ⌈1/β⌉ different "
              "sensitive values. Unlike Ambiguity, this does not bound the association: one value may fill most "
              "of a group, so a guess of a member's value can be right far more often than β (the release "
              "reports the largest share, max_association).",
              0.1, low=0.0, high=1.0, closed="right", step=0.005, safer="lower",
              presets=(0.025, 0.05, 0.1, 0.2, 0.25, 0.5), paper="seed 004 §9: 0.025, 0.05, 0.1"),
        Param("k", "k", "Smallest group: every published range holds at least k records (k-anonymity).",
              10, kind="int", low=1, high=100_000, step=1, safer="higher",
              paper="our default: 10 (ℓ = 10 distinct values already imply it)"),
        Param("l", "ℓ", "Distinct sensitive values per group; empty = ⌈1/β⌉.", None, kind="int", low=1,
              high=10_000, step=1, optional=True, safer="higher", paper="seed 004: ℓ = ⌈1/β⌉"),
    )
    main_param = "beta"
    sweep = (0.025, 0.05, 0.1, 0.2, 0.25, 0.5)
    publishes = "tables"

    def _l(self, values: Mapping[str, Any]) -> int:
        return int(values["l"]) if values.get("l") is not None else required_l(values["beta"])

    def derived(self, data: Dataset, values: Mapping[str, Any]) -> dict[str, Any]:
        return {"l_required": self._l(values)}

    def check(self, data: Dataset, values: Mapping[str, Any]) -> None:
        l, k = self._l(values), values["k"]
        distinct = int(np.count_nonzero(data.sa_counts))
        if distinct < l:
            what = f"β = {values['beta']:g} needs ℓ = {l}" if values.get("l") is None else f"ℓ = {l} needs"
            raise NotEligible(
                f"{what} different sensitive values in every group, but the table has only {distinct}; "
                f"the smallest β is 1/{distinct} ≈ {1 / distinct:.4f}.",
                suggestion={"beta": round(1 / distinct + 5e-5, 4), "l": None} if values.get("l") is None
                else {"l": distinct})
        if data.n < k:
            raise NotEligible(f"k = {k} needs at least {k} records; the table has {data.n:,}.",
                              suggestion={"k": max(1, data.n)})

    planned = True
    #: its guarantee reads the groups table, max_presence and the notes, all the plan's: the nearest-setting
    #: search judges a candidate without applying it to every record (core.mechanisms.setting_verdict)
    verdict_from_plan = True

    def plan(self, summary: Combos, values: Mapping[str, Any], seed: int) -> MondrianPlan:
        """Mondrian on the weighted combinations; each record's group from its QI combination.

        Group ids are a random permutation drawn at group level
        (:func:`core.shuffle.relabel`, purpose ``"mondrian/gid"``) so an id
        reveals nothing about the cut order; the groups table and the
        generalized labels are built from the counts.  All of it but the
        figures against beta is kept with the combinations per (k, l, seed)
        (:func:`_grouping`), so a move of beta's slider that keeps
        l = ceil(1/beta) only applies the plan to the records.
        """
        l, k = self._l(values), int(values["k"])
        got = _grouping(summary, k, l, seed)
        part, boxes, pres, assoc, distinct = got["part"], got["boxes"], got["pres"], got["assoc"], got["distinct"]
        gen_labels, numeric = got["gen_labels"], got["numeric"]
        qi, sa = tuple(summary.qi_names), summary.sa_name
        beta = float(values["beta"])
        over = int((assoc > beta + 1e-12).sum())
        sizes = boxes.size
        notes = []
        if over:
            notes.append(f"{over:,} of {part.n_groups:,} groups let an adversary link a member to one sensitive "
                         f"value with probability above β = {beta:g} (largest {assoc.max():.3f}): distinct "
                         f"ℓ-diversity counts different values, not their shares.")
        qi_group = _qi_groups(summary)
        data = _memo.local_data(summary) if qi_group is not None else None
        return MondrianPlan(
            seed, got["gid_of_qi"], got["gen_of_qi"], summary.group_lookup, qi, sa, qi_group,
            memo=_memo.bind(summary) if data is not None else None,
            sa_codes=None if data is None else data.sa_codes,
            labels={"gid": None, **{c: gen_labels[j] for j, c in enumerate(qi)}, sa: summary.sa_labels},
            tables={"groups": got["groups"]},
            published={"k": k, "l": l, "groups": part.n_groups, "levels": part.levels,
                       "generalization": {c: ("range" if num else "value set") for c, num in zip(qi, numeric)}},
            privacy={"groups": part.n_groups, "min_group_size": int(sizes.min()),
                     "mean_group_size": float(sizes.mean()), "k_achieved": int(sizes.min()),
                     "l_achieved": int(distinct.min()), "max_presence": float(pres.max()),
                     "mean_presence": float(pres.mean()), "max_association": float(assoc.max()),
                     "groups_above_beta": over, "max_posterior": float(assoc.max())},
            notes=tuple(notes),
            state={"boxes": boxes, "domains": tuple(summary.domains)},
            rows_out=summary.n,
        )

    # ------------------------------------------------------------ guarantee
    def promise(self, values: Mapping[str, Any]) -> str:
        return (f"k-anonymity with k = {values['k']}, distinct ℓ-diversity with ℓ = {self._l(values)} and "
                f"β-association with β = {values['beta']:g}: every published group has at least k records, ℓ "
                f"different sensitive values, and no value above a share β of the group (seed 004's comparison).")

    def guarantee(self, data: Dataset, values: Mapping[str, Any], release: Release) -> G.Verdict:
        """Group sizes, distinct values and largest shares from the published ``groups`` table."""
        g = release.tables["groups"]
        size = np.asarray(g.columns["size"], float)
        distinct = np.asarray(g.columns["sa_values"], float)
        assoc = np.asarray(g.columns["association"], float)
        n_g = len(size)
        k, l, beta = int(values["k"]), self._l(values), float(values["beta"])
        figures = {"groups": n_g, "k_achieved": int(size.min()) if n_g else 0,
                   "l_achieved": int(distinct.min()) if n_g else 0,
                   "max_association": float(assoc.max(initial=0.0)),
                   "max_presence": float(release.privacy.get("max_presence", 0.0))}
        fails = []
        for part, arr, bound, upper in ((f"group size ≥ k = {k}", size, k, False),
                                         (f"distinct values ≥ ℓ = {l}", distinct, l, False),
                                         (f"association ≤ β = {beta:g}", assoc, beta, True)):
            bad = arr > bound + 1e-12 if upper else arr < bound
            if bad.any():
                worst = float(arr.max() if upper else arr.min())
                fails.append(G.failure(part, worst, bound, int(bad.sum()), n_g,
                                       f"groups ({int(size[bad].sum()):,} records)", upper=upper))
        return G.judge(self.name, self.promise(values), figures, fails,
                       explains=G.restating(release.notes, "above β"))

    #: the search tries β and k and offers the setting that meets with the most groups (issue 23 §2: at k = 20 on
    #: Adult, k = 4,170 and one or two groups was offered while β ≥ 0.661 met at k = 20)
    rank_by_utility = True

    def nearest(self, data: Dataset, values: Mapping[str, Any], verdict: G.Verdict):
        """Both parameters: β raised at the current k, and k raised at a β the table allows.

        First, at the current k and ℓ rule (ℓ = ⌈1/β⌉ when derived, or the
        given ℓ), the smallest β on its 0.005 grid that every group's largest
        share meets, for each ℓ from the current one down (a larger β derives
        a smaller ℓ, which changes the groups).  Then β raised to the top
        value's share if needed and the smallest k whose groups all meet it
        (bisection on the partition alone, each kept with the combinations),
        only up to the largest k its parameter takes (``min(n, 100,000)``).
        The driver ranks the candidates that meet by their groups
        (:attr:`rank_by_utility`): finer groups answer queries better.
        """
        summary = Combos.of(data)
        k_now = int(values["k"])
        if data.n >= k_now:
            l_now = self._l(values)
            tried = set()
            for l in range(l_now, 1, -1):  # ℓ = 1 (β = 1) bounds nothing: never offered
                if values.get("l") is not None and l != l_now:
                    break  # a given ℓ stays as given: only β moves
                top_count, size = group_shares(summary, k_now, l, data.m)
                share = float((top_count / size).max())
                beta = round(math.ceil(max(share, float(values["beta"])) / 0.005 - 1e-9) * 0.005, 6)
                if beta >= 1 or beta in tried:
                    continue
                if values.get("l") is None and required_l(beta) != l:
                    continue  # that β derives another ℓ, whose groups the next rounds try
                tried.add(beta)
                yield {"beta": beta}
        top = float(data.sa_counts.max() / data.n)
        beta = float(values["beta"])
        if top > beta + 1e-12:
            beta = math.ceil(top / 0.005 - 1e-9) * 0.005
        beta = round(beta, 6)
        l = int(values["l"]) if values.get("l") is not None else required_l(beta)

        def meets(k: int) -> bool:
            top_count, size = group_shares(summary, k, l, data.m)
            return bool(np.all(top_count <= beta * size + 1e-9))

        k_high = next(p for p in self.params if p.name == "k").high
        lo, hi = int(values["k"]), min(data.n, int(k_high))
        if lo > hi or not meets(hi):
            return
        while lo < hi:  # smallest k that meets (larger k, coarser groups)
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if meets(mid) else (mid + 1, hi)
        yield {"beta": beta, "k": lo}
        yield {"beta": beta, "k": min(data.n, int(k_high))}

    def estimate(self, release: Release, batch: QueryBatch, rng: np.random.Generator) -> np.ndarray:
        return estimate_boxes(release.state["boxes"], batch, release.state["domains"])

    def estimate_grid(self, release: Release, conditions: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        """:meth:`estimate` of the grid from each distinct condition's row of estimates (its shared pass)."""
        conditions = np.asarray(conditions, dtype=np.int64)
        if m < 2 or not conditions.shape[1] or release.state["boxes"].size.size == 0:  # not the shared pass's case
            return super().estimate_grid(release, conditions, m, rng)
        boxes, attrs = release.state["boxes"], tuple(range(conditions.shape[1]))
        return grid_of_rows(lambda rows: per_value_rows(boxes, attrs, rows, release.state["domains"]), conditions)


MECHANISMS = [Mondrian()]
