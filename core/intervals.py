"""Utility in people: the 95% interval of a count's estimate (issue 22 item 5).

A mean relative error does not tell a reviewer what a published figure is
worth.  This module says it in people: "a true count of 10 is published as
10 +/- 7; a count of 1,000 as 1,000 +/- 21", i.e. the half-width ``h`` such
that the estimate of a count lies within ``h`` people of the truth with
probability 95%.

The pool of counts is a seed-000 workload on the table (:func:`core.workload.seed000`):
for a headline count ``c`` the queries whose true count lies in
``[c/2, 2c]``, for a band the band's queries.  ``h`` is the 95% quantile of
``|estimate - true|`` over the pool and over the mechanism's randomness:

* **Laplace** (exact): ``h = b ln 20`` with ``b`` the published noise scale
  (``P(|Lap(b)| > h) = exp(-h / b)``), the same for every count;
* **UP and RP** (exact): the published count of a value x in a set of N
  records holding c of them is ``Bin(c, p + (1-p)/m) + Bin(N - c, (1-p)/m)``
  and the estimator is ``(O - N (1-p)/m) / p`` (seed 001 Lemma 1,
  :func:`core.mechanisms.uniform.mle`); the distribution of each query's error
  is computed exactly (the two binomials convolved), then mixed over the pool;
* **every other mechanism** (SPLU-Gen included: its estimator mixes the
  groups' draws with a Bayes step, and we have no closed form for it): by
  seeded simulation, ``reps`` releases with seeds drawn from ``seed``, each
  estimating the whole workload; ``h`` is the 95% quantile of the pooled
  absolute errors.  A mechanism without randomness (or with little) still
  gets the spread of its bias over the pool's queries.

Where the issue is silent we chose: the pool ``[c/2, 2c]`` (none such: no
figure, said in the sentence), ``reps = 5``, and the half-width as an
integer number of people in sentences (rounded up).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from . import mechanisms
from .release import Release, jsonable
from .table import Dataset
from .workload import Workload, data_records, seed000

CONFIDENCE = 0.95
DEFAULT_COUNTS = (10, 1000)
DEFAULT_REPS = 5
DEFAULT_QUERIES = 2000
EXACT_LAPLACE = "exact (Laplace tail)"
EXACT_BINOMIAL = "exact (two binomials, seed 001 Lemma 1)"


@dataclass(frozen=True)
class CountInterval:
    """One pool's figure: its typical true count, the 95% half-width in people, and its size."""

    label: str
    count: float | None  # the headline count, or the pool's median true count (bands)
    half_width: float | None  # None: no query in the pool
    queries: int

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "count": self.count, "half_width": self.half_width, "queries": self.queries}


@dataclass(frozen=True)
class CountIntervals:
    """The count intervals of one release setting (:func:`count_intervals`)."""

    mechanism: str
    params: Mapping[str, Any]
    seed: int
    method: str
    reps: int
    at: tuple[CountInterval, ...]
    bands: tuple[CountInterval, ...]

    def half_width(self, count: int) -> float | None:
        return next((c.half_width for c in self.at if c.count == count), None)

    def to_json(self) -> dict[str, Any]:
        """JSON-safe, the same for the same seed (``evaluate --json``'s ``count_intervals``)."""
        return jsonable({"confidence": CONFIDENCE, "method": self.method, "seed": self.seed,
                         "replicates": self.reps if self.method.startswith("simulation") else None,
                         "at": [c.to_json() for c in self.at], "bands": [c.to_json() for c in self.bands],
                         "sentence": self.sentence()})

    def sentence(self) -> str:
        """``a true count of 10 is published as 10 +/- 7; 1,000 as 1,000 +/- 21`` (95% of the time)."""
        parts = []
        for i, c in enumerate(self.at):
            n = f"{c.count:,.0f}"
            if c.half_width is None:
                parts.append(f"no count near {n} in the workload")
            else:
                lead = "a true count of " if i == 0 else ""
                tail = " is published as" if i == 0 else " as"
                parts.append(f"{lead}{n}{tail} {n} +/- {people(c.half_width)}")
        return "; ".join(parts) + " (95% of the time)"


