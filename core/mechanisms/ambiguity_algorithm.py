"""Ambiguity and PriView (seed 004): greedy QI-groups, privacy measures, Fig. 5 estimation.

Everything here works on integer codes and is shared by the two mechanisms
in :mod:`core.mechanisms.ambiguity`, their Sanitize views and the
possible-worlds attack.

Construction (seed 004 section 7, :func:`build_groups`)
------------------------------------------------------
Records are hashed into one bucket per SA value; buckets are taken largest
first.  A group takes one record from each of the ``l = ceil(1/beta)``
buckets with most unpicked records, each time the record that adds most new
QI values (largest product of the per-attribute distinct counts, i.e. the
smallest presence, Fig. 7); while its presence exceeds alpha it takes one
more record from the next largest bucket it does not hold yet.  This repeats
until fewer than ``l`` non-empty buckets remain; the residue (step 3) goes to
a group that lacks its SA value and stays within alpha.  Every SA value
occurs at most once per group, so each group is ``l``-diverse (Theorem 5)
and its association is ``1/|G| <= beta`` (Theorem 4).

Choices where the paper is silent (documented, tested):

* pick() (Fig. 7) scans every unpicked record for every pick, which is
  quadratic.  Ours scores a window of ``candidates`` unpicked records of the
  current bucket only (the bucket is in a seeded random order), vectorised
  with numpy; ``candidates = 1`` is a random pick.
* Groups are built in batches: the bucket schedule is the paper's (water
  filling on the unpicked counts, computed exactly on counts first), and
  the records are then picked for a whole batch of groups at once, each group
  from its own disjoint window of each bucket.
* A group that cannot reach alpha even with one record of every bucket is
  dissolved and its records join the residue.
* A residue record goes to the eligible group with the smallest resulting
  presence (ties: the lowest group number); residue is processed in a
  seeded random order.  A record that fits nowhere is *unplaced*: it is not
  published, and the release reports how many and of which values.
* PriView uses the same construction with Theorem 6's presence
  ``|G| / (|G_AT| |G_ST|)``.  With the AT published as one row per record
  (seed 004 Fig. 9a, ``|G_AT| = |G|``) and distinct SA values per group
  (``|G_ST| = |G|``) that is ``1/|G|``: groups take
  ``max(ceil(1/beta), ceil(1/alpha))`` records.  Presence then does not
  depend on which values a group covers, so the pick rule cannot lower it;
  we keep Ambiguity's rule (most new QI values), which makes the partition
  independent of the split A_j.  The split is chosen by :func:`split_losses`.

Where the paper is wrong (PriView, Theorem 6)
---------------------------------------------
The ST of PriView carries (A_j, SA) together.  An adversary who knows a
target's A_j value ``a`` only considers the ST rows with that value, so the
exact association from the published tables is
``Pr(s | t in T) = c(G, a, s) / c(G, a)``, not ``c(G, s) / |G|``: when ``a``
occurs once in the group it is 1 (Fig. 9: Alan, zip 11000, has diabetes
with certainty if present).  Likewise the exact presence of a person
``(q, a)`` when the group's records are paired uniformly at random
(possible worlds consistent with AT and ST) is
``1 - C(|G| - c(a), n_q) / C(|G|, n_q)`` (``n_q`` AT rows equal ``q``),
not ``1/|G|`` (Fig. 9 group 2: Grace (60, F, 23000) has 5/6).
:func:`priview_stats` reports both, the paper's formula beside the exact
value.

References
----------
Hui Wang, "Privacy-preserving data sharing in cloud computing", JCST 25(3),
2010 (seed 004): Theorems 1, 2, 4-6, Figs. 2, 5, 7-9, sections 6-8;
MECHANISMS.md section 5.
"""

from __future__ import annotations

import heapq
import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

import numpy as np
from scipy import sparse
from scipy.special import gammaln

from ..counting import QueryBatch, Records, select, unique_rows

#: relative tolerance on presence/association comparisons (products are exact in float64 here)
_TOL = 1e-12
#: queries x groups evaluated at once by the Ambiguity estimator
_CELLS = 8_000_000
#: set conditions: multiply over every group when queries x groups <= this x the groups read
_FULL_PRODUCT = 32
#: shared-row estimation is sparse when the narrowest attribute leaves at most this share of rows x groups
_SPARSE_SHARE = 0.2
#: ... and reads only the (row, group) pairs whose group also lists the row's value of the next most selective
#: attribute (False: every pair of the narrowest attribute, the pass the tests compare with)
_PAIR_FILTER = True


def diversity(beta: float) -> int:
    """``ceil(1/beta)``, robust to 1/7 written as 0.142857...

    >>> diversity(0.1), diversity(1 / 7), diversity(0.025), diversity(0.3)
    (10, 7, 40, 4)
    """
    return int(math.ceil(1.0 / beta - 1e-9))


def presence_size(alpha: float) -> int:
    """Smallest |G| with 1/|G| <= alpha (PriView, Theorem 6)."""
    return int(math.ceil(1.0 / alpha - 1e-9))


@dataclass(frozen=True, eq=False)
class Grouping:
    """Result of :func:`build_groups`: a group per record (-1 = unplaced)."""

    group: np.ndarray
    n_groups: int
    residue: int          # records left after step 2 (incl. dissolved groups)
    residue_placed: int   # of which step 3 placed
    dissolved: int        # groups that could not reach alpha
    #: what is computed from the groups alone (PriView's split losses), kept with them: a grouping kept between
    #: slider moves (:func:`priview_groups`) brings its figures along
    derived: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def unplaced(self) -> np.ndarray:
        return np.flatnonzero(self.group < 0)


def _log_presence(size, k) -> np.ndarray:
    """log(|G| / prod_i k_i) (Theorem 1)."""
    return np.log(size) - np.log(np.maximum(k, 1)).sum(axis=-1)


def build_groups(qi_codes: Sequence[np.ndarray], domains: Sequence[int], sa: np.ndarray, m: int,
                 beta: float, alpha: float, kind: str = "ambiguity", candidates: int = 32,
                 rng: np.random.Generator | None = None, batch: int = 1024) -> Grouping:
    """Seed 004 section 7, steps 1-3 (see the module docstring for the choices).

    ``kind="ambiguity"`` checks Theorem 1's presence ``|G| / prod_i |G_ATi|``;
    ``kind="priview"`` Theorem 6's ``1/|G|``.
    """
    rng = np.random.default_rng(rng)
    sa, X, off, D = _coded(qi_codes, domains, sa)
    n = len(sa)
    l = diversity(beta)
    slots = l if kind == "ambiguity" else max(l, presence_size(alpha))
    log_alpha = math.log(alpha) + _TOL
    K = max(1, int(candidates))

    queues, remaining = _value_queues(rng, sa, m)
    group = np.full(n, -1, dtype=np.int64)
    picked = np.zeros(n, dtype=bool)

    def presence_ok(size, k):
        if kind == "ambiguity":
            return _log_presence(size, k) <= log_alpha
        return -np.log(size) <= log_alpha

    n_groups, dissolved, leftovers = _greedy(X, D, slots, K, queues, remaining, group, picked, presence_ok, batch)
    residue = np.concatenate([q for q in queues] + leftovers) if n else np.zeros(0, np.int64)
    residue = residue[rng.permutation(len(residue))]
    placed_residue = _place_residue(residue, group, n_groups, X, off, D, sa, m, alpha, kind)
    return Grouping(group=group, n_groups=n_groups, residue=len(residue), residue_placed=placed_residue,
                    dissolved=dissolved)


