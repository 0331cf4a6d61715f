"""Count-query workloads of the papers, with their true answers.

* :func:`seed000` (Fu et al., seed 000 section 6, after Anatomy's appendix):
  ``A_1 = v_1 AND ... AND A_d = v_d AND SA = s`` with d uniform in
  1..3, distinct attributes and uniformly chosen values.  A *small* pool has
  true counts 1..10; a *large* pool is split into selectivity bands
  [0.5%, 1%), [1%, 2%), ..., [4%, 5%) and >= 5%.  On a table small enough
  that these bands would reach into the small counts (2,000 rows or fewer,
  where 0.5% is 10 records), the large-count bands are defined by true
  count instead: they start at 11, never overlap the small band, and
  adjacent ones are merged until each has :data:`THIN_QUERIES` candidate
  queries (:func:`seed000_bands`).
* :func:`seed002` (Chaytor & Wang, seed 002 appendix 10.9): 200 random
  conditions on 1..3 attributes, each crossed with every SA value; results
  are reported for the queries passing a selectivity threshold
  (0.1%, 0.5%, 1%).

Other issues add generators here (seed 003's OR predicates, seed 004's
GROUP BY workload) as functions returning a :class:`Workload`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations
from typing import Any, Sequence

import numpy as np

from .counting import QueryBatch, Records
from .errors import ParameterError
from .table import Dataset

SMALL_MAX = 10
LARGE_EDGES = (0.005, 0.01, 0.02, 0.03, 0.04, 0.05)
#: a band with fewer queries than this is too thin to trust (the pages and ``evaluate --json`` say so)
THIN_QUERIES = 30


@dataclass(frozen=True)
class Band:
    """A group of queries reported together.

    ``unit`` is ``"count"`` (``lo``/``hi`` are true counts, inclusive) or
    ``"selectivity"`` (``lo`` inclusive, ``hi`` exclusive, as fractions of
    the table; ``hi=None`` means no upper end).
    """

    name: str
    unit: str
    lo: float
    hi: float | None

    def contains(self, true: np.ndarray, n: int) -> np.ndarray:
        if self.unit == "count":
            hi = np.inf if self.hi is None else self.hi
            return (true >= self.lo) & (true <= hi)
        sel = true / n
        hi = np.inf if self.hi is None else self.hi
        return (sel >= self.lo - 1e-12) & (sel < hi - 1e-12) & (true > 0)


@dataclass(frozen=True, eq=False)
class Workload:
    """A list of count queries (in batches by attribute subset) and their true answers.

    ``true`` and ``membership`` follow the order of the batches'
    concatenation; ``membership[b, i]`` says whether query ``i`` belongs to
    band ``b`` (bands may overlap, e.g. selectivity thresholds).
    """

    kind: str
    seed: int
    n_records: int
    batches: tuple[QueryBatch, ...]
    true: np.ndarray
    bands: tuple[Band, ...]
    membership: np.ndarray
    settings: dict
    #: the :class:`core.counting.QIGroups` of the table the true answers were counted on (None: not
    #: known); a release of that table is counted on the same coding (:func:`core.mechanisms.estimate`)
    groups: Any = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.true)

    @cached_property
    def offsets(self) -> np.ndarray:
        """Position of each batch's first query (computed once: :meth:`describe` reads it per query)."""
        return np.cumsum([0] + [len(b) for b in self.batches])

    def locate(self, i: int) -> tuple[QueryBatch, int]:
        b = int(np.searchsorted(self.offsets, i, side="right") - 1)
        return self.batches[b], i - int(self.offsets[b])

    def describe(self, data: Dataset, i: int) -> str:
        """The query as text: ``age = 37 AND sex = Female AND occupation = Sales``."""
        batch, r = self.locate(i)
        parts = []
        for j, a in enumerate(batch.attrs):
            labels = data.qi_labels[a]
            if batch.values is not None:
                parts.append(f"{data.qi[a]} = {labels[batch.values[r, j]]}")
            else:
                chosen = labels[np.flatnonzero(batch.masks[j][r])]
                parts.append(f"{data.qi[a]} IN ({', '.join(map(str, chosen[:6]))}{', ...' if len(chosen) > 6 else ''})")
        sa_vals = data.sa_labels[np.flatnonzero(batch.sa[r])]
        if len(sa_vals) == 1:
            parts.append(f"{data.sa} = {sa_vals[0]}")
        else:
            parts.append(f"{data.sa} IN ({', '.join(map(str, sa_vals[:6]))}{', ...' if len(sa_vals) > 6 else ''})")
        return " AND ".join(parts)

    def band_of(self) -> np.ndarray:
        """First band of each query (-1 if none), for colouring scatter plots."""
        out = np.full(len(self), -1)
        for b in range(len(self.bands) - 1, -1, -1):
            out[self.membership[b]] = b
        return out


