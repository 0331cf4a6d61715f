"""Small domain randomization: algorithm PP, then uniform perturbation inside each sub-table.

The table T is partitioned into sub-tables T_1..T_k (algorithm PP), and the
records of each T_i are perturbed with uniform perturbation (UP) over the
values that occur in T_i only (SA_i, m_i = |SA_i|), with the amplification
gamma_i that restricted (rho1, rho2)-privacy allows there.  A smaller
domain gives a larger retention p_i for the same privacy.  Published: every
record with its sub-table, and per sub-table SA_i, gamma_i and p_i (the
manifest's ``published.subtables``).  A count is estimated by the sum over
sub-tables of UP's unbiased estimator (seed 002 eq. 7, appendix 10.10).

Privacy per sub-table (§4.1): SA' = {x : f_x/|T| <= rho1} are the protected
values; rho1_i is the largest share of a protected value inside T_i, and
PP keeps rho1_i < rho2, so ``gamma_i = rho2 (1 - rho1_i) / (rho1_i (1 -
rho2))`` (eq. 10) and ``p_i = (gamma_i - 1)/(m_i - 1 + gamma_i)`` (eq. 4).

PP (§5), on the SA counts only:

1. Balancing (:func:`balance`, Fig. 1, eq. 13): theta = floor(|T| / f_max);
   repeatedly take h records of each of the theta most frequent values of
   the rest, h the largest keeping the rest theta-balanced (Lemma 1).  When
   some values are too frequent to be protected (SA' strictly inside SA,
   appendix 10.7, :func:`initial_groups`) only the protected records are
   balanced and the others are spread over the groups in proportion to
   their sizes.
2. Rearranging (:func:`rcm_order`): reverse Cuthill-McKee order of the
   groups' overlap graph B = A A^T, so adjacent groups share values.
3. Merging (:func:`merge`): dynamic programming over contiguous runs of
   that order minimising eps(Part) (eq. 12, eq. 14) with rho1_i < rho2.

Choices where the paper is silent
---------------------------------
* Ties between equally frequent values ("the theta most frequent") are
  broken by the labels' natural order (``x2`` before ``x10``, numbers by
  value), the order in which the paper's examples index values; on the
  ``toy-sdr`` sample this reproduces Example 2's groups exactly.
* Which records of a value go to which sub-table: a uniformly random choice
  (seeded), so that sub-table membership tells nothing about a record's QI
  values beyond its SA value; an adversary who locates a target's
  sub-table then has exactly the prior rho1_i the analysis assumes.  It is
  drawn as a keyed random permutation of the value's ranks
  (:func:`deal_subtables`, issue 15), so PP and the dealing need the SA
  counts only and the release is the same for any batch size or engine.
* Reverse Cuthill-McKee: per connected component of B (components in order
  of their lowest group), starting at a minimum-degree group (ties: the
  highest index), neighbours by ascending degree (ties: ascending index),
  then reversed (MECHANISMS.md section 3).  scipy's
  ``reverse_cuthill_mckee`` reverses across components and does not give
  Example 3's order.
* Merging DP ties (equal eps(Part)): the earliest boundary wins, i.e. the
  longer last sub-table.  delta scales every eps_i by the same factor, so
  it never changes the partition, only the reported bounds.
* Published rows are in a random order (:func:`core.rng.order_keys`),
  across sub-tables; a ``subtable`` column
  (``T1``..``Tk``, in merge order) says which sub-table each row belongs
  to.  One table with that column carries the same information as k files.

Guarantee (:meth:`SDR.guarantee`): restricted (rho1, rho2)-privacy in every
sub-table (seed 002 §4.1, Corollary 1): every protected value (share at most
rho1 of T) is believed with probability at most rho2 after seeing a record's
published value inside its sub-table.  Checked on the release: the
amplification of each published (p_i, m_i) applied to each value's share of
its sub-table (PP's counts, which the release deals exactly).  Values more
frequent than rho1 are outside the definition; the verdict lists them with
their largest posterior (``outside``).

With rho1 < rho2 the whole table is always an admissible partition (its
rho1_i is the largest share of a protected value, at most rho1), so PP
never fails while some value is protected; the refusal for a partition
that cannot meet rho1_i < rho2 is raised by :func:`merge` for callers that
give it other groups, and is tested there.

References
----------
seed 002 (Chaytor & Wang, "Small domain randomization"), §3.1-3.3, §4
(Definition 1, Corollary 1, eqs. 9-12), §5 (Fig. 1, eqs. 13-14, Examples
1-4), appendix 10.5 (Lemma 1), 10.7 (SA' strictly inside SA), 10.10
(estimation); MECHANISMS.md section 3.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..bounds.retention import error_bound, gamma_from_rho, retention_from_gamma
from ..counting import QueryBatch, Records, distinct_rows, select
from .. import guarantee as G
from ..errors import NotEligible, ParameterError
from ..params import Param
from .. import rng as _rng
from ..release import Release
from ..table import Dataset
from .base import SHARED_GROUPS, Mechanism, grid_counts, grid_select, rows_of
from .uniform import RHO1, RHO2, check_rho, mle
from ..engine import memo as _memo
from ..engine.combos import Combos
from ..engine.protocol import Chunk, ranks
from ..engine.protocol import Plan as EnginePlan

DELTA = Param("delta", "δ", "Confidence of the error bound that PP minimises: the bound holds with probability "
              "1 − δ. It scales every sub-table's bound alike, so it does not change the partition.",
              0.05, low=0, high=1, closed="neither", step=0.01, paper="seed 002 §6.1: δ = 0.05")


# ------------------------------------------------------------------ helpers
def natural_rank(labels: Sequence) -> np.ndarray:
    """Position of each label in natural order (digit runs compared as numbers: x2 < x10).

    Examples
    --------
    >>> natural_rank(["x1", "x10", "x2"]).tolist()
    [0, 2, 1]
    """
    def key(label):
        parts = re.split(r"(\d+)", str(label))
        return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p)

    order = sorted(range(len(labels)), key=lambda i: (key(labels[i]), i))
    rank = np.empty(len(labels), dtype=np.int64)
    rank[order] = np.arange(len(labels))
    return rank


def protected_values(counts: np.ndarray, rho1: float) -> np.ndarray:
    """SA' of eq. 9: values that occur and have a relative frequency of at most rho1."""
    counts = np.asarray(counts, dtype=np.int64)
    return (counts > 0) & (counts / counts.sum() <= rho1)