def people(h: float) -> str:
    """A half-width in whole people, rounded up (0.3 -> 1; an exact count stays 0)."""
    return f"{math.ceil(h - 1e-9):,}"


def count_intervals(data: Dataset, mechanism: str, params: Mapping[str, Any] | None, seed: int, *,
                    workload: Workload | None = None, counts: Sequence[int] = DEFAULT_COUNTS,
                    reps: int = DEFAULT_REPS, queries: int = DEFAULT_QUERIES,
                    release: Release | None = None) -> CountIntervals:
    """The 95% interval in people of the release's count estimates, at ``counts`` and per band.

    ``release``: the release of exactly these parameters and seed, when the
    caller has it (the exact methods read its published p or noise scale).
    Cost: exact methods one pass over the pool (milliseconds); simulation
    ``reps`` sanitizations and workload estimates (about 0.5-3 s on Adult).
    A table of more than :data:`MAX_ROWS` records raises ``NotEligible``.
    """
    from .errors import NotEligible

    seed = mechanisms.check_seed(seed)
    if data.n > MAX_ROWS:
        raise NotEligible(_too_large(data.n))
    w = workload if workload is not None else seed000(data, queries, seed=seed)
    rel = release if release is not None else mechanisms.sanitize(data, mechanism, params, seed)
    true = np.asarray(w.true, float)
    pools = [(f"count {c:,}", float(c), (true >= c / 2) & (true <= 2 * c)) for c in counts]
    pools += [(b.name, None, np.asarray(member, bool) & (true > 0)) for b, member in zip(w.bands, w.membership)]
    method, quantile = _method(data, rel, w, seed, int(reps))
    out = []
    for label, c, member in pools:
        idx = np.flatnonzero(member)
        h = quantile(idx) if len(idx) else None
        out.append(CountInterval(label, c if c is not None else (float(np.median(true[idx])) if len(idx) else None),
                                 None if h is None else float(h), int(len(idx))))
    k = len(counts)
    return CountIntervals(rel.mechanism, dict(rel.source.get("raw_params", {})), seed, method, int(reps),
                          tuple(out[:k]), tuple(out[k:]))


#: count intervals are measured on tables of at most this many records, the risk's bound
#: (:data:`core.risk.RISK_ROWS`): a simulation sanitizes the whole table ``reps - 1`` more times, which on a
#: 5M-row census table kept several GB of releases alive behind every Sanitize slider move
MAX_ROWS = 1_000_000


def block(data: Dataset, mechanism: str, params: Mapping[str, Any] | None, seed: int,
          release: Release | None = None, workload: Workload | None = None) -> dict[str, Any]:
    """:func:`count_intervals` as JSON with ``measured: true``, or ``{"measured": false, "why": ...}``.

    What the CLI (``evaluate --json``), the pages and the report show: one
    rule for all.  A table of more than :data:`MAX_ROWS` records, or a setting
    the intervals cannot be measured for, says why instead.  ``release`` and
    ``workload`` (the seed-000 workload of :data:`DEFAULT_QUERIES` queries
    drawn with ``seed``), when the caller keeps them, are used rather than
    built again.
    """
    from .errors import WorkbenchError

    if data.n > MAX_ROWS:  # said without reading the table (the Dask engine's summary has only its size)
        return {"measured": False, "why": _too_large(int(data.n))}
    try:
        return {"measured": True, **count_intervals(data, mechanism, params, seed, release=release,
                                                    workload=workload).to_json()}
    except WorkbenchError as exc:
        return {"measured": False, "why": str(exc)}


def _too_large(rows: int) -> str:
    return f"The table has {rows:,} records; count intervals are measured on tables of at most {MAX_ROWS:,}."


def _method(data: Dataset, rel: Release, w: Workload, seed: int, reps: int):
    """``(method, quantile(query indices) -> h)`` for the release's mechanism."""
    if rel.mechanism == "laplace":
        b = float(rel.published["noise_scale"])
        return EXACT_LAPLACE, lambda idx: b * math.log(1 / (1 - CONFIDENCE))
    if rel.mechanism in ("uniform", "reconstruction"):
        p, m = float(rel.state["p"]), int(rel.state["m"])
        c, n = _counts_and_sizes(data, w)
        return EXACT_BINOMIAL, _BinomialPool(c, n, p, m).quantile
    errors = _simulate(data, rel, w, seed, reps)
    return f"simulation ({reps} releases)", lambda idx: float(np.quantile(np.abs(errors[:, idx]), CONFIDENCE))