def by_count(n: int) -> bool:
    """Whether seed 000's large-count bands are defined by count on a table of ``n`` rows.

    True when the first selectivity band, ``[0.5%, 1%)``, would start at a
    true count of :data:`SMALL_MAX` or less (``n <= 2000``): its queries
    would be small counts too.
    """
    return math.ceil(LARGE_EDGES[0] * n - 1e-9) <= SMALL_MAX


def seed000_bands(n: int, available: Sequence[int] | None = None) -> tuple[Band, ...]:
    """Seed 000's bands on a table of ``n`` rows: small counts, then the large-count bands.

    On a large table (``n > 2000``) these are the paper's selectivity bands,
    unchanged.  On a small one they are defined by true count: the paper's
    edges as counts (``ceil(edge x n)``), raised to start at
    ``SMALL_MAX + 1`` so they never overlap the small band, duplicates
    removed.  ``available`` (candidate queries per such band, in order) merges
    each band holding fewer than :data:`THIN_QUERIES` candidates into the next
    (the last into the one before); pass None to get the unmerged bands.
    Count bands are stored as the equivalent selectivity range
    (``[lo/n, (hi+1)/n)``), so every consumer that reads large-count bands by
    selectivity (risk, recommender) reads them alike; their names give the
    counts.
    """
    small = Band(f"small counts ({1}-{SMALL_MAX})", "count", 1, SMALL_MAX)
    if not by_count(n):
        bands = [small]
        edges = list(LARGE_EDGES)
        for lo, hi in zip(edges[:-1], edges[1:]):
            bands.append(Band(f"[{lo:.1%}, {hi:.0%})".replace(".0%", "%"), "selectivity", lo, hi))
        bands.append(Band(f">= {edges[-1]:.0%}", "selectivity", edges[-1], None))
        return tuple(bands)
    starts = sorted({max(SMALL_MAX + 1, math.ceil(e * n - 1e-9)) for e in LARGE_EDGES})
    starts = [c for c in starts if c <= max(n, SMALL_MAX + 1)] or [SMALL_MAX + 1]
    ranges = [[lo, hi - 1] for lo, hi in zip(starts, starts[1:])] + [[starts[-1], None]]
    if available is not None:
        counts = list(available)
        merged: list[list] = []
        for (lo, hi), k in zip(ranges, counts):
            if merged and merged[-1][2] < THIN_QUERIES:
                merged[-1][1] = hi
                merged[-1][2] += k
            else:
                merged.append([lo, hi, k])
        if len(merged) > 1 and merged[-1][2] < THIN_QUERIES:
            last = merged.pop()
            merged[-1][1] = last[1]
            merged[-1][2] += last[2]
        ranges = [[lo, hi] for lo, hi, _ in merged]
    bands = [small]
    for lo, hi in ranges:
        if hi is None:
            bands.append(Band(f"large counts >= {lo}", "selectivity", lo / n, None))
        else:
            bands.append(Band(f"large counts {lo}-{hi}", "selectivity", lo / n, (hi + 1) / n))
    return tuple(bands)