def is_balanced(counts: np.ndarray, theta: int, mask: np.ndarray | None = None) -> bool:
    """Definition 3: every (masked) value has at most a 1/theta share of the records."""
    counts = np.asarray(counts, dtype=np.int64)
    top = counts[mask].max(initial=0) if mask is not None else counts.max(initial=0)
    return bool(top * theta <= counts.sum())


# ---------------------------------------------------------- phase 1: balancing
def balance(counts: np.ndarray, theta: int | None = None, rank: np.ndarray | None = None) -> tuple[int, np.ndarray]:
    """Initial groups of the balancing phase (seed 002 §5.1, Fig. 1, eq. 13), SA' = SA.

    ``theta = floor(|T| / f_max)``.  While records remain: take the theta
    most frequent values of the rest T0 (ties: lower ``rank`` first) and h
    records of each, with ``mu_i`` the i-th largest count of T0
    (``mu_{theta+1} = 0`` if absent) and
    ``sigma(v) = |T0|/theta - max(mu_1 - v, mu_{theta+1})``:
    ``h = mu_theta`` if ``sigma(mu_theta) >= mu_theta``, otherwise
    ``h = floor(|T0|/theta - mu_{theta+1})``; if h = 0 the rest is the last
    group.  All comparisons are done in integers (multiplied by theta).

    Lemma 1: every group is theta-balanced, the rest stays theta-balanced
    and h is the largest such value (property tests).

    Parameters
    ----------
    counts : ndarray (m,) of int
        Records per value.
    theta : int, optional
        Balancing level; default ``floor(|T| / max count)``.
    rank : ndarray (m,), optional
        Tie-break priority of values (default: index order).

    Returns
    -------
    theta : int
    groups : ndarray (t, m) of int
        Records of each value in each initial group, in creation order.

    References
    ----------
    seed 002 §5.1, Fig. 1, eq. 13 (printed as eq. 12), Example 2; appendix 10.5.

    Examples
    --------
    >>> theta, groups = balance(np.array([12, 8, 6, 5, 4, 3, 1, 1, 1, 1]))   # Example 2
    >>> theta, groups[3].tolist()
    (3, [0, 0, 0, 1, 0, 1, 1, 0, 0, 0])
    """
    rest = np.asarray(counts, dtype=np.int64).copy()
    m = len(rest)
    rank = np.arange(m) if rank is None else np.asarray(rank)
    total = int(rest.sum())
    if total == 0:
        return 0, np.zeros((0, m), dtype=np.int64)
    if theta is None:
        theta = total // int(rest.max())
    theta = int(theta)
    if theta < 1:
        raise ValueError("theta must be at least 1")
    groups = []
    while total > 0:
        order = np.lexsort((rank, -rest))
        mu = rest[order]
        top = order[:theta]
        mu1 = int(mu[0])
        mu_t = int(mu[theta - 1]) if theta <= m else 0
        mu_next = int(mu[theta]) if theta < m else 0
        # sigma(mu_theta) >= mu_theta, times theta
        if total - theta * max(mu1 - mu_t, mu_next) >= theta * mu_t:
            h = mu_t
        else:
            h = (total - theta * mu_next) // theta
        group = np.zeros(m, dtype=np.int64)
        if h <= 0:
            group[:] = rest
        else:
            group[top] = h
        groups.append(group)
        rest -= group
        total = int(rest.sum())
    return theta, np.array(groups)


def initial_groups(counts: np.ndarray, protected: np.ndarray,
                   rank: np.ndarray | None = None) -> tuple[int, np.ndarray]:
    """Phase 1 in general: :func:`balance` when SA' = SA, appendix 10.7 otherwise.

    SA' strictly inside SA: the protected records T' are balanced with
    ``theta' = floor(|T'| / f_max)`` (f_max the largest protected count);
    then the other records T'' are spread over the groups in proportion to
    their sizes: group j gets ``floor(|g_j| / |T'| * |T''|)`` of them, taken
    in order from T'' sorted by descending value frequency (all records of
    the most frequent value first, then the next ...), and the residue goes
    to the last group.

    Returns
    -------
    theta : int
        The balancing level used (theta' in the skewed case).
    groups : ndarray (t, m) of int

    References
    ----------
    seed 002 §5.1 (last paragraph), appendix 10.7 and Lemma 2.
    """
    counts = np.asarray(counts, dtype=np.int64)
    protected = np.asarray(protected, dtype=bool)
    rank = np.arange(len(counts)) if rank is None else np.asarray(rank)
    kept = np.where(protected, counts, 0)
    other = np.where(protected, 0, counts)
    theta, groups = balance(kept, None, rank)
    n_other = int(other.sum())
    if n_other == 0 or len(groups) == 0:
        return theta, groups
    n_kept = int(kept.sum())
    sizes = groups.sum(axis=1)
    quota = sizes * n_other // n_kept
    quota[-1] += n_other - int(quota.sum())
    order = np.lexsort((rank, -other))
    order = order[other[order] > 0]
    values = np.repeat(order, other[order])  # T'' records, most frequent value first
    owner = np.repeat(np.arange(len(groups)), quota)
    add = np.bincount(owner * len(counts) + values, minlength=groups.size).reshape(groups.shape)
    return theta, groups + add