def _counts_and_sizes(data: Dataset, w: Workload) -> tuple[np.ndarray, np.ndarray]:
    """Each query's true count and the size of its QI predicate's set (both from the table)."""
    rec = data_records(data)
    sizes = []
    for b in w.batches:
        sizes.append(np.asarray(rec.counts(b), float).sum(axis=1))
    return np.asarray(w.true, float), np.concatenate(sizes) if sizes else np.zeros(0)


class _BinomialPool:
    """95% quantile of |estimate - c| for a query drawn from a pool, each query's error exact (UP, RP).

    The observed count is ``Bin(c, d) + Bin(N - c, o)`` with ``d = p + (1-p)/m``,
    ``o = (1-p)/m``; ``estimate - c = (O - E[O]) / p``.  Each binomial's pmf is
    taken over its support within 12 standard deviations of its mean (the
    mass left out is below 1e-30), the two convolved; a pool mixes its
    queries with equal weights.  Each query's distribution is computed once.
    """

    def __init__(self, c: np.ndarray, n: np.ndarray, p: float, m: int):
        self.c, self.n, self.p = c.astype(np.int64), n.astype(np.int64), p
        self.d, self.o = p + (1 - p) / m, (1 - p) / m
        self._memo: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

    def _one(self, ci: int, ni: int) -> tuple[np.ndarray, np.ndarray]:
        key = (ci, ni)
        if key not in self._memo:
            from scipy import stats

            a0, a = _pmf(stats, ci, self.d)
            b0, b = _pmf(stats, ni - ci, self.o)
            pmf = np.convolve(a, b)
            mean = ci * self.d + (ni - ci) * self.o
            self._memo[key] = (np.abs(a0 + b0 + np.arange(len(pmf)) - mean) / self.p, pmf / pmf.sum())
        return self._memo[key]

    def quantile(self, idx: np.ndarray) -> float:
        parts = [self._one(int(self.c[i]), int(self.n[i])) for i in idx]
        dev = np.concatenate([x[0] for x in parts])
        prob = np.concatenate([x[1] for x in parts]) / len(parts)
        order = np.argsort(dev, kind="stable")
        cum = np.cumsum(prob[order])
        return float(dev[order][min(np.searchsorted(cum, CONFIDENCE - 1e-12), len(dev) - 1)])


def _pmf(stats, n: int, q: float) -> tuple[int, np.ndarray]:
    """``(first value, pmf)`` of Bin(n, q) over its support within 12 sd of the mean."""
    if n <= 0:
        return 0, np.ones(1)
    sd = math.sqrt(n * q * (1 - q))
    lo = max(0, int(math.floor(n * q - 12 * sd - 1)))
    hi = min(n, int(math.ceil(n * q + 12 * sd + 1)))
    k = np.arange(lo, hi + 1)
    # binom._pmf: the same boost kernel as binom.pmf without its argument checks, which cost 80% of the time
    # over the thousands of small calls of one pool (k, n, q are valid here); tests/test_risk_intervals.py checks
    # that the two agree bit for bit on this scipy
    return lo, stats.binom._pmf(k, n, q)


def _simulate(data: Dataset, rel: Release, w: Workload, seed: int, reps: int) -> np.ndarray:
    """``(reps, queries)`` estimate errors of ``reps`` releases with seeds drawn from ``seed`` (the first: ``seed``)."""
    rng = np.random.default_rng([seed, 0x1A7])
    seeds = [seed] + [int(s) for s in rng.integers(0, mechanisms.MAX_SEED, max(reps - 1, 0))]
    raw = rel.source.get("raw_params", {})
    true = np.asarray(w.true, float)
    out = np.empty((len(seeds), len(true)))
    for i, s in enumerate(seeds):
        r = rel if s == seed else mechanisms.sanitize(data, rel.mechanism, raw, s)
        out[i] = np.asarray(mechanisms.estimate(r, w), float) - true
    return out