def data_records(data: Dataset) -> Records:
    """The original table as :class:`Records` with the SA as target, counted on its combinations.

    The table's distinct (QI..., SA) combinations with their counts
    (:meth:`core.engine.combos.Combos.of`, memoised per dataset; the Dask
    engine's :class:`core.engine.dask.SummaryData` carries them) are
    weighted cells that answer every query as the records do, coded by the
    table's :class:`core.counting.QIGroups`.  A fresh index cache each
    call: the indexes serve one workload.
    """
    combos = getattr(data, "combos", None)
    if combos is None:
        from .engine.combos import Combos

        combos = Combos.of(data)
    return combos.records()


def true_answers(records: Records, batches: Sequence[QueryBatch]) -> np.ndarray:
    """Answers of every query of ``batches`` counted on ``records``, in batch order.

    The batches' attribute subsets are indexed larger first
    (:meth:`core.counting.Records.prepare`), so each smaller subset is
    projected from a superset's cells instead of counted over the records
    (census 500K, seed 000's 5,000 queries: 0.23 s instead of 0.30 s).

    Parameters
    ----------
    records : Records
        The table (or weighted cells) to count on.
    batches : sequence of QueryBatch

    Returns
    -------
    ndarray (Q,)
    """
    from .counting import select

    if not batches:
        return np.zeros(0)
    records.prepare(batches)
    return np.concatenate([select(records.counts(b), b.sa) for b in batches])


def _subset_probabilities(k: int, max_attrs: int) -> list[tuple[tuple[int, ...], float]]:
    """Every attribute subset with its probability under 'd uniform, then d distinct attributes'."""
    top = min(max_attrs, k)
    out = []
    for d in range(1, top + 1):
        n_sub = math.comb(k, d)
        for subset in combinations(range(k), d):
            out.append((subset, 1.0 / top / n_sub))
    return out


def _check_common(data: Dataset, max_attrs: int) -> None:
    if max_attrs < 1:
        raise ParameterError(f"The 'max_attrs' setting must be at least 1. Got {max_attrs}.")
    if not data.qi:
        raise ParameterError("The workload needs at least one QI column.")