# --------------------------------------------------------- phase 2: rearranging
def rcm_order(groups: np.ndarray) -> np.ndarray:
    """Reverse Cuthill-McKee order of the groups' overlap graph (B = A A^T).

    Two groups are adjacent when they share a value.  Components are taken
    in order of their lowest group index; inside a component, Cuthill-McKee
    starts at a group of minimum degree (ties: the highest index), visits
    each group's unvisited neighbours by ascending degree (ties: ascending
    index), and the component's order is reversed.  This reproduces seed
    002 Example 3 (g1, g3, g2, g4, g5); scipy's ``reverse_cuthill_mckee``
    returns g4, g3, g2, g1, g5 there (MECHANISMS.md section 3).

    Returns
    -------
    ndarray (t,) of int
        Group indices in band order.

    References
    ----------
    seed 002 §5.2, Example 3; George & Liu (the paper's ref. [7]).

    Examples
    --------
    >>> g = balance(np.array([12, 8, 6, 5, 4, 3, 1, 1, 1, 1]))[1]
    >>> (rcm_order(g) + 1).tolist()        # Example 3: g1, g3, g2, g4, g5
    [1, 3, 2, 4, 5]
    """
    present = (np.asarray(groups) > 0).astype(np.int64)
    t = len(present)
    adj = (present @ present.T) > 0
    np.fill_diagonal(adj, False)
    degree = adj.sum(axis=1)
    done = np.zeros(t, dtype=bool)
    out: list[int] = []
    for seed in range(t):
        if done[seed]:
            continue
        # the component of seed (its lowest index, as lower ones are done)
        comp, frontier = {seed}, [seed]
        while frontier:
            nxt = []
            for g in frontier:
                for h in np.flatnonzero(adj[g]):
                    if h not in comp:
                        comp.add(int(h))
                        nxt.append(int(h))
            frontier = nxt
        members = sorted(comp)
        low = min(degree[g] for g in members)
        start = max(g for g in members if degree[g] == low)
        seen = {start}
        cm = [start]
        for g in cm:  # cm grows while we walk it: breadth first
            nbrs = [int(h) for h in np.flatnonzero(adj[g]) if int(h) not in seen]
            nbrs.sort(key=lambda h: (degree[h], h))
            for h in nbrs:
                seen.add(h)
                cm.append(h)
        out.extend(reversed(cm))
        done[members] = True
    return np.array(out, dtype=np.int64)


# ------------------------------------------------------------ phase 3: merging
@dataclass(frozen=True, eq=False)
class Segments:
    """Per-(sub-)table quantities of eq. 9-12 for a stack of count vectors."""

    size: np.ndarray  # |T_i|
    m: np.ndarray  # m_i, distinct values
    top: np.ndarray  # largest count of a protected value
    rho1: np.ndarray  # rho1_i = top / size
    gamma: np.ndarray  # eq. 10 (inf when no protected value)
    p: np.ndarray  # eq. 4
    eps: np.ndarray  # eq. 12 (inf when rho1_i >= rho2)
    ok: np.ndarray  # rho1_i < rho2


