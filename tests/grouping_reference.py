"""The Ambiguity/PriView group constructions as they were before issue 27's speed-up (verbatim).

:mod:`tests.test_grouping_fast` checks that the faster versions in
:mod:`core.mechanisms.ambiguity_algorithm` return the same groups, record
for record, on random tables.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from core.mechanisms.ambiguity_algorithm import (_NEVER, _TOL, Grouping, _log_presence, _water_fill, diversity,
                                                 presence_size, priview_stats)


def build_groups(qi_codes: Sequence[np.ndarray], domains: Sequence[int], sa: np.ndarray, m: int,
                 beta: float, alpha: float, kind: str = "ambiguity", candidates: int = 32,
                 rng: np.random.Generator | None = None, batch: int = 1024) -> Grouping:
    """Seed 004 section 7, steps 1-3 (see the module docstring for the choices).

    ``kind="ambiguity"`` checks Theorem 1's presence ``|G| / prod_i |G_ATi|``;
    ``kind="priview"`` Theorem 6's ``1/|G|``.
    """
    rng = np.random.default_rng(rng)
    sa = np.asarray(sa, dtype=np.int64)
    n, d = len(sa), len(domains)
    off = np.concatenate([[0], np.cumsum(domains)[:-1]]).astype(np.int64)
    X = (np.stack([np.asarray(c, dtype=np.int64) for c in qi_codes], axis=1) + off) if d else np.zeros((n, 0), np.int64)
    D = int(sum(domains))
    l = diversity(beta)
    slots = l if kind == "ambiguity" else max(l, presence_size(alpha))
    log_alpha = math.log(alpha) + _TOL
    K = max(1, int(candidates))

    perm = rng.permutation(n)
    order = perm[np.argsort(sa[perm], kind="stable")]
    bounds = np.searchsorted(sa[order], np.arange(m + 1))
    queues = [order[bounds[v]:bounds[v + 1]] for v in range(m)]
    remaining = np.array([len(q) for q in queues], dtype=np.int64)
    group = np.full(n, -1, dtype=np.int64)
    picked = np.zeros(n, dtype=bool)
    n_groups = 0
    dissolved = 0
    leftovers: list[np.ndarray] = []

    def presence_ok(size, k):
        if kind == "ambiguity":
            return _log_presence(size, k) <= log_alpha
        return -np.log(size) <= log_alpha

    while True:
        # the paper's bucket schedule, on counts: each group takes the `slots` largest buckets
        rem = remaining.copy()
        sched = []
        while len(sched) < batch and np.count_nonzero(rem) >= slots:
            top = np.argsort(-rem, kind="stable")[:slots]
            sched.append(top)
            rem[top] -= 1
        if not sched:
            break
        S = np.array(sched)
        B = len(S)
        rows = np.arange(B)
        cand = np.full((B, slots, K), -1, dtype=np.int64)
        for v in np.unique(S):
            bs, js = np.nonzero(S == v)
            q = queues[v]
            w = min(K, len(q) // len(bs))
            cand[bs, js, :w] = q[: w * len(bs)].reshape(len(bs), w)
        seen = np.zeros((B, D), dtype=bool)
        k = np.zeros((B, d))
        members = np.empty((B, slots), dtype=np.int64)
        for j in range(slots):
            c = cand[:, j, :]
            valid = c >= 0
            codes = X[np.where(valid, c, 0)]                      # (B, K, d)
            new = ~seen[rows[:, None, None], codes]
            gain = np.log((k + 1) / np.maximum(k, 1))             # log((k+1)/k); 0 for an empty group
            score = np.einsum("bkd,bd->bk", new, gain)
            score[~valid] = -np.inf
            p = np.argmax(score, axis=1)
            rec = c[rows, p]
            members[:, j] = rec
            k += new[rows, p]
            seen[rows[:, None], X[rec]] = True
        picked[members.ravel()] = True
        for v in np.unique(S):
            q = queues[v]
            queues[v] = q[~picked[q]]
            remaining[v] = len(queues[v])
        ok = presence_ok(np.full(B, float(slots)), k)
        good = np.flatnonzero(ok)
        group[members[good]] = (n_groups + np.arange(len(good)))[:, None]
        n_groups += len(good)
        for b in np.flatnonzero(~ok):  # rare: extend with further buckets, one record at a time
            mem = list(members[b])
            used = set(S[b].tolist())
            g_seen, g_k = seen[b].copy(), k[b].copy()
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
    residue = np.concatenate([q for q in queues] + leftovers) if n else np.zeros(0, np.int64)
    residue = residue[rng.permutation(len(residue))]
    placed_residue = _place_residue(residue, group, n_groups, X, off, D, sa, m, alpha, kind)
    return Grouping(group=group, n_groups=n_groups, residue=len(residue), residue_placed=placed_residue,
                    dissolved=dissolved)


def _place_residue(residue, group, G, X, off, D, sa, m, alpha, kind) -> int:
    """Step 3: each residue record to a group lacking its SA value whose presence stays <= alpha."""
    if len(residue) == 0 or G == 0:
        return 0
    inside = np.flatnonzero(group >= 0)
    g = group[inside]
    size = np.bincount(g, minlength=G).astype(float)
    seen = np.zeros((G, D), dtype=bool)
    seen[g[:, None], X[inside]] = True
    has_sa = np.zeros((G, m), dtype=bool)
    has_sa[g, sa[inside]] = True
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


def build_exact_groups(qi_codes: Sequence[np.ndarray], domains: Sequence[int], sa: np.ndarray, m: int,
                       split: int, alpha: float, beta: float, candidates: int = 32,
                       rng: np.random.Generator | None = None, groups: int | None = None,
                       extend: bool = True) -> Grouping:
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
    """
    rng = np.random.default_rng(rng)
    sa = np.asarray(sa, dtype=np.int64)
    n = len(sa)
    L, k = diversity(beta), presence_size(alpha)
    K = max(1, int(candidates))
    a_codes = np.asarray(qi_codes[split], dtype=np.int64)
    others = [np.asarray(c, dtype=np.int64) for i, c in enumerate(qi_codes) if i != split]
    if others and n:
        _, qid = np.unique(np.stack(others, axis=1), axis=0, return_inverse=True)
        qid = qid.ravel().astype(np.int64)
    else:
        qid = np.zeros(n, dtype=np.int64)
    P = int(qid.max(initial=-1)) + 1
    left_of = np.bincount(qid, minlength=P).astype(np.int64)  # unplaced records per AT pattern
    group = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return Grouping(group=group, n_groups=0, residue=0, residue_placed=0, dissolved=0)
    perm = rng.permutation(n)
    order = perm[np.lexsort((sa[perm], a_codes[perm]))]
    cut = np.flatnonzero(np.diff(a_codes[order] * m + sa[order])) + 1
    subs: dict[int, dict[int, np.ndarray]] = {}
    for part in np.split(order, cut):
        subs.setdefault(int(a_codes[part[0]]), {})[int(sa[part[0]])] = part
    blocks = {a: _water_fill([len(r) for r in d.values()], L) for a, d in subs.items()}
    G = _water_fill(list(blocks.values()), k) if groups is None else max(0, int(groups))
    if G == 0:
        return Grouping(group=group, n_groups=0, residue=n, residue_placed=0, dissolved=0)
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
    return Grouping(group=group, n_groups=G, residue=n - placed, residue_placed=0, dissolved=dissolved)