def seed000(data: Dataset, queries: int = 5000, max_attrs: int = 3, seed: int = 0,
            records: Records | None = None) -> Workload:
    """Seed 000's query pools: small counts (1..10) and large-count selectivity bands.

    Half of ``queries`` form the small pool, the other half the large pool
    split evenly over the six selectivity bands (our choice: the paper draws
    one large pool over [0.5%, 5%) and reports by band; stratifying keeps
    every band's mean on an equal number of queries).  Within a band, each
    query is drawn with the probability it has under the paper's generator
    (d uniform in 1..max_attrs, distinct attributes, uniform values, uniform
    SA value) conditioned on landing in the band: a weighted sample without
    replacement (Efraimidis-Spirakis keys) over every query that lands there.
    A band with fewer candidates than its share keeps all of them and the
    shortfall goes to the other large-count bands that have candidates to
    spare, then to the small pool, so the workload has ``queries`` queries
    whenever the table has that many distinct ones.
    """
    if queries < 2:
        raise ParameterError(f"The 'queries' setting must be at least 2. Got {queries}.")
    _check_common(data, max_attrs)
    rng = np.random.default_rng(seed)
    records = records or data_records(data)
    n = data.n
    subsets = _subset_probabilities(len(data.qi), max_attrs)
    if by_count(n):
        # small table: large-count bands by count, merged until each has enough candidate queries
        bands = seed000_bands(n)
        counts = np.concatenate([records.index(subset).entries()[2] for subset, _ in subsets] or [np.zeros(0)])
        bands = seed000_bands(n, [int(b.contains(counts, n).sum()) for b in bands[1:]])
    else:
        bands = seed000_bands(n)
    bands = list(bands)
    n_small = queries // 2
    n_large = queries - n_small
    share = [n_small] + _split(n_large, len(bands) - 1)
    available = np.zeros(len(bands), dtype=np.int64)

    # running best candidates per band: (log key, subset id, values row, sa)
    best: list[list[tuple[np.ndarray, ...]]] = [[] for _ in bands]
    for sid, (subset, prob) in enumerate(subsets):
        idx = records.index(subset)
        values, sa, count = idx.entries()
        if len(count) == 0:
            continue
        cells = float(np.prod([data.domains[a] for a in subset])) * data.m
        weight = prob / cells
        for b, band in enumerate(bands):
            inside = band.contains(count, n)
            k = int(inside.sum())
            available[b] += k
            if k == 0:
                continue
            pos = np.flatnonzero(inside)
            # Efraimidis-Spirakis: key = U^(1/w), compared on log scale; the top
            # k of a band's keys are a weighted sample without replacement of size k,
            # and a prefix of them is one of any smaller size
            logkey = np.log(rng.random(k)) / weight
            if k > queries:
                top = np.argpartition(-logkey, queries - 1)[:queries]
                pos, logkey = pos[top], logkey[top]
            best[b].append((logkey, np.full(len(pos), sid), values[pos], sa[pos]))
            best[b] = [_keep_top(best[b], queries)]

    take = _allocate(share, available, queries)
    for b, parts in enumerate(best):
        if parts:
            logkey, sids, vals, sas = parts[0]
            top = np.argsort(-logkey, kind="stable")[: take[b]]
            best[b] = [(logkey[top], sids[top], vals[top], sas[top])]

    batches, membership_rows = [], []
    chosen_by_subset: dict[int, list[tuple[np.ndarray, np.ndarray, int]]] = {}
    for b, parts in enumerate(best):
        if not parts:
            continue
        _, sids, vals, sas = parts[0]
        for sid in np.unique(sids):
            sel = sids == sid
            chosen_by_subset.setdefault(int(sid), []).append((vals[sel], sas[sel], b))
    for sid in sorted(chosen_by_subset):
        subset = subsets[sid][0]
        vals = np.concatenate([v[:, : len(subset)] for v, _, _ in chosen_by_subset[sid]])
        sas = np.concatenate([s for _, s, _ in chosen_by_subset[sid]])
        band_ids = np.concatenate([np.full(len(s), b) for _, s, b in chosen_by_subset[sid]])
        sa_mask = np.zeros((len(sas), data.m), dtype=bool)
        sa_mask[np.arange(len(sas)), sas] = True
        batches.append(QueryBatch(attrs=subset, values=vals.astype(np.int64), sa=sa_mask))
        membership_rows.append(band_ids)
    band_ids = np.concatenate(membership_rows) if membership_rows else np.zeros(0, int)
    membership = np.stack([band_ids == b for b in range(len(bands))]) if len(bands) else np.zeros((0, 0), bool)
    true = true_answers(records, batches)
    return Workload(kind="seed000", seed=seed, n_records=n, batches=tuple(batches), true=true,
                    bands=tuple(bands), membership=membership,
                    settings={"queries": queries, "max_attrs": max_attrs, "seed": seed}, groups=records.groups)


def _allocate(share: list[int], available: np.ndarray, total: int) -> list[int]:
    """Queries per band: the share, capped by what exists; shortfalls go to large bands, then small."""
    take = [min(s, int(a)) for s, a in zip(share, available)]
    left = total - sum(take)
    order = list(range(1, len(share))) + [0]
    while left > 0:
        spare = [b for b in order if take[b] < available[b]]
        if not spare:
            break
        large = [b for b in spare if b != 0] or spare
        for b in large:
            if left == 0:
                break
            take[b] += 1
            left -= 1
    return take