def segments(counts: np.ndarray, protected: np.ndarray, rho2: float, delta: float) -> Segments:
    """rho1_i, gamma_i, p_i and eps_i of each row of ``counts`` (one row per (sub-)table).

    References
    ----------
    seed 002 eq. 4, 9, 10, 11-12.
    """
    counts = np.atleast_2d(np.asarray(counts, dtype=np.int64))
    size = counts.sum(axis=1)
    m = (counts > 0).sum(axis=1)
    top = np.where(protected, counts, 0).max(axis=1, initial=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho1 = np.where(size > 0, top / np.maximum(size, 1), 0.0)
        gamma = np.where(rho1 > 0, rho2 * (1 - rho1) / (rho1 * (1 - rho2)), np.inf)
        p = np.where(np.isinf(gamma), 1.0, (gamma - 1) / (m - 1 + gamma))
    ok = (rho1 < rho2) & (size > 0)
    eps = np.full(len(size), np.inf)
    if ok.any():
        eps[ok] = error_bound(size[ok], m[ok], gamma[ok], delta)
    return Segments(size=size, m=m, top=top, rho1=rho1, gamma=gamma, p=p, eps=eps, ok=ok)


def merge(ordered: np.ndarray, protected: np.ndarray, rho2: float, delta: float = 0.05,
          labels: Sequence | None = None) -> np.ndarray:
    """Optimal merge of consecutive groups (seed 002 eq. 14): the start of each sub-table.

    ``E[0] = 0``, ``E[i] = min_{r < i} E[r] + |g[r+1..i]|/|T| eps(g[r+1..i])``
    over runs with ``rho1 < rho2`` (others are not allowed).  O(t^2 m)
    with prefix sums.  Ties: the smallest r (the longer last run).

    Parameters
    ----------
    ordered : ndarray (t, m)
        Initial groups in band order.
    protected : ndarray (m,) of bool
        SA'.
    rho2, delta : float

    Returns
    -------
    ndarray (k + 1,) of int
        Run boundaries ``0 = b_0 < b_1 < ... < b_k = t``; sub-table j is
        ``ordered[b_j:b_{j+1}]``.

    Raises
    ------
    NotEligible
        No sequence of runs keeps rho1_i < rho2 (not even one run of
        everything), naming the protected value and share that block it.

    References
    ----------
    seed 002 §5.3, eq. 14, Example 4.
    """
    ordered = np.asarray(ordered, dtype=np.int64)
    t, m = ordered.shape
    prefix = np.vstack([np.zeros((1, m), dtype=np.int64), np.cumsum(ordered, axis=0)])
    n = float(prefix[-1].sum())
    best = np.full(t + 1, np.inf)
    best[0] = 0.0
    back = np.zeros(t + 1, dtype=np.int64)
    for i in range(1, t + 1):
        seg = segments(prefix[i] - prefix[:i], protected, rho2, delta)  # runs r+1..i for r = 0..i-1
        cost = best[:i] + seg.size / n * seg.eps
        r = int(np.argmin(cost))
        best[i], back[i] = cost[r], r
    if not np.isfinite(best[t]):
        whole = prefix[-1]
        x = int(np.argmax(np.where(protected, whole, -1)))
        name = f"'{labels[x]}'" if labels is not None else f"value {x}"
        share = whole[x] / n
        raise NotEligible(
            f"No partition keeps every sub-table's ρ₁ᵢ below ρ₂ = {rho2:.4g}: the protected value {name} has "
            f"{int(whole[x]):,} of {int(n):,} records ({share:.2%}), and some sub-table must hold at least that "
            f"share of it; choose ρ₂ above {share:.4g}.",
            suggestion={"rho2": float(np.ceil(share * 1000 + 1e-9) / 1000)} if share < 0.999 else None)
    cuts = [t]
    while cuts[-1] > 0:
        cuts.append(int(back[cuts[-1]]))
    return np.array(cuts[::-1], dtype=np.int64)


# ------------------------------------------------------------------- the plan
@dataclass(frozen=True, eq=False)
class Plan:
    """PP's partition of a count vector, with every derived quantity.

    ``counts[i, x]`` records of value x go to sub-table i (sub-tables in
    merge order); ``groups`` are the initial groups in creation order,
    ``order`` their band order and ``subtable_of_group`` the sub-table each
    initial group was merged into.
    """

    rho1: float
    rho2: float
    delta: float
    protected: np.ndarray
    theta: int
    groups: np.ndarray
    order: np.ndarray
    subtable_of_group: np.ndarray
    counts: np.ndarray
    size: np.ndarray
    m: np.ndarray
    rho1_i: np.ndarray
    gamma: np.ndarray
    p: np.ndarray
    eps: np.ndarray
    eps_part: float
    gamma_up: float
    p_up: float
    eps_up: float

    @property
    def retention(self) -> float:
        """Record-weighted mean retention: the chance a random record keeps its value."""
        return float(np.sum(self.size * self.p) / np.sum(self.size))

    @property
    def retention_mean(self) -> float:
        """Plain mean of p_i over sub-tables."""
        return float(np.mean(self.p))


def plan(counts: np.ndarray, rho1: float, rho2: float, delta: float = 0.05,
         rank: np.ndarray | None = None, labels: Sequence | None = None) -> Plan:
    """Algorithm PP on SA counts: balancing, rearranging, merging.

    Parameters
    ----------
    counts : ndarray (m,) of int
        Records per value (zeros allowed: such values are in no sub-table).
    rho1, rho2 : float
        Restricted (rho1, rho2)-privacy, ``0 < rho1 < rho2 < 1``.
    delta : float
        Confidence of the error bound.
    rank : ndarray (m,), optional
        Tie-break order of values (default index order; the mechanism
        passes :func:`natural_rank` of the labels).
    labels : sequence, optional
        Value names for messages.

    Raises
    ------
    ParameterError
        Unless ``0 < rho1 < rho2 < 1``.
    NotEligible
        No value is protected (every value is more frequent than rho1).

    References
    ----------
    seed 002 §5, Examples 1-4.

    Examples
    --------
    >>> pl = plan(np.array([12, 8, 6, 5, 4, 3, 1, 1, 1, 1]), 1/3, 2/3)   # Examples 1-4
    >>> pl.counts.tolist()
    [[12, 8, 6, 4, 4, 2, 0, 0, 0, 0], [0, 0, 0, 1, 0, 1, 1, 1, 1, 1]]
    >>> pl.gamma.tolist(), round(pl.eps_part, 4)
    ([4.0, 10.0], 2.0196)
    """
    counts = np.asarray(counts, dtype=np.int64)
    gamma_up = gamma_from_rho(rho1, rho2)  # validates 0 < rho1 < rho2 < 1
    if not 0 < delta < 1:
        raise ParameterError(f"The 'delta' parameter of sdr must be a number in (0, 1). Got {delta:g}.")
    if counts.ndim != 1 or np.count_nonzero(counts) < 1 or np.any(counts < 0):
        raise ParameterError("PP needs a list of non-negative record counts with at least one value present.")
    m = len(counts)
    n = int(counts.sum())
    protected = protected_values(counts, rho1)
    if not protected.any():
        present = np.flatnonzero(counts)
        x = int(present[np.argmin(counts[present])])
        name = f"'{labels[x]}'" if labels is not None else f"value {x}"
        share = counts[x] / n
        suggestion = {"rho1": float(np.ceil(share * 1000) / 1000)}
        if suggestion["rho1"] >= rho2:
            suggestion["rho2"] = float(min(0.99, np.ceil((suggestion["rho1"] + 1) / 2 * 100) / 100))
        raise NotEligible(
            f"Every value is more frequent than ρ₁ = {rho1:.4g}: the rarest, {name}, has {int(counts[x]):,} of "
            f"{n:,} records ({share:.2%}), so (ρ₁, ρ₂)-privacy protects no value; raise ρ₁ to at least "
            f"{share:.4g}.", suggestion=suggestion)
    rank = np.arange(m) if rank is None else np.asarray(rank)
    theta, groups = initial_groups(counts, protected, rank)
    order = rcm_order(groups)
    cuts = merge(groups[order], protected, rho2, delta, labels)
    k = len(cuts) - 1
    subtable_of_group = np.empty(len(groups), dtype=np.int64)
    for j in range(k):
        subtable_of_group[order[cuts[j]:cuts[j + 1]]] = j
    sub_counts = np.zeros((k, m), dtype=np.int64)
    np.add.at(sub_counts, subtable_of_group, groups)
    seg = segments(sub_counts, protected, rho2, delta)
    p_up = retention_from_gamma(gamma_up, m)
    return Plan(
        rho1=float(rho1), rho2=float(rho2), delta=float(delta), protected=protected, theta=theta,
        groups=groups, order=order, subtable_of_group=subtable_of_group, counts=sub_counts,
        size=seg.size, m=seg.m, rho1_i=seg.rho1, gamma=seg.gamma, p=seg.p, eps=seg.eps,
        eps_part=float(np.sum(seg.size * seg.eps) / n),
        gamma_up=float(gamma_up), p_up=float(p_up), eps_up=float(error_bound(n, m, gamma_up, delta)),
    )


def deal_positions(seed: int, sa: np.ndarray, rank: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Each record's place ``pi_x(rank)`` in its value's dealing order (purpose ``"sdr/deal"``).

    ``total[x]`` is the number of records of value x in the table.  The
    permutation of a value depends on the seed, the value and its count
    only, not on PP's partition, so these positions are the same for every
    rho2 (the app keeps them between slider moves, :mod:`core.engine.memo`).
    """
    from .. import shuffle

    sa = np.asarray(sa, dtype=np.int64)
    return shuffle.permute(seed, "sdr/deal", sa, np.asarray(rank), np.asarray(total, dtype=np.int64)[sa])


def deal_subtables(pl: Plan, seed: int, sa: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Sub-table of each record from its SA code and its rank among its value's records.

    PP fixes how many records of value x each sub-table gets
    (``pl.counts[:, x]``); which ones is a keyed random permutation of the
    value's ranks (:func:`core.shuffle.permute`, purpose ``"sdr/deal"``):
    the record of rank r takes position ``pi_x(r)`` and positions are dealt
    to sub-tables in order (:func:`core.shuffle.deal`).  Sub-table
    membership is therefore uniformly random given the SA value, whatever
    the input order, and independent of the QI values.
    """
    from .. import shuffle

    sa = np.asarray(sa, dtype=np.int64)
    held = pl.counts > 0
    sub = np.argmax(held, axis=0)[sa]  # a value held by one sub-table needs no draw
    mixed = np.flatnonzero(held.sum(axis=0)[sa] > 1)
    if len(mixed):
        x = sa[mixed]
        pos = shuffle.permute(seed, "sdr/deal", x, np.asarray(rank)[mixed], pl.counts.sum(axis=0)[x])
        sub[mixed] = shuffle.deal(pl.counts, x, pos)
    return sub


def perturb_subtables(pl: Plan, seed: int, start: int, sa: np.ndarray, sub: np.ndarray) -> np.ndarray:
    """UP inside each record's sub-table over its own values SA_i (records ``start ..``).

    On the sub-table's local codes ``0 .. m_i - 1`` (SA_i in code order):
    the record keeps its value with probability ``p_i``, otherwise takes a
    uniform one of SA_i, possibly its own (seed 002 eq. 1 with the
    sub-table's domain), the draw of :func:`core.mechanisms.uniform.perturb_keyed`
    (purpose ``"sdr"``, keyed by record position: first word keep, second
    the replacement), computed for the records that change only.
    """
    sa = np.asarray(sa)
    member = pl.counts > 0
    domain = np.nonzero(member)[1]  # the values of each sub-table in turn, code order
    first = np.cumsum(pl.m) - pl.m
    # perturb_keyed's draw on the local codes, worked out for the records that change only: a record that
    # keeps its local code keeps its value (domain[first[i] + local code of x in T_i] is x)
    u = _rng.uniforms(seed, "sdr", start, len(sa), 2)
    change = np.flatnonzero(u[:, 0] >= np.asarray(pl.p, dtype=np.float64)[sub])
    out = np.array(sa, copy=True)
    if len(change):
        s = np.asarray(sub)[change]
        m = np.asarray(pl.m, dtype=np.float64)[s]
        other = np.minimum(np.floor(u[change, 1] * m), m - 1).astype(np.int64)
        out[change] = domain[first[s] + other]
    return out


def dealing_places(seed: int, sa: np.ndarray, rank: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Each record's place in the whole table's dealing order: its value's offset plus :func:`deal_positions`.

    Values are laid out one after the other (value 0's ``total[0]`` places
    first), so with :func:`dealt` of a partition the record's sub-table is
    one lookup.  Independent of rho2, like :func:`deal_positions`.
    """
    total = np.asarray(total, dtype=np.int64)
    offset = np.cumsum(total) - total
    out = deal_positions(seed, sa, rank, total)
    out += offset[np.asarray(sa, dtype=np.int64)]
    return out


def dealt(counts: np.ndarray) -> np.ndarray:
    """The sub-table of every place of the dealing order (:func:`dealing_places`): :func:`core.shuffle.deal` written out.

    Value x's places ``0 .. total[x] - 1`` go to sub-table 0 for the first
    ``counts[0, x]``, then sub-table 1, and so on; one byte a record.
    """
    counts = np.asarray(counts, dtype=np.int64)
    k, m = counts.shape
    return np.repeat(np.tile(np.arange(k, dtype=np.uint8 if k <= 256 else np.int64), m), counts.T.ravel())


def _kept_places(summary, seed: int) -> np.ndarray | None:
    """Every record's :func:`dealing_places` from the app's memo (None: no memo, or not the local engine).

    Computed once per table and seed over the whole table (the records'
    ranks among their value's records, in input order: what the engine's
    batches carry), in the narrowest unsigned type.
    """
    memo, data = _memo.bind(summary), _memo.local_data(summary)
    if memo is None or data is None:
        return None

    def compute():
        sa = np.asarray(data.sa_codes, dtype=np.int64)
        total = np.bincount(sa, minlength=data.m)
        rank, _ = ranks(sa, data.m)
        return _memo.narrow(dealing_places(seed, sa, rank, total), max(1, int(data.n)))

    return memo(("sdr/places", int(seed)), compute)


class SDRPlan(EnginePlan):
    """SDR's plan: PP's partition; each record's sub-table from (SA, rank), then UP inside it (rank by SA).

    ``places`` (the local engine in the app only, :mod:`core.engine.memo`):
    every record's :func:`dealing_places`, kept between releases since they
    do not depend on rho2; a record's sub-table is then a lookup in
    :func:`dealt` of this partition (the same sub-table as
    :func:`deal_subtables`), and the engine ranks nothing.  Dropped when
    the plan is pickled (the Dask engine ranks the batches).
    """

    def __init__(self, seed: int, pp: Plan, sa: str, column: str, n: int, places: np.ndarray | None = None,
                 **fields):
        super().__init__(seed=seed, rank_by="sa" if places is None else None, **fields)
        self.pp, self.sa, self.column, self.n = pp, sa, column, n
        self.places = places
        self.dealt = None if places is None else dealt(pp.counts)

    def __getstate__(self):
        state = dict(self.__dict__)
        if state["places"] is not None:
            state["places"], state["dealt"], state["rank_by"] = None, None, "sa"
        return state

    def apply(self, chunk: Chunk) -> dict[str, np.ndarray]:
        if self.places is not None:
            sub = self.dealt[self.places[chunk.start:chunk.stop]]
        else:
            sub = deal_subtables(self.pp, self.seed, chunk.sa, chunk.rank)
        return {self.column: sub, self.sa: perturb_subtables(self.pp, self.seed, chunk.start, chunk.sa, sub)}

    def tally(self, chunk: Chunk, out) -> dict[str, int]:
        return {"unchanged": int(np.count_nonzero(out[self.sa] == chunk.sa))}

    def finish(self, totals) -> dict[str, Any]:
        return {"share_unchanged": totals.get("unchanged", 0) / self.n if self.n else 0.0}


def posterior_max(counts: np.ndarray, gamma: np.ndarray, values: np.ndarray) -> float:
    """Largest posterior Pr_i[X = x | Y = x] over sub-tables i and the ``values`` (mask) present in them.

    Inside T_i the prior of x is its share f there; UP over SA_i gives the
    posterior ``f gamma_i / (f gamma_i + 1 - f)`` after seeing x (the
    largest posterior of x over all outputs).  For protected values this is
    at most rho2 (Theorem 1: it equals rho2 for the value with share
    rho1_i); for unprotected values it is not bounded.
    """
    counts = np.asarray(counts, dtype=float)
    share = counts / counts.sum(axis=1, keepdims=True)
    g = np.asarray(gamma, dtype=float)[:, None]
    with np.errstate(invalid="ignore"):
        post = np.where(np.isinf(g), 1.0, share * g / (share * g + 1 - share))
    post = np.where((counts > 0) & np.asarray(values, dtype=bool)[None, :], post, 0.0)
    return float(post.max(initial=0.0))


# ------------------------------------------------------------- the mechanism
class SDR(Mechanism):
    """Small domain randomization (algorithm PP) as a :class:`core.mechanisms.base.Mechanism`.

    References
    ----------
    seed 002 §4-5, appendix 10.10; MECHANISMS.md section 3.
    """

    name = "sdr"
    title = "Small domain randomization (PP)"
    paper = "seed 002 (Chaytor & Wang, small domain randomization)"
    summary = ("The table is split into sub-tables that each contain few different sensitive values, and "
               "every record is then randomised only among the values of its own sub-table. The same "
               "(ρ₁, ρ₂)-privacy as uniform perturbation then allows a much higher chance of keeping the true "
               "value, so counts come out more accurate. Each sub-table is published with its list of values, "
               "γᵢ and pᵢ.")
    order = 15
    params = (RHO1, RHO2, DELTA)
    main_param = "rho2"
    sweep = (1 / 6, 1 / 5, 1 / 4, 1 / 3)
    bounds = ("sdr-error", "retention")

    def check_params(self, values: dict[str, Any]) -> None:
        check_rho(values, self.name)

    def pp(self, data: Dataset, values: Mapping[str, Any]) -> Plan:
        """PP on the table's SA counts (deterministic; cheap: counts only)."""
        return plan(data.sa_counts, values["rho1"], values["rho2"], values["delta"],
                    rank=natural_rank(data.sa_labels), labels=data.sa_labels)

    def derived(self, data: Dataset, values: Mapping[str, Any]) -> dict[str, Any]:
        gamma_up = gamma_from_rho(values["rho1"], values["rho2"])
        out: dict[str, Any] = {"gamma_up": gamma_up, "retention_up": retention_from_gamma(gamma_up, data.m)}
        try:
            pl = self.pp(data, values)
        except NotEligible:  # shown live; check() reports why
            return out
        out.update({
            "subtables": len(pl.size),
            "retention_pp": pl.retention,
            "eps_part": pl.eps_part,
            "eps_up": pl.eps_up,
            "initial_groups": len(pl.groups),
            "theta_balance": pl.theta,
        })
        return out

    def check(self, data: Dataset, values: Mapping[str, Any]) -> None:
        self.pp(data, values)

    planned = True

    def plan(self, summary: Combos, values: Mapping[str, Any], seed: int) -> SDRPlan:
        """PP, then UP inside each sub-table over its own values; publish the sub-tables with SA_i, gamma_i, p_i.

        Records of value x are dealt to sub-tables by a keyed random
        permutation of the value's ranks (:func:`deal_subtables`;
        ``plan.counts[:, x]`` of them to each); every record keeps its
        value with probability p_i of its sub-table, otherwise takes a value
        drawn uniformly from SA_i (possibly its own; :func:`perturb_subtables`).
        Rows are published in the order of :func:`core.rng.order_keys`; the
        ``subtable`` column names each row's sub-table.

        Privacy checks (manifest): the largest rho1_i (must be below rho2),
        the largest posterior of a protected value (at most rho2 by
        Theorem 1), and, when some values are too frequent to be protected
        (share above rho1), which ones and their largest posterior;
        ``share_unchanged`` is tallied over the records.

        References
        ----------
        seed 002 §4.1 (eq. 9-10), §3.1 (eq. 1, 4), Corollary 1, appendix 10.3.
        """
        pl = self.pp(summary, values)
        n, m = summary.n, summary.m
        k = len(pl.size)
        member = pl.counts > 0
        sa_labels = summary.sa_labels
        column = _free_name("subtable", [*summary.qi_names, summary.sa_name])
        names = np.array([f"T{i + 1}" for i in range(k)], dtype=object)
        natural = np.argsort(natural_rank(sa_labels), kind="stable")
        subtables = [{
            "name": str(names[i]),
            "values": [str(sa_labels[x]) for x in natural if member[i, x]],
            "rows": int(pl.size[i]),
            "m": int(pl.m[i]),
            "rho1": float(pl.rho1_i[i]),
            "gamma": float(pl.gamma[i]),
            "p": float(pl.p[i]),
            "eps": float(pl.eps[i]),
        } for i in range(k)]
        unprotected = ~pl.protected & (summary.sa_counts > 0)
        privacy: dict[str, Any] = {
            "rho1": pl.rho1,
            "rho2": pl.rho2,
            "protected_values": int(pl.protected.sum()),
            "largest_rho1_i": float(pl.rho1_i.max()),
            "every_rho1_i_below_rho2": bool(np.all(pl.rho1_i < pl.rho2)),
            "max_posterior_protected": posterior_max(pl.counts, pl.gamma, pl.protected),
        }
        notes = [f"PP split the {n:,} records into {k} sub-table{'s' if k != 1 else ''} with "
                 f"{_range(pl.m)} distinct values each; a record keeps its value with probability "
                 f"{pl.retention:.1%} on average (record-weighted), against {pl.p_up:.1%} for uniform "
                 f"perturbation over all {m:,} values at the same (ρ₁, ρ₂)."]
        if unprotected.any():
            names_up = [str(v) for v in sa_labels[unprotected]]
            privacy["unprotected_values"] = names_up
            privacy["max_posterior_unprotected"] = posterior_max(pl.counts, pl.gamma, unprotected)
            shown = ", ".join(f"'{v}'" for v in names_up[:5]) + (" …" if len(names_up) > 5 else "")
            notes.append(f"{len(names_up)} value{'s are' if len(names_up) > 1 else ' is'} more frequent than "
                         f"ρ₁ = {pl.rho1:.4g} and therefore not protected by (ρ₁, ρ₂)-privacy ({shown}); "
                         f"PP balances the protected values only (seed 002 appendix 10.7).")
        published = {
            "subtables": subtables,
            "subtable_column": column,
            "eps_part": pl.eps_part,
            "delta": pl.delta,
        }
        return SDRPlan(
            seed, pl, summary.sa_name, column, n, places=_kept_places(summary, seed),
            labels={column: names, summary.sa_name: sa_labels},
            published=published,
            privacy=privacy,
            notes=tuple(notes),
            state={"column": column, "p": pl.p.copy(), "m": pl.m.copy(), "member": member},
        )

    # ------------------------------------------------------------ guarantee
    def promise(self, values: Mapping[str, Any]) -> str:
        return (f"Restricted (ρ₁, ρ₂)-privacy with ρ₁ = {values['rho1']:.4g}, ρ₂ = {values['rho2']:.4g} in every "
                f"sub-table: a value held by at most a share ρ₁ of the table is believed with probability at most "
                f"ρ₂ after seeing a record's published value in its sub-table (seed 002 §4.1, Corollary 1).")

    def guarantee(self, data: Dataset, values: Mapping[str, Any], release: Release) -> G.Verdict:
        """Posterior of every protected value in every published sub-table (module docstring)."""
        pl = self.pp(data, values)
        subs = release.published["subtables"]
        p = np.array([t["p"] for t in subs], dtype=float)
        m = np.array([t["m"] for t in subs], dtype=float)
        q = (1 - p) / m
        gamma = np.where(q > 0, (p + q) / np.where(q > 0, q, 1), np.inf)
        counts = pl.counts.astype(float)
        share = counts / counts.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", over="ignore"):
            post = np.where(np.isinf(gamma)[:, None], 1.0, share * gamma[:, None] / (share * gamma[:, None] + 1 - share))
        prot = (counts > 0) & pl.protected[None, :]
        worst = np.where(prot, post, 0.0).max(axis=1)
        rho2 = float(values["rho2"])
        bad = worst > rho2 + 1e-9
        figures = {"subtables": int(len(subs)), "largest_posterior_protected": float(worst.max(initial=0.0)),
                   "rho2": rho2, "largest_rho1_i": float(pl.rho1_i.max()), "retention": float(pl.retention)}
        fail = None
        if bad.any():
            fail = G.failure(f"posterior ≤ ρ₂ = {rho2:.4g} for protected values", float(worst.max()), rho2,
                             int(bad.sum()), len(subs), f"sub-tables ({int(pl.size[bad].sum()):,} records)")
        unprotected = ~pl.protected & (data.sa_counts > 0)
        outside = None
        if unprotected.any():
            top = float(np.where((counts > 0) & unprotected[None, :], post, 0.0).max())
            recs = int(data.sa_counts[unprotected].sum())
            outside = {"values": [str(v) for v in data.sa_labels[unprotected]], "records": recs, "of": data.n,
                       "largest_posterior": top,
                       "why": (f"for values with a share ≤ ρ₁ only: {int(unprotected.sum())} value(s) with "
                               f"{recs:,} records are more frequent than ρ₁, so (ρ₁, ρ₂)-privacy says nothing "
                               f"about them (posterior up to {top:.3g})")}
        return G.judge(self.name, self.promise(values), figures, [fail], outside=outside,
                       explains=G.restating(release.notes, "not protected by (ρ₁, ρ₂)-privacy"))

    # ------------------------------------------------------------ estimation
    def _records(self, release: Release) -> tuple[Records, Records]:
        """(records weighted 1/p_i with the SA as target, records with the sub-table as target)."""
        cache = release.state.setdefault("_records", {})
        if "sdr" not in cache:
            t = release.tables["release"]
            sa, qi, column = release.source["sensitive"], list(release.source["qi"]), release.state["column"]
            p = np.asarray(release.state["p"], dtype=float)
            # the published (QI..., SA, sub-table) cells with their record counts first (a Dask table: its
            # distinct rows, weighted by their counts), so both engines weight the same cells by count / p_i
            rows, count = rows_of(t)
            names = [*qi, sa, column]
            cells, total = distinct_rows([rows[c] for c in names], [len(t.labels[c]) for c in names],
                                         None if count is None else np.asarray(count, dtype=float))
            total = np.rint(total).astype(float)
            q_cells, target, sub = cells[:-2], cells[-2], cells[-1]
            domains = [len(t.labels[c]) for c in qi]
            groups = cache.get(SHARED_GROUPS)  # coded by the table's QI groups when shared
            weighted = Records.on_rows(q_cells, domains, target, len(t.labels[sa]), total / p[sub], groups=groups)
            by_sub = Records.on_rows(q_cells, domains, sub, len(p), total, groups=groups)
            cache["sdr"] = (weighted, by_sub)
        return cache["sdr"]

    def estimate(self, release: Release, batch: QueryBatch, rng: np.random.Generator) -> np.ndarray:
        """Sum over sub-tables of UP's unbiased estimate (seed 002 eq. 7, appendix 10.10).

        For sub-table i with observed count ``O_i`` of the selected values
        among its ``|S_i|`` records matching the condition:
        ``(O_i - s_i |S_i| (1 - p_i)/m_i) / p_i``, with ``s_i`` the number of
        selected values in SA_i (0 when none is: such a sub-table adds
        nothing).  Summed: ``sum O_i/p_i`` (records weighted 1/p_i) minus
        ``sum_i |S_i| s_i (1 - p_i)/(m_i p_i)``; both from one vectorised
        count each (:func:`core.mechanisms.uniform.mle` gives the second).
        """
        weighted, by_sub = self._records(release)
        p = np.asarray(release.state["p"], dtype=float)
        m = np.asarray(release.state["m"], dtype=float)
        member = np.asarray(release.state["member"], dtype=float)
        observed = select(weighted.counts(batch), batch.sa)  # sum_i O_i / p_i
        sizes = by_sub.counts(batch)  # |S_i|: (Q, k)
        selected = batch.sa.astype(float) @ member.T  # s_i: (Q, k)
        # UP's estimator is linear in O: mle(O, S, s, p, m) = O/p + mle(0, S, s, p, m)
        return observed + mle(0.0, sizes, selected, p, m).sum(axis=1)

    def estimate_grid(self, release: Release, conditions: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        """:meth:`estimate` of the grid, each condition counted once: value v selects ``member[:, v]`` of the sub-tables.

        Worked in blocks of conditions of at most ``GRID_CELLS`` (condition,
        value, sub-table) terms (the hospital sample: 749 values in 41
        sub-tables, 31,000 terms a condition).
        """
        weighted, by_sub = self._records(release)
        p = np.asarray(release.state["p"], dtype=float)
        mm = np.asarray(release.state["m"], dtype=float)
        member = np.asarray(release.state["member"], dtype=float)
        observed = grid_select(grid_counts(weighted, conditions))  # (C, m)
        sizes = grid_counts(by_sub, conditions)  # (C, k)
        selected = np.ascontiguousarray(member.T)  # (m, k): the sub-tables value v is in (a one-hot row of batch.sa @ member.T)
        step = max(1, self.GRID_CELLS // max(selected.size, 1))
        rest = np.concatenate([mle(0.0, sizes[c:c + step, None, :], selected[None], p, mm).sum(axis=2)
                               for c in range(0, len(sizes), step)] or [np.zeros((0, selected.shape[0]))])
        return observed + rest

    #: (condition, value, sub-table) terms :meth:`estimate_grid` computes at a time (8 bytes each)
    GRID_CELLS = 4_000_000


def _free_name(name: str, taken: Sequence[str]) -> str:
    while name in taken:
        name += "_"
    return name


def _range(values: np.ndarray) -> str:
    lo, hi = int(values.min()), int(values.max())
    return f"{lo}" if lo == hi else f"{lo} to {hi}"


MECHANISMS = [SDR()]
