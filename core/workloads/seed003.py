"""Seed 003's count-query workload (§7.2.2, after Anatomy [22]): ORs of values on random attributes.

``SELECT COUNT(*) FROM T WHERE pred(A_1) AND ... AND pred(A_qd) AND pred(SA)``:
``q_d`` is uniform in 1..(number of QI attributes), the attributes are
distinct and random, and each ``pred(A)`` is ``A = a_1 OR ... OR A = a_b``
with ``b = ceil(|A| s^(1/(q_d+1)))`` distinct random values, for an expected
selectivity ``s`` (1% in the paper).  Metrics: relative error
``|act - est| / act`` averaged over the queries (Figure 5) and the MSE.

Choices where the paper is silent
---------------------------------
* ``pred(SA)``: the paper writes the same form for every attribute A, and
  Anatomy's exponent ``1/(q_d + 1)`` counts the SA among the q_d + 1
  predicates, so by default the SA predicate is an OR of
  ``ceil(m s^(1/(q_d+1)))`` values (``sa=or``); ``sa=one`` asks for a
  single SA value instead.
* Queries with a true answer of 0 have no relative error; they are left
  out of the averages (as everywhere in the workbench) and counted.
* The pool size defaults to 1,000 queries (the paper uses 5,000; any size
  up to 20,000 can be asked for).

Speed: queries are batched by attribute subset; true answers come from
indexes built larger subsets first, each projected from the smallest index
over a superset of its attributes (:meth:`core.counting.Records.prepare`),
so up to 2^d - 1 subsets cost a few milliseconds each instead of a pass over
the records each.

References
----------
seed 003 §7.2.2; Xiao & Tao, Anatomy (VLDB 2006) §6.
"""

from __future__ import annotations

import math

import numpy as np

from ..counting import QueryBatch, Records
from ..errors import ParameterError, clip
from ..params import Param
from ..table import Dataset
from ..workload import Band, Workload, data_records, true_answers
from . import WorkloadKind

BANDS = (
    Band("all queries (answer > 0)", "selectivity", 0.0, None),
    Band("selectivity < 0.1%", "selectivity", 0.0, 0.001),
    Band("[0.1%, 1%)", "selectivity", 0.001, 0.01),
    Band(">= 1%", "selectivity", 0.01, None),
)


def or_width(domain: int, s: float, qd: np.ndarray) -> np.ndarray:
    """``b = ceil(|A| s^(1/(q_d+1)))``, at least 1 and at most |A| (seed 003 §7.2.2).

    >>> or_width(50, 0.01, np.array([1, 7])).tolist()   # 50 x 0.1 = 5; 50 x 0.01^(1/8) = 28.1
    [5, 29]
    """
    b = np.ceil(domain * np.power(s, 1.0 / (np.asarray(qd, float) + 1)) - 1e-9).astype(np.int64)
    return np.clip(b, 1, domain)


def _random_subsets(rng: np.random.Generator, rows: int, domain: int, size: np.ndarray) -> np.ndarray:
    """(rows, domain) masks, row q holding ``size[q]`` distinct values chosen uniformly."""
    rank = np.argsort(rng.random((rows, domain)), axis=1).argsort(axis=1)
    return rank < np.asarray(size)[:, None]


def seed003(data: Dataset, queries: int = 1000, selectivity: float = 0.01, sa: str = "or", seed: int = 0,
            records: Records | None = None) -> Workload:
    """Seed 003's pool of ``queries`` OR-predicate count queries with their true answers."""
    if queries < 1:
        raise ParameterError(f"The 'queries' setting must be at least 1. Got {queries}.")
    if not data.qi:
        raise ParameterError("The workload needs at least one QI column.")
    if sa not in ("or", "one"):
        raise ParameterError(f"The 'sa' setting is 'or' or 'one'. Got {clip(sa)!r}.")
    rng = np.random.default_rng(seed)
    k = len(data.qi)
    qd = rng.integers(1, k + 1, size=queries)
    chosen = _random_subsets(rng, queries, k, qd)  # which attributes each query constrains
    masks = []
    for j, domain in enumerate(data.domains):
        width = or_width(domain, selectivity, qd)
        mask = _random_subsets(rng, queries, domain, width)
        masks.append(mask)
    sa_width = or_width(data.m, selectivity, qd) if sa == "or" else np.ones(queries, dtype=np.int64)
    sa_mask = _random_subsets(rng, queries, data.m, sa_width)
    # one batch per attribute subset (queries keep their draw order inside it)
    subsets = [tuple(np.flatnonzero(row).tolist()) for row in chosen]
    batches = []
    for attrs in sorted(set(subsets)):
        rows = np.flatnonzero([s == attrs for s in subsets])
        batches.append(QueryBatch(attrs=attrs, masks=tuple(masks[a][rows] for a in attrs), sa=sa_mask[rows]))
    records = records or data_records(data)
    # a fresh cache over the same columns: the projected indexes serve this workload only
    counter = records.fresh()
    true = true_answers(counter, batches)
    membership = np.stack([b.contains(true, data.n) for b in BANDS])
    return Workload(kind="seed003", seed=seed, n_records=data.n, batches=tuple(batches), true=true, bands=BANDS,
                    membership=membership,
                    settings={"queries": queries, "selectivity": selectivity, "sa": sa, "seed": seed,
                              "dimensionality": qd.tolist() if queries <= 50 else None}, groups=records.groups)


def mse(true: np.ndarray, est: np.ndarray) -> float:
    """Mean squared error of the estimates over the pool."""
    return float(np.mean((np.asarray(est, float) - np.asarray(true, float)) ** 2)) if len(true) else math.nan


def mean_relative_error(true: np.ndarray, est: np.ndarray) -> float:
    """``mean |act - est| / act`` over the queries with ``act > 0`` (seed 003 Figure 5)."""
    true = np.asarray(true, float)
    ok = true > 0
    return float(np.mean(np.abs(np.asarray(est, float)[ok] - true[ok]) / true[ok])) if ok.any() else math.nan


WORKLOADS = [
    WorkloadKind(
        "seed003", "OR predicates on random attributes (seed 003)", seed003, "queries",
        "Each query constrains 1 to all QI attributes (chosen at random), each to an OR of several random values, "
        "plus the sensitive attribute; the number of values per OR is set so that a query selects about s of the "
        "table (seed 003 §7.2.2, after Anatomy). Errors are averaged over all queries with a non-zero answer.",
        params=(
            Param("queries", "Q", "Number of queries in the pool.", 1000, kind="int", low=1, high=20_000,
                  paper="seed 003 §7.2.2: a pool of 5,000"),
            Param("selectivity", "s", "Expected selectivity: the share of the table a query selects on average.",
                  0.01, low=0, high=1, closed="right", step=0.001, paper="seed 003 §7.2.2: 1%"),
            Param("sa", "pred(SA)", "The sensitive attribute's predicate: 'or' = an OR of values like the others "
                  "(the paper's form), 'one' = a single value.", "or", kind="choice", choices=("or", "one"),
                  paper="seed 003 §7.2.2"),
            Param("seed", "seed", "Random seed of the query generator (same seed, same queries).", 0, kind="int",
                  low=0, high=2**31 - 1),
        ),
        paper="seed 003 §7.2.2", metric="relative error and MSE", order=30),
]