def _split(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _keep_top(parts: list[tuple[np.ndarray, ...]], k: int) -> tuple[np.ndarray, ...]:
    logkey = np.concatenate([p[0] for p in parts])
    sids = np.concatenate([p[1] for p in parts])
    width = max(p[2].shape[1] for p in parts)
    vals = np.concatenate([_pad(p[2], width) for p in parts])
    sas = np.concatenate([p[3] for p in parts])
    if len(logkey) > k:
        top = np.argpartition(-logkey, k - 1)[:k]
        logkey, sids, vals, sas = logkey[top], sids[top], vals[top], sas[top]
    return logkey, sids, vals, sas


def _pad(values: np.ndarray, width: int) -> np.ndarray:
    if values.shape[1] == width:
        return values
    return np.concatenate([values, np.zeros((len(values), width - values.shape[1]), values.dtype)], axis=1)


def seed002(data: Dataset, conditions: int = 200, max_attrs: int = 3, seed: int = 0,
            thresholds: Sequence[float] = (0.001, 0.005, 0.01), records: Records | None = None) -> Workload:
    """Seed 002's pool: random conditions on 1..3 attributes crossed with every SA value.

    d is uniform in 1..max_attrs, the attributes are distinct and each value
    is uniform over the attribute's domain (seed 002 appendix 10.9).  Bands
    are the selectivity thresholds: a query belongs to every threshold it
    passes, so the bands overlap (the paper reports "queries that pass a
    selectivity s").
    """
    if conditions < 1:
        raise ParameterError(f"The 'conditions' setting must be at least 1. Got {conditions}.")
    _check_common(data, max_attrs)
    rng = np.random.default_rng(seed)
    records = records or data_records(data)
    k = len(data.qi)
    top = min(max_attrs, k)
    groups: dict[tuple[int, ...], list[np.ndarray]] = {}
    for _ in range(conditions):
        d = int(rng.integers(1, top + 1))
        attrs = tuple(sorted(rng.choice(k, size=d, replace=False).tolist()))
        vals = np.array([rng.integers(0, data.domains[a]) for a in attrs])
        groups.setdefault(attrs, []).append(vals)
    batches = []
    for attrs, rows in groups.items():
        cond = np.repeat(np.stack(rows), data.m, axis=0)
        sa = np.tile(np.eye(data.m, dtype=bool), (len(rows), 1))
        batches.append(QueryBatch(attrs=attrs, values=cond.astype(np.int64), sa=sa))
    true = true_answers(records, batches)
    bands = tuple(Band(f"selectivity >= {t:.1%}".replace(".0%", "%"), "selectivity", t, None) for t in thresholds)
    membership = np.stack([b.contains(true, data.n) for b in bands])
    return Workload(kind="seed002", seed=seed, n_records=data.n, batches=tuple(batches), true=true,
                    bands=bands, membership=membership,
                    settings={"conditions": conditions, "max_attrs": max_attrs, "seed": seed,
                              "thresholds": list(thresholds)}, groups=records.groups)


# ------------------------------------------------------------------ joint queries on two sensitive attributes
#: seed 000 §6.4 (Fig. 12): joint queries at 0.1% to 0.7% selectivity, here in bands of 0.1%
JOINT_EDGES = (0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007)


@dataclass(frozen=True, eq=False)
class JointWorkload(Workload):
    """Count queries on two sensitive attributes: ``P AND SA = a AND SA2 = b``.

    ``batches`` and ``true`` are as in :class:`Workload` (``batch.sa`` selects
    the value of the first SA); ``sa2[i]`` selects the value(s) of the second
    SA ``second`` for query ``i`` (rows in the batches' order), coded as
    :meth:`core.table.Dataset.column` encodes that column, which is how an
    SPLU-Gen release with ``sa2 = second`` encodes it.
    """

    second: str = ""
    sa2: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))
    second_labels: tuple = ()

    def describe(self, data: Dataset, i: int) -> str:
        """``workclass = Private AND occupation = Sales AND age_interval = 05: 36-40``."""
        chosen = [str(self.second_labels[v]) for v in np.flatnonzero(self.sa2[i])]
        if len(chosen) == 1:
            tail = f"{self.second} = {chosen[0]}"
        else:
            tail = f"{self.second} IN ({', '.join(chosen[:6])}{', ...' if len(chosen) > 6 else ''})"
        return f"{super().describe(data, i)} AND {tail}"

    def sa2_of(self, b: int) -> np.ndarray:
        """The ``sa2`` rows of batch ``b``."""
        off = self.offsets
        return self.sa2[off[b]:off[b + 1]]