def _coded(qi_codes: Sequence[np.ndarray], domains: Sequence[int], sa: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(sa as int64, X, offsets, D)``: each record's QI codes offset into one range of ``D`` codes."""
    sa = np.asarray(sa, dtype=np.int64)
    n, d = len(sa), len(domains)
    off = np.concatenate([[0], np.cumsum(domains)[:-1]]).astype(np.int64)
    X = (np.stack([np.asarray(c, dtype=np.int64) for c in qi_codes], axis=1) + off) if d else np.zeros((n, 0), np.int64)
    return sa, X, off, int(sum(domains))


def _value_queues(rng: np.random.Generator, sa: np.ndarray, m: int) -> tuple[list, np.ndarray]:
    """Step 1: the records of each SA value in a random order (one permutation of all records), and their counts."""
    perm = rng.permutation(len(sa))
    order = perm[np.argsort(sa[perm], kind="stable")]
    bounds = np.searchsorted(sa[order], np.arange(m + 1))
    queues = [order[bounds[v]:bounds[v + 1]] for v in range(m)]
    return queues, np.array([len(q) for q in queues], dtype=np.int64)


def _greedy(X: np.ndarray, D: int, slots: int, K: int, queues: list, remaining: np.ndarray, group: np.ndarray,
            picked: np.ndarray, presence_ok, batch: int, trace: list | None = None) -> tuple[int, int, list]:
    """Step 2 of :func:`build_groups`: groups of ``slots`` buckets, ``batch`` groups at a time, each record picked
    greedily among ``K`` candidates; a group that fails ``presence_ok`` is extended, else dissolved.

    Changes ``queues``, ``remaining``, ``group`` and ``picked`` in place;
    returns ``(groups made, groups dissolved, their records)``.  ``trace``
    collects each batch's distinct-value counts ``k`` before the test (what
    :func:`ambiguity_groups` tests other alphas on).
    """
    d = X.shape[1]
    n_groups = 0
    dissolved = 0
    leftovers: list[np.ndarray] = []
    while True:
        # the paper's bucket schedule, on counts: each group takes the `slots` largest buckets
        # (in Python on the m counts: a stable sort by count, largest first, ties by value as np.argsort's)
        S = _schedule(remaining, slots, batch)
        if not len(S):
            break
        B = len(S)
        rows = np.arange(B)
        cand = np.full((B, slots, K), -1, dtype=np.int64)
        for v in np.unique(S):
            bs, js = np.nonzero(S == v)
            q = queues[v]
            w = min(K, len(q) // len(bs))
            cand[bs, js, :w] = q[: w * len(bs)].reshape(len(bs), w)
        seen = np.zeros(B * D, dtype=bool)                        # (B, D) flat: seen[b * D + code]
        base = (rows * D)[:, None]
        k = np.zeros((B, d))
        members = np.empty((B, slots), dtype=np.int64)
        for j in range(slots):
            c = cand[:, j, :]
            valid = c >= 0
            codes = X[np.where(valid, c, 0)]                      # (B, K, d)
            new = (~seen[base[:, :, None] + codes]).astype(np.float64)  # 1.0 where the value is new to the group
            gain = np.log((k + 1) / np.maximum(k, 1))             # log((k+1)/k); 0 for an empty group
            score = np.einsum("bkd,bd->bk", new, gain)            # the same sums as on the booleans, 4x faster
            score[~valid] = -np.inf
            p = np.argmax(score, axis=1)
            rec = c[rows, p]
            members[:, j] = rec
            k += new[rows, p]
            seen[base + X[rec]] = True
        picked[members.ravel()] = True
        for v in np.unique(S):
            q = queues[v]
            queues[v] = q[~picked[q]]
            remaining[v] = len(queues[v])
        if trace is not None:
            trace.append(k.copy())
        ok = presence_ok(np.full(B, float(slots)), k)
        good = np.flatnonzero(ok)
        group[members[good]] = (n_groups + np.arange(len(good)))[:, None]
        n_groups += len(good)
        for b in np.flatnonzero(~ok):  # rare: extend with further buckets, one record at a time
            mem = list(members[b])
            used = set(S[b].tolist())
            g_seen, g_k = seen[b * D:(b + 1) * D].copy(), k[b].copy()
            while not presence_ok(float(len(mem)), g_k):
                avail = [v for v in np.argsort(-remaining, kind="stable") if remaining[v] > 0 and v not in used]
                if not avail:
                    break
                v = int(avail[0])
                q = queues[v]
                win = q[:K]
                new = ~g_seen[X[win]]
                gain = np.log((g_k + 1) / np.maximum(g_k, 1))
                p = int(np.argmax(new @ gain))
                rec = int(win[p])
                g_k += new[p]
                g_seen[X[rec]] = True
                mem.append(rec)
                used.add(v)
                picked[rec] = True
                queues[v] = np.delete(q, p)
                remaining[v] -= 1
            if presence_ok(float(len(mem)), g_k):
                group[mem] = n_groups
                n_groups += 1
            else:
                dissolved += 1
                leftovers.append(np.array(mem, dtype=np.int64))
    return n_groups, dissolved, leftovers


@dataclass(frozen=True, eq=False)
class _Greedy:
    """Step 2 of Ambiguity's construction with every group passing (:func:`ambiguity_groups`)."""

    group: np.ndarray
    n_groups: int
    queues: tuple            # what is left of each value's records after step 2
    ks: tuple                # each batch's distinct-value counts, before the presence test
    slots: int


def ambiguity_groups(qi_codes: Sequence[np.ndarray], domains: Sequence[int], sa: np.ndarray, m: int,
                     beta: float, alpha: float, candidates: int = 32, rng: np.random.Generator | None = None,
                     memo=None, batch: int = 1024) -> Grouping:
    """:func:`build_groups` with ``kind="ambiguity"``, its step 2 kept in ``memo`` (:mod:`core.engine.memo`).

    Step 2 reads alpha only in the presence test of each finished group: a
    group that fails it is extended, which changes what the next groups
    draw from.  So the greedy pass is run once per (beta, candidates,
    generator state) as if every group passed, keeping each batch's
    distinct-value counts; a slider move of alpha tests those counts, and
    when every group passes at this alpha (a group failing is rare) step 2's
    outcome is the kept one and only step 3 runs.  Otherwise the whole
    construction runs for this alpha.  The same groups, residue and draws of
    ``rng`` as :func:`build_groups` either way (tested).  On Adult the
    Sanitize page's sanitization of a move of alpha went from 0.21-0.25 s
    to 0.03-0.06 s (AppTest).  An alpha some group fails runs step 2 a
    second time when it is the first asked (the kept pass, then its own).
    """
    rng = np.random.default_rng(rng)
    if memo is None:
        return build_groups(qi_codes, domains, sa, m, beta, alpha, kind="ambiguity", candidates=candidates, rng=rng,
                            batch=batch)
    sa, X, off, D = _coded(qi_codes, domains, sa)
    n = len(sa)
    K = max(1, int(candidates))

    def speculate() -> _Greedy:
        own = np.random.default_rng()
        own.bit_generator.state = rng.bit_generator.state  # the caller's draws, without advancing its generator
        queues, remaining = _value_queues(own, sa, m)
        group = np.full(n, -1, dtype=np.int64)
        ks: list[np.ndarray] = []
        made, _, _ = _greedy(X, D, diversity(beta), K, queues, remaining, group, np.zeros(n, dtype=bool),
                             lambda size, k: np.ones(len(k), dtype=bool), batch, trace=ks)
        return _Greedy(group, made, tuple(queues), tuple(ks), diversity(beta))

    key = ("ambiguity/greedy", diversity(beta), K, int(batch), _rng_state(rng))
    got = memo(key, speculate)
    log_alpha = math.log(alpha) + _TOL
    if not all(bool(np.all(_log_presence(np.full(len(k), float(got.slots)), k) <= log_alpha)) for k in got.ks):
        return build_groups(qi_codes, domains, sa, m, beta, alpha, kind="ambiguity", candidates=candidates, rng=rng,
                            batch=batch)
    rng.permutation(n)  # the draw build_groups makes first (the records' order)
    group = got.group.copy()
    residue = np.concatenate(got.queues) if n else np.zeros(0, np.int64)
    residue = residue[rng.permutation(len(residue))]
    placed = _place_residue(residue, group, got.n_groups, X, off, D, sa, m, alpha, "ambiguity")
    return Grouping(group=group, n_groups=got.n_groups, residue=len(residue), residue_placed=placed, dissolved=0)


def _schedule(remaining: np.ndarray, slots: int, batch: int) -> np.ndarray:
    """The next ``batch`` (or fewer) groups' buckets: each takes the ``slots`` largest of ``remaining``.

    Group after group takes the ``slots`` values with the most records left
    (ties by value, smaller first: a stable sort of the counts, largest
    first), one record from each, while ``slots`` values have records left.
    A ``(groups, slots)`` array, each row in that order.  The values are
    kept in a heap on (count descending, value ascending), so a group costs
    ``slots`` pops and pushes rather than a sort of all m counts.
    """
    heap = [(-int(c), v) for v, c in enumerate(np.asarray(remaining).tolist()) if c > 0]
    heapq.heapify(heap)
    rows: list[list[int]] = []
    pop, push = heapq.heappop, heapq.heappush
    while len(rows) < batch and len(heap) >= slots:
        taken = [pop(heap) for _ in range(slots)]
        rows.append([v for _, v in taken])
        for c, v in taken:
            if c < -1:
                push(heap, (c + 1, v))
    if not rows:
        return np.zeros((0, slots), dtype=np.int64)
    return np.array(rows, dtype=np.int64)


def priview_groups(qi_codes: Sequence[np.ndarray], domains: Sequence[int], sa: np.ndarray, m: int,
                   beta: float, alpha: float, candidates: int = 32, rng: np.random.Generator | None = None,
                   memo=None) -> Grouping:
    """:func:`build_groups` with ``kind="priview"``, kept in ``memo`` (:mod:`core.engine.memo`) when given.

    PriView's construction reads alpha only through the group size
    ``max(ceil(1/beta), ceil(1/alpha))`` and the test ``1/|G| <= alpha`` on
    whole sizes, so two alphas with the same smallest size that passes
    (:func:`_smallest_size`) and the same ``ceil(1/alpha)`` give the same
    groups: a slider move of alpha between them reuses the groups (and
    advances ``rng`` by the same draws, so what is drawn next is unchanged).
    """
    rng = np.random.default_rng(rng)

    def build() -> Grouping:
        return build_groups(qi_codes, domains, sa, m, beta, alpha, kind="priview", candidates=candidates, rng=rng)

    if memo is None:
        return build()
    n = len(sa)
    ran: list[bool] = []
    key = ("priview/groups", diversity(beta), presence_size(alpha), _smallest_size(alpha, n),
           max(1, int(candidates)), _rng_state(rng))
    got = memo(key, lambda: (ran.append(True), build())[1])
    if not ran:  # the draws build_groups makes: the records' order, then the residue's
        rng.permutation(n)
        rng.permutation(got.residue)
    return got


def _smallest_size(alpha: float, n: int) -> int:
    """The smallest whole size s with PriView's presence test ``-log(s) <= log(alpha) + tolerance`` true
    (``n + 2`` when none up to ``n + 1`` is), computed with the same expression as :func:`build_groups`."""
    log_alpha = math.log(alpha) + _TOL
    s = max(1, min(presence_size(alpha), n + 2))
    while s > 1 and -np.log(float(s - 1)) <= log_alpha:
        s -= 1
    while s <= n + 1 and not -np.log(float(s)) <= log_alpha:
        s += 1
    return s


def _place_residue(residue, group, G, X, off, D, sa, m, alpha, kind) -> int:
    """Step 3: each residue record to a group lacking its SA value whose presence stays <= alpha.

    A record whose SA value every group already holds is skipped up front: a
    group never loses a value, so such a record fits nowhere whenever its
    turn comes (the same result as trying it in turn; on Adult at α = β = 0.1
    that is all 16,942 residue records).
    """
    if len(residue) == 0 or G == 0:
        return 0
    inside = np.flatnonzero(group >= 0)
    g = group[inside]
    has_sa = np.zeros((G, m), dtype=bool)
    has_sa[g, sa[inside]] = True
    residue = residue[~has_sa.all(axis=0)[sa[residue]]]
    if len(residue) == 0:
        return 0
    size = np.bincount(g, minlength=G).astype(float)
    seen = np.zeros((G, D), dtype=bool)
    seen[g[:, None], X[inside]] = True
    k = np.add.reduceat(seen, off, axis=1).astype(float) if X.shape[1] else np.zeros((G, 0))
    log_alpha = math.log(alpha) + _TOL
    placed = 0
    for t in residue:
        ok = ~has_sa[:, sa[t]]
        if not ok.any():
            continue
        new = ~seen[:, X[t]]
        if kind == "ambiguity":
            logp = np.log(size + 1) - np.log(k + new).sum(axis=1)
        else:
            logp = -np.log(size + 1)
        ok &= logp <= log_alpha
        if not ok.any():
            continue
        best = int(np.argmin(np.where(ok, logp, np.inf)))
        group[t] = best
        size[best] += 1
        k[best] += new[best]
        seen[best, X[t]] = True
        has_sa[best, sa[t]] = True
        placed += 1
    return placed


# ------------------------------------------------------------------ feasibility
def placeable(sa_counts: np.ndarray, beta: float, min_size: int = 0) -> dict:
    """How many records groups with distinct SA values and >= ceil(1/beta) of them can hold.

    With g groups each value x contributes at most ``min(c_x, g)`` records
    and the groups need ``l g`` of them; the largest feasible g gives the
    maximum.  Every record fits iff ``l * max c_x <= N``; the smallest beta
    that places all is ``1 / floor(N / max c_x)`` (any beta-association
    partition needs ``max c_x / N <= beta`` anyway).  ``min_size`` raises the
    group size (PriView: ``ceil(1/alpha)``).
    """
    c = np.sort(np.asarray(sa_counts, dtype=np.int64))[::-1]
    c = c[c > 0]
    n, l = int(c.sum()), max(diversity(beta), int(min_size))
    best_g, best = 0, 0
    if len(c) >= l:
        lo, hi = 0, int(c[0])
        while lo < hi:  # largest g with sum(min(c, g)) >= l g (the left side is concave in g)
            mid = (lo + hi + 1) // 2
            if np.minimum(c, mid).sum() >= l * mid:
                lo = mid
            else:
                hi = mid - 1
        best_g = lo
        best = int(np.minimum(c, best_g).sum()) if best_g else 0
    per = n // int(c[0]) if len(c) else 0
    beta_all = (1.0 / per) if per >= 1 and per >= min_size else None
    lo, hi = 0, n  # any partition whose groups have shares <= beta: P <= sum_x min(c_x, beta P) (concave)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if np.minimum(c, beta * mid + 1e-9).sum() >= mid:
            lo = mid
        else:
            hi = mid - 1
    return {"any_partition_bound": lo,
            "records": n, "diversity": l, "max_groups": best_g, "max_placeable": best,
            "all_placeable": best == n, "beta_to_place_all": beta_all,
            "largest_count": int(c[0]) if len(c) else 0}


# ------------------------------------------------------------------ privacy of published tables
def _group_max(gid: np.ndarray, values: np.ndarray, G: int) -> np.ndarray:
    out = np.zeros(G)
    np.maximum.at(out, gid, values)
    return out


def ambiguity_stats(at_gids: Sequence[np.ndarray], st_gid: np.ndarray, st_sa: np.ndarray,
                    st_count: np.ndarray, G: int | None = None) -> dict[str, np.ndarray]:
    """Per group, from the published ATs and ST: |G|, |G_ATi|, presence (Theorem 1),
    association max_s c/|G| (Theorem 2), distinct SA values."""
    st_gid = np.asarray(st_gid, dtype=np.int64)
    if G is None:
        G = int(st_gid.max()) + 1 if len(st_gid) else 0
    size = np.bincount(st_gid, weights=st_count, minlength=G)
    k = np.stack([np.bincount(np.asarray(a, dtype=np.int64), minlength=G) for a in at_gids], axis=1) \
        if len(at_gids) else np.ones((G, 0))
    presence = size / np.prod(k.astype(float), axis=1)
    assoc = _group_max(st_gid, np.asarray(st_count, float), G) / np.maximum(size, 1)
    distinct = np.bincount(st_gid, minlength=G)
    return {"size": size, "k": k, "presence": presence, "association": assoc, "distinct_sa": distinct}


def priview_stats(at_gid: np.ndarray, at_codes: Sequence[np.ndarray], at_domains: Sequence[int],
                  st_gid: np.ndarray, st_a: np.ndarray, st_sa: np.ndarray, st_count: np.ndarray,
                  n_a: int, m: int, G: int | None = None) -> dict[str, np.ndarray]:
    """Per group, from the published AT (one row per record) and ST(GID, A_j, SA, Count).

    ``presence_paper = |G| / (|G_AT| |G_ST|)`` and ``association_paper =
    max_s c(s) / |G|`` (Theorem 6 as printed); ``presence`` and
    ``association`` are exact over the possible worlds consistent with the
    tables (module docstring): ``max_{q,a} 1 - C(|G| - c(a), n_q) / C(|G|, n_q)``
    and ``max_{a,s} c(a, s) / c(a)``.
    """
    st_gid = np.asarray(st_gid, dtype=np.int64)
    at_gid = np.asarray(at_gid, dtype=np.int64)
    st_a = np.asarray(st_a, dtype=np.int64)
    st_sa = np.asarray(st_sa, dtype=np.int64)
    count = np.asarray(st_count, dtype=float)
    if G is None:
        G = int(max(st_gid.max(initial=-1), at_gid.max(initial=-1))) + 1
    size = np.bincount(st_gid, weights=count, minlength=G)
    n_at = np.bincount(at_gid, minlength=G).astype(float)
    n_st = np.bincount(st_gid, minlength=G).astype(float)
    presence_paper = size / np.maximum(n_at * n_st, 1)
    c_s = np.bincount(st_gid * m + st_sa, weights=count, minlength=G * m)
    association_paper = c_s.reshape(G, m).max(axis=1) / np.maximum(size, 1)
    ga = st_gid * n_a + st_a
    c_a = np.bincount(ga, weights=count, minlength=G * n_a)
    c_a_max = c_a.reshape(G, n_a).max(axis=1)
    # multiplicities n_q of the AT patterns q in each group (one AT row per record)
    if len(at_codes):
        key = at_gid.copy()
        for col, dom in zip(at_codes, at_domains):
            key = key * int(dom) + np.asarray(col, dtype=np.int64)
        uk, cnt = np.unique(key, return_counts=True)
        q_gid = _gid_of_keys(uk, at_codes, at_domains)
        n_q = _group_max(q_gid, cnt.astype(float), G)
        mult = np.unique(q_gid * (int(cnt.max()) + 1) + cnt)  # distinct (group, n_q) pairs
        mult_gid, mult_n = mult // (int(cnt.max()) + 1), mult % (int(cnt.max()) + 1)
    else:
        n_q = n_at
        mult_gid, mult_n = np.arange(G), n_at
    # exact presence: the most repeated AT pattern q with the most frequent a (both raise it)
    presence = 1.0 - _comb_ratio(size, c_a_max, n_q)
    # exact association, over every (group, n_q, a): (module docstring, "exact association")
    gas = ga * m + st_sa
    ug = np.unique(gas)
    c_as = np.bincount(np.searchsorted(ug, gas), weights=count, minlength=len(ug))
    ga_of = ug // m
    top = np.zeros(G * n_a)
    np.maximum.at(top, ga_of, c_as)
    pairs = np.unique(ga)                           # (group, a) present in the ST
    pg = pairs // n_a
    order = np.argsort(mult_gid, kind="stable")
    mg, mn = mult_gid[order], mult_n[order]
    lo, hi = np.searchsorted(mg, pg, side="left"), np.searchsorted(mg, pg, side="right")
    reps = hi - lo
    pair_rep = np.repeat(pairs, reps)
    n_rep = mn[np.concatenate([np.arange(a, b) for a, b in zip(lo, hi)])] if len(pairs) else np.zeros(0)
    g_rep = pair_rep // n_a
    N = size[g_rep]
    num = 1.0 - _comb_ratio(N, top[pair_rep], n_rep)
    den = 1.0 - _comb_ratio(N, c_a[pair_rep], n_rep)
    ratio = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    association = _group_max(g_rep, ratio, G) if len(ratio) else np.zeros(G)
    return {"size": size, "n_at": n_at, "n_st": n_st, "presence_paper": presence_paper,
            "association_paper": association_paper, "presence": presence, "association": association,
            "distinct_sa": (c_s.reshape(G, m) > 0).sum(axis=1)}


def _gid_of_keys(keys: np.ndarray, at_codes, at_domains) -> np.ndarray:
    """The group id packed in front of the AT pattern keys built in :func:`priview_stats`."""
    div = 1
    for dom in at_domains:
        div *= int(dom)
    return np.asarray(keys, dtype=np.int64) // div


def exact_association(size: float, c_a: float, c_as: float, n_q: float) -> float:
    """Exact Pr(person (q, a) has s | present) in a PriView group, over uniform pairings (possible worlds).

    ``[1 - C(|G| - c(a,s), n_q)/C(|G|, n_q)] / [1 - C(|G| - c(a), n_q)/C(|G|, n_q)]``: the chance some
    q-row meets an (a, s) entry over the chance some q-row meets an a entry.  With n_q = 1 it is
    c(a,s)/c(a); Fig. 9's Grace (|G| = 4, c(a) = 2, c(a,s) = 1, n_q = 2) gets 3/5.
    """
    den = 1.0 - float(_comb_ratio(size, c_a, n_q))
    return float((1.0 - _comb_ratio(size, c_as, n_q)) / den) if den > 0 else 0.0


def _comb_ratio(N, c, n) -> np.ndarray:
    """C(N - c, n) / C(N, n), elementwise (0 where N - c < n)."""
    N, c, n = (np.asarray(x, dtype=float) for x in (N, c, n))
    ok = (N - c) >= n
    with np.errstate(invalid="ignore"):
        val = np.exp(gammaln(N - c + 1) - gammaln(N - c - n + 1) - gammaln(N + 1) + gammaln(N - n + 1))
    return np.where(ok, val, 0.0)


def exact_presence(size: float, c_a: float, n_q: float) -> float:
    """Exact presence of one person (q, a) in a PriView group: 1 - C(|G| - c(a), n_q)/C(|G|, n_q)."""
    return float(1.0 - _comb_ratio(size, c_a, n_q))


# ------------------------------------------------------------------ split choice (PriView)
def pair_loss(g: np.ndarray, x: np.ndarray, y: np.ndarray, nx: int, ny: int, G: int) -> float:
    """Absolute error a lossy join puts on the (X, Y) counts inside groups.

    ``sum_g sum_{x,y} |n_g(x, y) - n_g(x) n_g(y) / |g||``: what every
    two-attribute count loses when X and Y are published in different tables
    of the same group.
    """
    g = np.asarray(g, np.int64)
    x = np.asarray(x, np.int64)
    y = np.asarray(y, np.int64)
    size = np.bincount(g, minlength=G).astype(float)
    cx = np.bincount(g * nx + x, minlength=G * nx).astype(float)
    cy = np.bincount(g * ny + y, minlength=G * ny).astype(float)
    key = (g * nx + x) * ny + y
    uk, n = np.unique(key, return_counts=True)
    gx, yy = uk // ny, uk % ny
    gg = gx // nx
    e = cx[gx] * cy[gg * ny + yy] / size[gg]
    return float(np.sum(np.abs(n - e) - e) + len(g))


def split_losses(qi_codes: Sequence[np.ndarray], domains: Sequence[int], sa: np.ndarray, m: int,
                 group: np.ndarray, G: int) -> np.ndarray:
    """Expected loss of each PriView split A_j (MECHANISMS.md section 5: keep the lowest).

    Split j keeps every pair of attributes inside AT and the pair (A_j, SA)
    in ST, and breaks (A_i, A_j) and (A_i, SA) for i != j; its loss is the
    sum of :func:`pair_loss` over the pairs it breaks.  (The paper says
    "the one that potentially returns the smallest information loss"
    without a measure; two-attribute counts are what the seed 004 workload
    asks.)
    """
    inside = group >= 0
    g = group[inside]
    cols = [np.asarray(c)[inside] for c in qi_codes]
    s = np.asarray(sa)[inside]
    d = len(cols)
    with_sa = [pair_loss(g, cols[i], s, domains[i], m, G) for i in range(d)]
    pair = np.zeros((d, d))
    for i in range(d):
        for j in range(i + 1, d):
            pair[i, j] = pair[j, i] = pair_loss(g, cols[i], cols[j], domains[i], domains[j], G)
    total_sa = sum(with_sa)
    return np.array([pair[j].sum() + total_sa - with_sa[j] for j in range(d)])


# ------------------------------------------------------------------ estimation (Fig. 5)
@dataclass(frozen=True, eq=False)
class AmbiguityIndex:
    """Per group: which values each AT holds, 1/k_i, and the ST counts.

    Attributes
    ----------
    member : tuple of ndarray (G, D_i) of float32
        ``member[i][g, v] = 1`` when group g's AT_i lists value v.
    inv_k : ndarray (G, d)
        ``1 / k_gi`` with ``k_gi = |G_ATi|`` (distinct values of A_i in g).
    st : ndarray (G, m)
        ``c_g(s)``: the ST counts.
    """

    member: tuple[np.ndarray, ...]
    inv_k: np.ndarray
    st: np.ndarray
    _by_sa: dict = field(default_factory=dict)

    @cached_property
    def _by_value(self) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
        """``member`` and ``inv_k`` value-major ((D_i, G) and (d, G)), for equality conditions.

        An equality condition reads, for one value, the groups that hold the
        query's SA value (sorted ids): consecutive memory in this layout,
        one cache line per group in the group-major one (census 500K, seed
        000 workload: 0.7 s instead of 2.2 s).  Built on first use.
        """
        return tuple(np.ascontiguousarray(M.T) for M in self.member), np.ascontiguousarray(self.inv_k.T)

    def _rows(self, pattern: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Groups holding one of the SA values of ``pattern`` and their counts c_g (cached)."""
        key = np.packbits(pattern).tobytes()
        if key not in self._by_sa:
            c = self.st[:, pattern].sum(axis=1)
            rows = np.flatnonzero(c > 0)
            self._by_sa[key] = (rows, c[rows])
        return self._by_sa[key]

    @classmethod
    def from_tables(cls, at_values: Sequence[np.ndarray], at_gids: Sequence[np.ndarray],
                    domains: Sequence[int], st_gid, st_sa, st_count, m: int, G: int) -> "AmbiguityIndex":
        member = []
        for vals, gids, dom in zip(at_values, at_gids, domains):
            M = np.zeros((G, int(dom)), dtype=np.float32)
            M[np.asarray(gids, np.int64), np.asarray(vals, np.int64)] = 1.0
            member.append(M)
        k = np.stack([M.sum(axis=1, dtype=np.float64) for M in member], axis=1) if member else np.ones((G, 0))
        st = np.zeros((G, m))
        np.add.at(st, (np.asarray(st_gid, np.int64), np.asarray(st_sa, np.int64)), np.asarray(st_count, float))
        return cls(tuple(member), 1.0 / np.maximum(k, 1), st)

    def _estimate_shared(self, batch: QueryBatch, sa: np.ndarray) -> np.ndarray | None:
        """Fig. 5 for equality queries that repeat their QI values under several SA conditions (None otherwise).

        The per-group product ``prod_i l_gi / k_gi`` depends on the QI values
        only, so it is computed once per distinct value row ``u`` over every
        group, ``P`` (U, G), and ``P @ c`` (U, m) gives every SA value's
        estimate; a query reads its row against its SA condition.  Same sums
        as the per-condition pass (up to float rounding).  The risk map asks
        exactly this (every sampled micro group under each of the m values:
        on Adult 1,436 x 14 queries, 3.5 s per release before, about 0.3 s).
        Used when the value rows repeat at least twice on average; a workload
        of distinct rows keeps the per-condition pass (it reads only the
        groups holding the SA condition).  ``P`` is sparse: a row's product
        is non-zero only on the groups whose AT lists its value of every
        attribute, so it starts from the groups listing its value of the
        batch's attribute whose values the rows hold lists in fewest groups,
        and multiplies in the others there; when even that covers more than
        :data:`_SPARSE_SHARE` of rows x groups, ``P`` is dense
        (:meth:`_estimate_dense`).
        """
        values = np.asarray(batch.values, dtype=np.int64)
        rows, inv = unique_rows(values)
        inv = inv.ravel()
        if 2 * len(rows) > len(values):
            return None
        return select(self.per_value_rows(batch.attrs, rows), sa, rows=inv)

    def per_value_rows(self, attrs: tuple[int, ...], rows: np.ndarray) -> np.ndarray:
        """(U, m): every SA value's estimate for each distinct value row of ``attrs`` (:meth:`_estimate_shared`)."""
        by_value, inv_k = self._by_value
        # only the groups whose AT lists the row's value of one attribute can count: start from those of the
        # attribute that lists the rows' values in fewest groups, then multiply in the other attributes there
        sizes = [np.diff(self._lists(a).indptr)[rows[:, j]].sum() for j, a in enumerate(attrs)]
        first = int(np.argmin(sizes))
        if sizes[first] > _SPARSE_SHARE * len(rows) * len(self.st):
            return self._per_value_dense(attrs, rows)
        lists = self._lists(attrs[first])
        per_value = np.zeros((len(rows), self.st.shape[1]))
        step = max(1, _CELLS * len(rows) // max(int(sizes[first]), 1))
        # the pairs whose group also lists the row's value of the next most selective attribute: the others
        # multiply to 0 and add nothing (the products below run in attribute order, so the sums are the same)
        second = int(np.argsort(sizes)[1]) if _PAIR_FILTER and len(sizes) > 1 else first
        for start in range(0, len(rows), step):
            block = rows[start:start + step]
            sub = lists[block[:, first]]
            cols = sub.indices
            at = np.repeat(np.arange(len(block)), np.diff(sub.indptr))
            if second != first:
                both = by_value[attrs[second]][block[at, second], cols] != 0
                at, cols = at[both], cols[both]
            data = np.ones(len(cols))
            for j, a in enumerate(attrs):
                data *= by_value[a][block[at, j], cols] * inv_k[a][cols]
            product = sparse.csr_matrix((data, (at, cols)), shape=(len(block), len(self.st)))
            per_value[start:start + step] = product @ self.st
        return per_value

    def _per_value_dense(self, attrs: tuple[int, ...], rows: np.ndarray) -> np.ndarray:
        """:meth:`per_value_rows` with ``P`` dense (every attribute of the batch lists many values per group)."""
        by_value, inv_k = self._by_value
        G = len(self.st)
        per_value = np.zeros((len(rows), self.st.shape[1]))
        step = max(1, _CELLS // max(G, 1))
        for start in range(0, len(rows), step):
            block = rows[start:start + step]
            P = np.ones((len(block), G))
            for j, a in enumerate(attrs):
                P *= by_value[a][block[:, j]] * inv_k[a][None, :]
            per_value[start:start + step] = P @ self.st
        return per_value

    def _lists(self, a: int) -> sparse.csr_matrix:
        """Per value of attribute ``a``: the groups whose AT_a lists it (rows: values, sorted group ids)."""
        key = ("lists", a)
        if key not in self._by_sa:
            self._by_sa[key] = sparse.csr_matrix(self._by_value[0][a] != 0)
        return self._by_sa[key]

    def estimate(self, batch: QueryBatch) -> np.ndarray:
        """Fig. 5: ``sum_g c_g(C_S) prod_i l_gi / k_gi`` for every query of the batch.

        Queries with the same SA condition share one pass over the groups
        that hold it; equality conditions are gathers of those groups from
        each queried value's membership row, set conditions (ranges, IN) one
        matrix product per attribute.
        """
        q = len(batch)
        out = np.zeros(q)
        if q == 0:
            return out
        sa = np.asarray(batch.sa, dtype=bool)
        if batch.is_equality and len(batch.attrs):
            shared = self._estimate_shared(batch, sa)
            if shared is not None:
                return shared
        _, inv = np.unique(np.packbits(sa, axis=1), axis=0, return_inverse=True)
        inv = inv.ravel()
        if batch.is_equality:
            by_value, inv_k = self._by_value
        for u in np.unique(inv):
            idx = np.flatnonzero(inv == u)
            rows, c = self._rows(sa[idx[0]])
            if len(rows) == 0:
                continue
            step = max(1, _CELLS // len(rows))
            for start in range(0, len(idx), step):
                qs = idx[start:start + step]
                if batch.is_equality:
                    F = np.repeat(c[None, :], len(qs), axis=0)  # (queries, groups)
                    for j, a in enumerate(batch.attrs):
                        F *= by_value[a][np.ix_(batch.values[qs, j], rows)] * inv_k[a, rows][None, :]
                    out[qs] = F.sum(axis=1)
                    continue
                F = np.repeat(c[:, None], len(qs), axis=1)  # (groups, queries)
                for j, a in enumerate(batch.attrs):
                    mask = batch.masks[j][qs].T.astype(np.float32)
                    if len(qs) * len(self.st) <= _FULL_PRODUCT * len(rows):
                        # few queries: a product over every group, then pick the rows, beats
                        # gathering rows x D_i membership entries first
                        L = (self.member[a] @ mask)[rows]
                    else:
                        L = self.member[a][rows] @ mask
                    F *= L * self.inv_k[rows, a][:, None]
                out[qs] = F.sum(axis=0)
        return out


def priview_records(at_codes: Sequence[np.ndarray], at_gid, st_gid, st_a, st_sa, st_count,
                    qi_domains: Sequence[int], split: int, m: int) -> Records:
    """Weighted cells answering PriView's Fig. 5 for a whole batch at once.

    Fig. 5's two-table form (seed 004 §8.2) reads an AT row of group g as
    each of g's ST entries (a, s, c) with weight ``c/|g|`` (``|G_AT| = |g|``,
    one AT row per record), so a query with conditions C on the AT
    attributes, C_j on the split A_j and C_S on the SA estimates
    ``sum_g c_g(C) c_g(C_j, C_S) / |g|``.  The weights summed per combination
    of all QI attributes are ``sum_g c(e_other, g) c(g, a, s) / |g|``:
    :meth:`core.counting.Records.from_groups` with the ST's ``(a, s)`` pair as
    the target, then ``a`` put back among the QI columns.  Every attribute
    subset is then counted from these cells or from a cached superset's.

    Why the full cells rather than one product per subset S (with the
    ST's (g, s) marginal when A_j is not in S): a per-subset product costs
    (distinct (e_S, g) pairs) x (ST entries per group) each time.  On census
    500K (split 'sex', 10 ST entries per group) seed 000's 63 subsets have
    24M such pairs, 240M products in all; the full cells take one 5M-product
    (1.5M cells, against 5M rows for the AT expanded by its ST), and the
    projections read at most 1.5M cells per subset, most far fewer.

    Parameters
    ----------
    at_codes : sequence of ndarray (N,) of int
        The AT's QI columns (every QI attribute but the split), in QI order.
    at_gid : ndarray (N,) of int
        Group of each AT row.
    st_gid, st_a, st_sa, st_count : ndarray (S,)
        ST rows: group, split attribute's code, SA code, count.
    qi_domains : sequence of int
        Domain size of every QI attribute (the split's included).
    split : int
        Position of the split attribute A_j among the QI attributes.
    m : int
        Number of SA values.

    Returns
    -------
    Records
        Weighted cells over all QI attributes with the SA as target.
    """
    n_a = int(qi_domains[split])
    other = [i for i in range(len(qi_domains)) if i != split]
    combined = np.asarray(st_a, np.int64) * m + np.asarray(st_sa, np.int64)
    cells = Records.from_groups(list(at_codes), [qi_domains[i] for i in other], at_gid, st_gid, combined,
                                st_count, n_a * m)
    cols = list(cells.qi_codes)
    cols.insert(split, cells.target // m)
    return Records(cols, qi_domains, cells.target % m, m, weights=cells.weights)


# ------------------------------------------------------------------ PriView, repaired (construction=exact)
def build_exact_groups(qi_codes: Sequence[np.ndarray], domains: Sequence[int], sa: np.ndarray, m: int,
                       split: int, alpha: float, beta: float, candidates: int = 32,
                       rng: np.random.Generator | None = None, groups: int | None = None,
                       extend: bool = True, memo=None) -> Grouping:
    """PriView groups whose *exact* presence and association, read from the published tables, are <= alpha, beta.

    A group is a set of *blocks*.  A block is ``L = ceil(1/beta)`` records
    that share one value a of the split attribute A_j and have L different
    SA values.  A group holds at least ``k = ceil(1/alpha)`` blocks, of
    different a-values, and no AT pattern q (a record's QI values other than
    A_j) twice.  Construction (bucketizing on (A_j, SA), as seed 004 §8.3
    describes):

    1. Records are bucketed by a and, inside, by SA value (a seeded random
       order in each sub-bucket).  ``b(a)``, the blocks bucket a can give,
       is the water-filling bound: the largest b with
       ``sum_s min(c(a, s), b) >= L b``; the number of groups is the largest
       G with ``sum_a min(b(a), G) >= k G`` (``groups`` overrides it).
    2. Slots: each a-value gets ``min(b(a), G)`` block slots, in different
       groups, each going to the group with fewest slots so far (a-values
       with most blocks first); by the choice of G every group gets at least
       k slots.
    3. Filling: a-values with fewest slots first (their records have the
       fewest groups to go to), each slot takes one record from each of the
       L largest SA sub-buckets of a that offer a pattern new to the group:
       among the sub-bucket's next ``candidates`` records, the one whose AT
       pattern has fewest records left unplaced (rare patterns fit in few
       groups: placing them first keeps the common ones, which fit in every
       group, for the slots that remain).  A slot without L such records
       stays empty.
    4. Consolidation: while some group has fewer than k blocks, the one
       with fewest is dissolved and each of its blocks moves to the group
       with fewest blocks that holds neither its a-value nor any of its
       patterns (unplaced when none does).
    5. Extension (``extend``): blocks formed from the records still
       unplaced join any group that holds neither their a-value nor their
       patterns (smallest group first), as long as one does.
    6. Every group's exact presence and association are computed from its
       published tables (:func:`priview_stats`); a group above alpha or beta
       (impossible by the bound below) would be dissolved and its records
       unplaced.

    Bound.  Take a group of r >= k blocks, N = rL records, in which every
    AT pattern occurs once and every a-value in exactly one block (steps
    3-5 keep both).  A possible world pairs the AT rows with the ST entries
    uniformly at random (the worlds consistent with both tables), so the
    single AT row of person (q, a) gets a uniformly random entry: the exact
    presence of (q, a) is ``c(a)/N = L/(rL) = 1/r <= 1/k <= alpha``, and
    given presence the entry is a uniformly random one of the c(a) = L
    entries of a, so the exact association of any s is ``c(a, s)/c(a) = 1/L
    <= beta`` (the L records of a block have different SA values).  A person
    whose q is not in the AT or whose a is not in the ST is in no world.
    Both bounds hold for every person and value, whatever the data; step 6
    checks them on the actual tables, and the tests enumerate every world of
    small groups (r = k and r > k).  Records the construction cannot place
    are reported, never published.

    What it places.  Any grouping of this kind is bounded by ``L sum_a
    min(b(a), G)`` (at most one block per group and a-value) and by ``sum_q
    min(n_q, G)`` (a pattern at most once per group).  On Adult at alpha =
    beta = 0.1 with age as A_j (b(a) gives G = 256, 25,600 records) the
    patterns are what binds: groups built one at a time from the a-values
    with most records left, taking the first record of a window whose
    pattern is new (this function before issue 16's second pass), placed
    14,300 records; the slots filled rarest pattern first place about
    20,300 (tests/test_priview_exact.py; 19,400 without step 5).  Filled in
    the records' random order instead, or most common pattern first, the
    slots leave most groups short of k blocks (Adult: under 5,000 placed).

    What it costs in accuracy (Adult, alpha = beta = 0.1, seed 0, left-out
    records counted as undercounts): on seed 004's GROUP BY workload the mean
    relative error is 0.874, against 0.791 for the earlier exact
    construction's 15,400 records, 0.879 for the paper's construction and
    1.65 for Ambiguity; on seed 000's large counts 0.668, against 0.728,
    0.512 and 0.698.  Rare patterns first makes the published records less
    typical of the table than a random subset (common QI combinations are
    under-represented), which the GROUP BY cells of common combinations
    feel; the large counts gain from the 4,900 more records.

    Costs: groups of at least ``kL`` records (100 at alpha = beta = 0.1,
    against the paper's 10), and the records no block can take: values of
    a short of L different SA values, copies of an AT pattern beyond the
    groups that can take it.

    ``memo`` (:mod:`core.engine.memo`, bound to the table) keeps steps 1-5
    between calls: they depend on the table, ``split``, ``ceil(1/beta)``,
    ``ceil(1/alpha)``, ``candidates``, ``groups``, ``extend`` and the state of
    ``rng`` only, so a slider move of alpha within one ``ceil(1/alpha)``
    reuses them (same groups; step 6 is run every time, with the alpha and
    beta given, and ``rng`` is advanced as the computation would).
    """
    rng = np.random.default_rng(rng)
    sa = np.asarray(sa, dtype=np.int64)
    n = len(sa)
    L, k = diversity(beta), presence_size(alpha)

    def blocks():
        return (*_exact_blocks(qi_codes, domains, sa, m, split, L, k, candidates, rng, groups, extend), {})

    if memo is None:
        group, G, derived = blocks()
    else:
        ran: list[bool] = []
        key = ("priview/exact-blocks", int(split), L, k, max(1, int(candidates)),
               None if groups is None else int(groups), bool(extend), _rng_state(rng))
        group, G, derived = memo(key, lambda: (ran.append(True), blocks())[1])
        if not ran and n:
            rng.permutation(n)  # the one draw steps 1-5 make
        group = group.copy()    # the memo's array stays as computed
    others = [np.asarray(c, dtype=np.int64) for i, c in enumerate(qi_codes) if i != split]
    a_codes = np.asarray(qi_codes[split], dtype=np.int64)
    # step 6: verify the exact measures on the tables as published; dissolve any group above alpha or beta
    dissolved = 0
    if G:
        inside = np.flatnonzero(group >= 0)
        g = group[inside]
        oth = [c[inside] for c in others]
        dom_o = [int(d) for i, d in enumerate(domains) if i != split]
        n_a = int(domains[split])
        key, cnt = np.unique((g * n_a + a_codes[inside]) * m + sa[inside], return_counts=True)
        stats = priview_stats(g, oth, dom_o, key // (n_a * m), (key // m) % n_a, key % m, cnt, n_a, m, G)
        bad = np.flatnonzero((stats["presence"] > alpha + _TOL) | (stats["association"] > beta + _TOL))
        if len(bad):
            dissolved = len(bad)
            group[np.isin(group, bad)] = -1
            keep = np.setdiff1d(np.arange(G), bad)
            remap = np.full(G, -1, dtype=np.int64)
            remap[keep] = np.arange(len(keep))
            group[group >= 0] = remap[group[group >= 0]]
            G = len(keep)
    placed = int((group >= 0).sum())
    # the groups of steps 1-5, unchanged by step 6, share what is derived from them with the kept ones
    return Grouping(group=group, n_groups=G, residue=n - placed, residue_placed=0, dissolved=dissolved,
                    **({"derived": derived} if not dissolved else {}))


def _exact_blocks(qi_codes, domains, sa, m, split, L, k, candidates, rng, groups, extend) -> tuple[np.ndarray, int]:
    """Steps 1-5 of :func:`build_exact_groups`: the group of every record (-1: none) and the number of groups."""
    sa = np.asarray(sa, dtype=np.int64)
    n = len(sa)
    K = max(1, int(candidates))
    a_codes = np.asarray(qi_codes[split], dtype=np.int64)
    others = [np.asarray(c, dtype=np.int64) for i, c in enumerate(qi_codes) if i != split]
    if others and n:
        # the AT patterns numbered in lexicographic order: one mixed-radix key per record when the domains'
        # product fits (the same numbers as np.unique over the rows, a tenth of the time), else the rows
        key, known = _pattern_keys(others, [int(dom) for i, dom in enumerate(domains) if i != split])
        if known:
            _, qid = np.unique(key, return_inverse=True)
        else:
            _, qid = np.unique(np.stack(others, axis=1), axis=0, return_inverse=True)
        qid = qid.ravel().astype(np.int64)
    else:
        qid = np.zeros(n, dtype=np.int64)
    P = int(qid.max(initial=-1)) + 1
    left_of = np.bincount(qid, minlength=P).astype(np.int64)  # unplaced records per AT pattern
    group = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return group, 0
    perm = rng.permutation(n)
    order = perm[np.lexsort((sa[perm], a_codes[perm]))]
    cut = np.flatnonzero(np.diff(a_codes[order] * m + sa[order])) + 1
    subs: dict[int, dict[int, np.ndarray]] = {}
    for part in np.split(order, cut):
        subs.setdefault(int(a_codes[part[0]]), {})[int(sa[part[0]])] = part
    blocks = {a: _water_fill([len(r) for r in d.values()], L) for a, d in subs.items()}
    G = _water_fill(list(blocks.values()), k) if groups is None else max(0, int(groups))
    if G == 0:
        return group, 0
    # step 2: slots, each a-value's in different groups, the emptiest group first
    count = np.zeros(G, dtype=np.int64)
    slots: dict[int, np.ndarray] = {}
    for a in sorted(blocks, key=lambda a: (-blocks[a], a)):
        t = min(blocks[a], G)
        if t:
            gs = np.argsort(count, kind="stable")[:t]
            count[gs] += 1
            slots[a] = gs
    has = np.zeros((G, P), dtype=bool)            # has[g, q]: pattern q is in group g
    members: list[dict[int, np.ndarray]] = [{} for _ in range(G)]  # group -> a -> its block's records

    def block(a: int, g: int) -> np.ndarray | None:
        """L records of a with different SA values and patterns new to group g (rarest first), or None."""
        d = subs[a]
        recs: list[int] = []
        mine: list[int] = []
        row = has[g]
        for s in sorted((s for s, r in d.items() if len(r)), key=lambda s: (-len(d[s]), s)):
            if len(recs) == L:
                break
            w = d[s][:K]
            q = qid[w]
            score = np.where(row[q], _NEVER, left_of[q])
            i = int(score.argmin())
            if not row[q[i]]:
                recs.append(int(w[i]))
                mine.append(int(q[i]))
                row[q[i]] = True  # held for this block; released below
        row[mine] = False
        return np.array(recs, dtype=np.int64) if len(recs) == L else None

    def commit(a: int, recs: np.ndarray, g: int) -> None:
        d = subs[a]
        for r in recs.tolist():
            s = int(sa[r])
            d[s] = d[s][d[s] != r]
        members[g][a] = recs
        has[g, qid[recs]] = True
        left_of[qid[recs]] -= 1

    # step 3: fill the slots, a-values with fewest slots first
    for a in sorted(slots, key=lambda a: (len(slots[a]), a)):
        for g in slots[a].tolist():
            recs = block(a, g)
            if recs is not None:
                commit(a, recs, g)
    # step 4: consolidate the groups short of k blocks
    alive = set(range(G))
    while True:
        short = [g for g in alive if len(members[g]) < k]
        if not short:
            break
        g = min(short, key=lambda g: (len(members[g]), g))
        alive.discard(g)
        for a, recs in members[g].items():
            has[g, qid[recs]] = False
            pool = np.array(sorted(alive), dtype=np.int64)
            free = pool[~has[np.ix_(pool, qid[recs])].any(axis=1)] if len(pool) else pool
            dest = [h for h in free.tolist() if a not in members[h]]
            if dest:
                h = min(dest, key=lambda h: (len(members[h]), h))
                members[h][a] = recs
                has[h, qid[recs]] = True
            else:
                left_of[qid[recs]] += 1
                for r in recs.tolist():  # back to their sub-buckets, for step 5
                    s = int(sa[r])
                    subs[a][s] = np.append(subs[a][s], r)
        members[g] = {}
    # step 5: extend the groups with blocks of the records still unplaced
    live = sorted(alive)
    if live and extend:
        for a in sorted(subs, key=lambda a: (_water_fill([len(r) for r in subs[a].values()], L), a)):
            while _water_fill([len(r) for r in subs[a].values()], L) > 0:
                placed = False
                cand = np.array([g for g in live if a not in members[g]], dtype=np.int64)
                if len(cand):
                    # groups where at least L sub-buckets of a offer a pattern the group lacks (block() decides)
                    offer = sum((~has[np.ix_(cand, qid[r[:K]])]).any(axis=1).astype(int)
                                for r in subs[a].values() if len(r))
                    cand = cand[offer >= L]
                for g in sorted(cand.tolist(), key=lambda g: (len(members[g]), g)):
                    recs = block(a, g)
                    if recs is not None:
                        commit(a, recs, g)
                        placed = True
                        break
                if not placed:
                    break
    renum = {g: i for i, g in enumerate(live)}
    for g in live:
        for recs in members[g].values():
            group[recs] = renum[g]
    G = len(live)
    return group, G


def _rng_state(rng: np.random.Generator) -> str:
    """A generator's state as text (part of a memo key: the same state draws the same numbers)."""
    return json.dumps(rng.bit_generator.state, sort_keys=True, default=str)


_NEVER = np.iinfo(np.int64).max


def _water_fill(sizes, per: int) -> int:
    """Largest g with ``sum_i min(sizes_i, g) >= per * g``: how many sets of ``per`` different items the
    piles ``sizes`` can give (each set takes at most one item of a pile).

    >>> _water_fill([3, 3, 3], 2), _water_fill([10, 1, 1], 2), _water_fill([5], 2)
    (4, 2, 0)
    """
    c = np.sort(np.asarray(sizes, dtype=np.int64))[::-1]
    c = c[c > 0]
    if len(c) < per:
        return 0
    lo, hi = 0, int(c.sum()) // per
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if np.minimum(c, mid).sum() >= per * mid:
            lo = mid
        else:
            hi = mid - 1
    return lo


def exact_split_candidates(domains: Sequence[int], qi_codes: Sequence[np.ndarray], alpha: float) -> list[int]:
    """QI attributes with at least ceil(1/alpha) values present: the splits ``build_exact_groups`` can use."""
    k = presence_size(alpha)
    return [i for i, c in enumerate(qi_codes) if len(np.unique(c)) >= k]


def exact_placeable(qi_codes: Sequence[np.ndarray], domains: Sequence[int], sa: np.ndarray, m: int, split: int,
                    alpha: float, beta: float) -> dict:
    """Upper bounds on the records :func:`build_exact_groups` can place with split ``split``.

    With ``b(a)`` the blocks value a can give and G the groups
    (:func:`build_exact_groups` steps 1-2), a group holds at most one block
    of each a (``blocks_bound = L sum_a min(b(a), G)``) and each AT pattern
    at most once (``patterns_bound = sum_q min(n_q, G)``); no grouping of the
    exact kind with G groups places more than the smaller of the two
    (``max_placeable``).  Cheap: one count per (a, SA value) and per pattern.

    Returns
    -------
    dict
        ``groups``, ``blocks_bound``, ``patterns_bound``, ``max_placeable``.
    """
    L, k = diversity(beta), presence_size(alpha)
    sa = np.asarray(sa, dtype=np.int64)
    a_codes = np.asarray(qi_codes[split], dtype=np.int64)
    n_a = int(domains[split])
    c = np.bincount(a_codes * m + sa, minlength=n_a * m).reshape(n_a, m)
    b = np.array([_water_fill(row, L) for row in c])
    G = _water_fill(b, k)
    blocks = int(L * np.minimum(b, G).sum())
    others = [np.asarray(col, dtype=np.int64) for i, col in enumerate(qi_codes) if i != split]
    if others and len(sa):
        key, known = _pattern_keys(others, [int(d) for i, d in enumerate(domains) if i != split])
        n_q = np.unique(key, return_counts=True)[1] if known else np.unique(np.stack(others, axis=1), axis=0,
                                                                            return_counts=True)[1]
    else:
        n_q = np.array([len(sa)])
    patterns = int(np.minimum(n_q, G).sum())
    return {"groups": int(G), "blocks_bound": blocks, "patterns_bound": patterns,
            "max_placeable": min(blocks, patterns)}


def _pattern_keys(cols: Sequence[np.ndarray], doms: Sequence[int]) -> tuple[np.ndarray, bool]:
    """One int64 key per row (mixed radix) when the domains' product fits, else (empty, False)."""
    if float(np.prod([float(d) for d in doms])) >= 2.0 ** 62:
        return np.zeros(0, dtype=np.int64), False
    key = np.zeros(len(cols[0]), dtype=np.int64)
    for col, d in zip(cols, doms):
        key = key * int(d) + col
    return key, True
