"""The mechanism protocol shared by all eleven mechanisms.

A mechanism declares its parameters once (:class:`core.params.Param`) and
implements three things:

* ``check(data, values)``: raise :class:`core.errors.NotEligible` with a
  one-sentence reason (and a suggestion) when the table cannot be sanitized
  with these parameters;
* ``sanitize(data, values, rng) -> Published``: the published tables,
  metadata, privacy checks and the estimator's state;
* ``estimate(release, batch, rng) -> ndarray``: estimated answers of a
  :class:`core.counting.QueryBatch` from the release.

and declares its own guarantee, checked on the release it produced:

* ``promise(values) -> str``: the guarantee in one sentence;
* ``guarantee(data, values, release) -> Verdict``: whether this release
  meets it (:mod:`core.guarantee`), with the figures that show it or the
  parts that fail;
* ``nearest(data, values, verdict)``: candidate settings, nearest first,
  that may meet it; :func:`core.mechanisms.verdict` sanitizes with each
  until one meets plainly, so a suggestion is always verified.

The engine protocol (issue 15, :mod:`core.engine.protocol`): a mechanism
with ``planned = True`` implements ``plan(summary, values, seed) -> Plan``
from the table's :class:`core.engine.combos.Combos`, and
:func:`core.mechanisms.sanitize` runs it on the local engine
(:mod:`core.engine.local`) instead of ``sanitize``; every draw then comes
from :mod:`core.rng`, keyed by record, so the release is the same whatever
the batch size or engine.  A mechanism not yet converted keeps
``sanitize(data, values, rng)``.

Optional hooks: ``check_params`` (rules across parameters, e.g.
rho1 < rho2), ``derived`` (values computed from the parameters and the
table, shown live and recorded in the manifest, e.g. p = 1/gamma).
:func:`core.mechanisms.sanitize` runs the protocol, adds provenance and
the release's verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from .. import params as _params
from ..counting import QueryBatch, Records, select, unique_rows
from ..errors import NotEligible, WorkbenchError
from ..guarantee import Verdict
from ..release import CodedTable, Published, Release
from ..table import Dataset


@dataclass(frozen=True)
class Eligibility:
    """Whether a table can be sanitized with given parameters, and why not."""

    ok: bool
    message: str = ""
    suggestion: Mapping[str, Any] | None = None


class Mechanism:
    """Base class; subclasses set the class attributes and implement the methods."""

    name: str = ""
    title: str = ""
    paper: str = ""
    summary: str = ""  # plain-language paragraph for the pages
    order: int = 100
    params: tuple[_params.Param, ...] = ()
    #: the parameter swept on the Query error page, and its default sweep
    main_param: str | None = None
    sweep: tuple = ()
    #: "table" (one published table), "tables" (several), or "answers" (interactive)
    publishes: str = "table"
    #: the published table holding one row per person with the QIs it publishes (singling out,
    #: core.singling_out); None where the release has no row per person
    record_table: str | None = "release"
    #: names of the analytical curves (core.bounds) this mechanism's guarantees rest on
    bounds: tuple[str, ...] = ()

    # ---------------------------------------------------------- parameters
    def param(self, name: str) -> _params.Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def resolve(self, raw: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Defaults filled in, every value validated, cross-rules checked."""
        values = _params.resolve(self.params, raw, self.name)
        self.check_params(values)
        return values

    def check_params(self, values: dict[str, Any]) -> None:
        """Rules across parameters; raise ParameterError."""

    def derived(self, data: Dataset, values: Mapping[str, Any]) -> dict[str, Any]:
        """Values computed from the parameters and the table (shown live)."""
        return {}

    # ---------------------------------------------------------- protocol
    def check(self, data: Dataset, values: Mapping[str, Any]) -> None:
        """Raise NotEligible when the table cannot be sanitized with ``values``."""

    def eligibility(self, data: Dataset, raw: Mapping[str, Any] | None = None) -> Eligibility:
        """Whether ``data`` can be sanitized with ``raw``, as an answer that never raises a user error.

        Any :class:`core.errors.WorkbenchError` of ``resolve`` or ``check``
        (a text parameter naming a column the table lacks raises DataError,
        not NotEligible) comes back as ``Eligibility(False, sentence)``, so a
        page shows it as one sentence (issue 12 item 2).
        """
        try:
            self.check(data, self.resolve(raw))
        except WorkbenchError as exc:
            return Eligibility(False, str(exc), getattr(exc, "suggestion", None) or None)
        return Eligibility(True)

    #: True when :meth:`plan` implements the engine protocol (:mod:`core.engine.protocol`); the release is
    #: then made by an engine from the plan, and :meth:`sanitize` is not called.
    planned: bool = False
    #: for a mechanism whose algorithm cannot be built from counts (it keeps ``sanitize``): why, in one
    #: sentence, shown by an engine that needs a plan (Dask)
    engine_note: str = ""

    def plan(self, summary, values: Mapping[str, Any], seed: int):
        """The :class:`core.engine.protocol.Plan` of this release, from the table's :class:`core.engine.combos.Combos`.

        Called after :meth:`check`; every draw must come from :mod:`core.rng`
        with ``seed`` (group-level draws keyed by group index, per-record
        draws in :meth:`Plan.apply` keyed by record position).
        """
        raise NotImplementedError

    def publish(self, data: Dataset, values: Mapping[str, Any], seed: int, batch_rows: int | None = None) -> Published:
        """The release of a planned mechanism on the local engine (:func:`core.engine.local.publish`).

        Override only to combine several plans (SPLU-Gen's second SA).
        """
        from ..engine import local

        return local.publish(data, self, values, seed, batch_rows)

    def sanitize(self, data: Dataset, values: Mapping[str, Any], rng: np.random.Generator) -> Published:
        raise NotImplementedError

    def estimate(self, release: Release, batch: QueryBatch, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def estimate_many(self, release: Release, batches, rng: np.random.Generator) -> list[np.ndarray]:
        """Estimates for several batches; override when one joint pass is cheaper."""
        return [np.asarray(self.estimate(release, b, rng), dtype=float) for b in batches]

    def estimate_grid(self, release: Release, conditions: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        """(C, m): the estimate of ``QI = conditions[c] AND SA = v`` for every condition c and SA value v.

        What the risk's attacks ask (:func:`core.risk.guesses`: each sampled
        micro group's estimated count of every SA value), as the one batch of
        ``C * m`` queries :func:`grid_batch` writes would be answered by
        :meth:`estimate_many`, reshaped: this default does exactly that.  A
        mechanism whose estimate is a function of each query's row of
        published counts overrides it to count each condition once, with the
        same numbers bit for bit (``tests/test_estimate_grid.py``): the batch
        holds ``C * m * m`` counts, 4.5 GB on the hospital sample's 749
        diagnoses, where the grid holds ``C * m``.
        """
        return np.asarray(self.estimate_many(release, [grid_batch(conditions, m)], rng)[0], float).reshape(-1, m)

    # ---------------------------------------------------------- guarantee
    def promise(self, values: Mapping[str, Any]) -> str:
        """The mechanism's own guarantee at ``values``, in one sentence."""
        raise NotImplementedError

    def guarantee(self, data: Dataset, values: Mapping[str, Any], release: Release) -> Verdict:
        """Whether ``release`` meets :meth:`promise`, computed on the release (:mod:`core.guarantee`)."""
        raise NotImplementedError

    def nearest(self, data: Dataset, values: Mapping[str, Any], verdict: Verdict) -> Iterable[dict[str, Any]]:
        """Parameter changes to try, nearest first, when ``verdict`` is not a plain meets.

        A mechanism with several parameters should offer changes of each of
        them (issue 23 §2: Mondrian's k alone was searched while raising β met
        at the same k); with :attr:`rank_by_utility` the driver
        (:func:`core.mechanisms.nearest`) then keeps every candidate that
        meets and offers the one of most :meth:`utility`.
        """
        return ()

    #: whether the nearest-setting search ranks the candidates that meet by :meth:`utility` (it tries every
    #: candidate, up to ``MAX_TRIES``) instead of offering the first, nearest one
    rank_by_utility = False

    def utility(self, data: Dataset, values: Mapping[str, Any], verdict: Verdict) -> tuple:
        """How useful a release that meets is, as a sortable key (larger is better) for the nearest search.

        The default: a release that does not publish little first
        (:meth:`core.guarantee.Verdict.little`), then the records it publishes,
        then its groups (finer groups answer queries better).
        """
        u = verdict.unpublished or {}
        published = int(u.get("of") or data.n) - int(u.get("records") or 0)
        groups = verdict.figures.get("groups")
        groups = int(groups) if isinstance(groups, (int, float)) and not isinstance(groups, bool) else 0
        return (not verdict.little(), published, groups)

    def __repr__(self) -> str:
        return f"<mechanism {self.name}>"


# ----------------------------------------------------------- shared helpers
def published_records(release: Release, table: str = "release") -> Records:
    """The published table's QI and SA codes as :class:`Records` (cached on the release).

    Counted as cells over the table's QI combinations
    (:func:`table_records`); a table known by its distinct rows and
    counts (the Dask engine's) is weighted by the counts.
    """
    cache = release.state.setdefault("_records", {}) if isinstance(release.state, dict) else {}
    if table in cache:
        return cache[table]
    t = release.tables[table]
    sa = release.source["sensitive"]
    count = getattr(t, "count", None)  # a table known by its distinct rows and counts (the Dask engine's)
    cols = t.columns if count is None else t.distinct
    records = table_records(release, cols[sa], len(t.labels[sa]), table=table, distinct=count is not None)
    cache[table] = records
    return records


def rows_of(table) -> tuple[Mapping[str, np.ndarray], np.ndarray | None]:
    """A published table's rows to count: ``(columns, None)``, or ``(distinct rows, their counts)``.

    The second for a table the Dask engine knows by its distinct rows and
    their counts (:class:`core.engine.dask.SummaryTable`): counting its
    distinct rows weighted by their counts gives its records' answers
    without expanding one row per record (64 bytes a row at 100M rows).
    """
    count = getattr(table, "count", None)
    return (table.columns, None) if count is None else (table.distinct, np.asarray(count))


#: the key under which :func:`share_groups` leaves a table's QI combinations in ``release.state["_records"]``
SHARED_GROUPS = "_qi_groups"


def share_groups(release: Release, groups) -> None:
    """Let ``release`` code its QI columns by ``groups`` (the :class:`core.counting.QIGroups` of its table).

    Called before a release is evaluated on a workload drawn from its table
    (:func:`core.mechanisms.estimate`): a release that publishes the
    table's QI columns (UP, SPLU, SDR, RP, DBR: the same tuples in another
    order) then counts every attribute subset with the subset ranks the
    workload's true answers computed, instead of coding its own rows again.
    A release whose rows are not all among ``groups`` (a table that drops
    or generalises QI values) is coded on its own, as without this call;
    either way the answers are those of the published rows.
    """
    if groups is None or not isinstance(release.state, dict):
        return
    cache = release.state.setdefault("_records", {})
    cache.setdefault(SHARED_GROUPS, groups)


def table_records(release: Release, target: np.ndarray, n_target: int, weights: np.ndarray | None = None,
                  table: str = "release", distinct: bool = False) -> Records:
    """A published table's QI columns with ``target`` as :class:`Records`, counted on its distinct cells.

    The rows are aggregated to their distinct (QI..., target) cells
    (:meth:`core.counting.Records.on_rows`: one sort per batch of rows),
    whose QI combinations are looked up among the table's groups shared
    with :func:`share_groups` when every one is there.

    Parameters
    ----------
    release : Release
    target : ndarray (N,) of int
        Target code of each row of the table (in its row order).
    n_target : int
    weights : ndarray (N,) of float, optional
        Weight of each row.
    table : str
        The published table.
    distinct : bool
        ``target`` and ``weights`` follow the table's distinct rows
        (``t.distinct``, a table the Dask engine knows by its distinct rows
        and their ``count``), each then weighted by its count as well;
        otherwise they follow ``t.columns``.
    """
    cache = release.state.setdefault("_records", {}) if isinstance(release.state, dict) else {}
    t = release.tables[table]
    cols = t.distinct if distinct else t.columns  # (``t.columns`` of a distinct-rows table expands every row)
    if distinct:
        count = np.asarray(t.count, dtype=np.float64)
        weights = count if weights is None else np.asarray(weights, dtype=np.float64) * count
    qi = release.source["qi"]
    return Records.on_rows([cols[c] for c in qi], [len(t.labels[c]) for c in qi], target, n_target, weights,
                           groups=cache.get(SHARED_GROUPS))


def grid_batch(conditions: np.ndarray, m: int) -> QueryBatch:
    """One query per (condition row, SA value), conditions on every QI: ``QI = conditions[c] AND SA = v``."""
    conditions = np.asarray(conditions, dtype=np.int64)
    return QueryBatch(attrs=tuple(range(conditions.shape[1])), values=np.repeat(conditions, m, axis=0),
                      sa=np.tile(np.eye(m, dtype=bool), (len(conditions), 1)))


def grid_counts(records: Records, conditions: np.ndarray) -> np.ndarray:
    """(C, n_target): ``records.counts(grid_batch(conditions, m))`` with each condition's row once, not m times."""
    conditions = np.asarray(conditions, dtype=np.int64)
    return records.index(tuple(range(conditions.shape[1]))).lookup(conditions)


def grid_select(counts: np.ndarray) -> np.ndarray:
    """(C, m): :func:`core.counting.select` of the grid's one-value queries on each condition's counts ``counts``.

    Query (c, v) reads ``counts[c, v]``, plus the sum's zero start, as
    ``select`` does on finite counts; non-finite counts go through
    ``select`` itself on the repeated rows (the same numbers either way).
    """
    if np.isfinite(counts).all():
        return counts + 0.0
    c, m = counts.shape
    return select(np.repeat(counts, m, axis=0), np.tile(np.eye(m, dtype=bool), (c, 1))).reshape(c, m)


def grid_of_rows(per_value_rows: Callable[[np.ndarray], np.ndarray], conditions: np.ndarray) -> np.ndarray:
    """(C, m) from an estimator's shared pass ``per_value_rows(rows)``: (U, m) for the distinct condition rows.

    What Mondrian's and Ambiguity's estimators do with a batch that repeats
    its value rows (they select each query's value from its row's
    estimates), without the batch.
    """
    rows, inv = unique_rows(np.asarray(conditions, dtype=np.int64))
    return grid_select(per_value_rows(rows))[inv.ravel()]


def observed(release: Release, batch: QueryBatch, table: str = "release") -> tuple[np.ndarray, np.ndarray]:
    """(observed count of the selected SA values, size of the predicate's set) in the published table."""
    counts = published_records(release, table).counts(batch)
    return select(counts, batch.sa), counts.sum(axis=1)


def shuffled(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random row order: published rows never reveal the input order."""
    return rng.permutation(n)


def qi_table(data: Dataset, order: np.ndarray, sa_codes: np.ndarray | None = None,
             sa_labels: np.ndarray | None = None) -> CodedTable:
    """The QI columns (and optionally an SA column) of ``data`` in row order ``order``."""
    columns = {c: data.qi_codes[j][order] for j, c in enumerate(data.qi)}
    labels: dict[str, np.ndarray | None] = {c: data.qi_labels[j] for j, c in enumerate(data.qi)}
    if sa_codes is not None:
        columns[data.sa] = sa_codes[order]
        labels[data.sa] = data.sa_labels if sa_labels is None else sa_labels
    return CodedTable(columns=columns, labels=labels)


def most_frequent(data: Dataset) -> tuple[str, int]:
    """Label and count of the most frequent SA value."""
    i = int(np.argmax(data.sa_counts))
    return str(data.sa_labels[i]), int(data.sa_counts[i])


def bucket_records(qi_codes, domains, record_group: np.ndarray, st_group: np.ndarray,
                   st_sa: np.ndarray, st_count: np.ndarray, m: int) -> Records:
    """Records for Anatomy-style estimation from a QIT and an ST, expanded row by row.

    Each QIT record of group g stands for every SA value x listed in g's ST,
    with weight ``c(g, x) / |g|``; counting these weighted records gives
    ``est = sum_g c(g, C) c(g, x) / |g|`` (seed 002 appendix 10.10, MECHANISMS.md
    section 6) for any QI predicate C through the same :class:`Records`
    machinery as every other estimator.

    The estimators use :meth:`core.counting.Records.from_groups`, which
    computes the same weights summed per QI combination without one row per
    (record, ST entry) (5M rows for PriView on census 500K); this literal
    expansion is kept as the twin the tests compare it with.
    """
    st_group = np.asarray(st_group, dtype=np.int64)
    order = np.argsort(st_group, kind="stable")
    st_group, st_sa, st_count = st_group[order], np.asarray(st_sa)[order], np.asarray(st_count, float)[order]
    n_groups = int(max(st_group.max(initial=-1), np.max(record_group, initial=-1)) + 1)
    start = np.searchsorted(st_group, np.arange(n_groups))
    stop = np.searchsorted(st_group, np.arange(n_groups), side="right")
    size = np.bincount(st_group, weights=st_count, minlength=n_groups)
    entries = (stop - start)[record_group]
    rows = np.repeat(np.arange(len(record_group)), entries)
    # position of each expanded row inside its group's ST entries
    offset = np.arange(len(rows)) - np.repeat(np.cumsum(entries) - entries, entries)
    st_row = start[record_group][rows] + offset
    weights = st_count[st_row] / size[record_group][rows]
    return Records([np.asarray(c)[rows] for c in qi_codes], domains, st_sa[st_row], m, weights=weights)