def second_column(data: Dataset, name: str | None):
    """The second sensitive attribute ``name`` of ``data``, checked (one sentence when it cannot be one)."""
    from .errors import clip

    others = [c for c in (data.table.columns if data.table is not None else []) if c != data.sa and c not in data.qi]
    hint = (f" Columns that can be: {', '.join(map(str, others[:8]))}{', ...' if len(others) > 8 else ''}."
            if others else " This table has no column besides the sensitive attribute and the QIs.")
    if name is None or not str(name).strip():
        raise ParameterError("Joint queries need a second sensitive attribute: set 'sa2' to a column that is neither "
                             f"the sensitive attribute nor a QI (census-2sa: age_interval).{hint}")
    if name == data.sa:
        raise ParameterError(f"The second sensitive attribute must be another column than '{data.sa}'.{hint}")
    if name in data.qi:
        raise ParameterError(f"The second sensitive attribute '{clip(name)}' is a QI column; take it out of the QIs "
                             f"or choose another.{hint}")
    col = data.column(name)
    if col.size < 2:
        raise ParameterError(f"The second sensitive attribute '{clip(name)}' has a single value; there is nothing to "
                             "count jointly.")
    return col


def joint(data: Dataset, sa2: str | None = None, queries: int = 2000, edges: Sequence[float] | str = JOINT_EDGES,
          max_attrs: int = 2, seed: int = 0) -> JointWorkload:
    """Joint count queries ``A_1 = v_1 [AND ...] AND SA = a AND SA2 = b`` (seed 000 §5.2, §6.4, Fig. 12).

    Candidates are every combination that occurs: a condition on 1 to
    ``max_attrs`` distinct QI attributes with one value each, a value a of
    the SA and a value b of ``sa2``.  Bands: the small counts (true count 1
    to 10, where a large error protects the few people counted) and the
    selectivity bands between consecutive ``edges`` (default seed 000 §6.4's
    0.1% to 0.7%, in steps of 0.1%), plus one band from the last edge up.
    As in :func:`seed000`, half the queries are small counts and half are
    split evenly over the selectivity bands, a band short of candidates
    passing its share on (:func:`_allocate`); a query sits in the first band
    that contains it, so a small table's small counts are never counted
    twice.

    Choices where the paper is silent: within a band the queries are drawn
    uniformly from the candidates (not weighted by seed 000's generator,
    whose uniform values almost never hit a joint cell of 0.1%); conditions
    on at most 2 attributes by default, because with two sensitive values
    fixed a third attribute leaves few cells at the paper's selectivity.

    Parameters
    ----------
    data : Dataset
    sa2 : str
        The second sensitive attribute (a column neither SA nor QI).
    queries : int
    edges : sequence of float or str
        Ascending selectivity edges (fractions), e.g. ``"0.001,0.003,0.007"``.
    max_attrs : int
    seed : int

    Returns
    -------
    JointWorkload
    """
    if queries < 2:
        raise ParameterError(f"The 'queries' setting must be at least 2. Got {queries}.")
    _check_common(data, max_attrs)
    edges = _edges(edges)
    second = second_column(data, sa2)
    m2 = second.size
    n = data.n
    target = data.sa_codes.astype(np.int64) * m2 + second.codes
    from .engine.combos import Combos

    # the pairs counted on their distinct (QI, pair) cells, coded by the table's QI combinations
    groups = Combos.of(data).groups
    records = Records.on_rows(data.qi_codes, data.domains, target, data.m * m2, groups=groups)
    bands = [Band(f"small counts (1-{SMALL_MAX})", "count", 1, SMALL_MAX)]
    for lo, hi in zip(edges[:-1], edges[1:]):
        bands.append(Band(f"[{lo:.1%}, {hi:.1%})", "selectivity", lo, hi))
    bands.append(Band(f">= {edges[-1]:.1%}", "selectivity", edges[-1], None))
    # every occurring (condition, a, b) with its band (the first that contains it; -1 = none)
    cands = []
    for d in range(1, min(max_attrs, len(data.qi)) + 1):
        for subset in combinations(range(len(data.qi)), d):
            values, t, count = records.index(subset).entries()
            band = np.full(len(count), -1)
            for b in range(len(bands) - 1, -1, -1):
                band[bands[b].contains(count, n)] = b
            keep = band >= 0
            cands.append((subset, values[keep], t[keep], count[keep], band[keep]))
    available = np.array([sum(int((c[4] == b).sum()) for c in cands) for b in range(len(bands))])
    if available.sum() == 0:
        raise ParameterError(f"No joint query on {data.name} has a true count in any band; widen the edges.")
    n_small = queries // 2
    take = _allocate([n_small] + _split(queries - n_small, len(bands) - 1), available, queries)
    rng = np.random.default_rng(seed)
    # per band, a uniform sample without replacement over the candidates of every subset
    chosen = {}
    for b in range(len(bands)):
        if take[b] == 0:
            continue
        pick = np.sort(rng.choice(int(available[b]), size=take[b], replace=False))
        start = 0
        for k, c in enumerate(cands):
            pos = np.flatnonzero(c[4] == b)
            mine = pick[(pick >= start) & (pick < start + len(pos))] - start
            start += len(pos)
            if len(mine):
                chosen.setdefault(k, []).append(pos[mine])
    batches, sa2_rows, true, band_ids = [], [], [], []
    for k in sorted(chosen):
        subset, values, t, count, band = cands[k]
        rows = np.sort(np.concatenate(chosen[k]))
        mask = np.zeros((len(rows), data.m), dtype=bool)
        mask[np.arange(len(rows)), t[rows] // m2] = True
        mask2 = np.zeros((len(rows), m2), dtype=bool)
        mask2[np.arange(len(rows)), t[rows] % m2] = True
        batches.append(QueryBatch(attrs=subset, values=values[rows][:, : len(subset)].astype(np.int64), sa=mask))
        sa2_rows.append(mask2)
        true.append(count[rows].astype(float))
        band_ids.append(band[rows])
    band_of = np.concatenate(band_ids)
    membership = np.stack([band_of == b for b in range(len(bands))])
    return JointWorkload(kind="joint", seed=seed, n_records=n, batches=tuple(batches), true=np.concatenate(true),
                         bands=tuple(bands), membership=membership,
                         settings={"sa2": second.name, "queries": queries, "edges": list(edges),
                                   "max_attrs": max_attrs, "seed": seed},
                         second=second.name, sa2=np.concatenate(sa2_rows),
                         second_labels=tuple(second.labels.tolist()), groups=groups)


def _edges(edges: Sequence[float] | str) -> list[float]:
    """Ascending selectivity edges in (0, 1), from a list or ``"0.001,0.002"``; one sentence when not."""
    text = edges if isinstance(edges, str) else ",".join(str(e) for e in edges)
    try:
        out = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        out = []
    if not out or any(not 0 < e < 1 for e in out) or any(b <= a for a, b in zip(out, out[1:])) or len(out) > 20:
        raise ParameterError("The 'edges' setting is a list of 1 to 20 ascending selectivities between 0 and 1, "
                             f"comma separated (e.g. 0.001,0.003,0.007). Got {str(text)[:80]!r}.")
    return out
