"""Anatomy: l-diverse groups published as a QI table and a sensitive table.

Records are split into groups of l (or l + 1) distinct SA values (the
SPLU-Gen partition of :mod:`core.partition` is a valid Anatomy partition,
MECHANISMS.md section 6).  Published: QIT(QI..., GID) with exact QI values
and ST(GID, SA, Count).  Estimate of a query (QI condition C, SA = x):
``sum_g c(g, C) c(g, x) / |g|``, counted from the weighted cells of
:meth:`core.counting.Records.from_groups` (QIT index by group times the ST).

Built from counts (issue 15, :mod:`core.engine.protocol`): the groups are
:func:`core.partition.sorted_layout` of the SA counts, so the record of
value v with rank k among the value's records (input order) is in group
``(start_v + k) mod r``, exactly the groups :func:`distinct_value_groups`
forms on the rows; group ids are a random permutation drawn at group level
(:func:`core.shuffle.relabel`, purpose ``"anatomy/gid"``) and the ST is
built in the plan from the counts (one row per record: ``(gid, value, 1)``).

Guarantee (:meth:`Anatomy.guarantee`): l-diversity as Anatomy defines it
(Xiao & Tao, Definition 2): in every group of the published ST, no
sensitive value accounts for more than 1/l of the group's records, so an
adversary who links a person to their group guesses the value with
probability at most 1/l.  Checked on the published ST (counts per group).

References
----------
Xiao & Tao, Anatomy (VLDB 2006); seed 002 appendix 10.10; seed 000 §6.2.3.2.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .. import guarantee as G
from ..counting import QueryBatch, Records, select
from ..params import Param
from .. import shuffle
from ..engine.combos import Combos
from ..engine.protocol import Chunk, Plan
from ..partition import Layout, check_distinct_counts, sorted_layout
from ..release import CodedTable, Release
from ..table import Dataset
from .base import SHARED_GROUPS, Mechanism, grid_counts, grid_select, rows_of


class AnatomyPlan(Plan):
    """Anatomy's plan: the sorted layout of the SA counts and the groups' published ids (rank by SA)."""

    def __init__(self, seed: int, layout: Layout, gid: np.ndarray, **fields):
        super().__init__(seed=seed, rank_by="sa", table="qit", labels={"gid": None}, **fields)
        self.layout, self.gid = layout, gid

    def apply(self, chunk: Chunk) -> dict[str, np.ndarray]:
        return {"gid": self.gid[self.layout.group(chunk.sa, chunk.rank)]}


class Anatomy(Mechanism):
    name = "anatomy"
    title = "Anatomy (l-diversity)"
    paper = "baseline in seeds 000, 002, 003 (Xiao & Tao 2006)"
    summary = ("Records are split into groups of l different sensitive values. The QI values are published "
               "exactly with a group number, and each group's sensitive values separately, so within a group "
               "anyone could have any of its l values.")
    order = 60
    params = (
        Param("l", "ℓ", "Group diversity: each group holds this many different sensitive values; "
              "an adversary's best guess is right with probability at most 1/ℓ.",
              5, kind="int", low=2, high=50, step=1, safer="higher", paper="seed 000 §6.2.3.2: ℓ = γ = 5"),
    )
    main_param = "l"
    sweep = (2, 3, 4, 5, 6, 7)
    publishes = "tables"
    record_table = "qit"  # QIT(QIs, GID): every person's QIs as they are

    def check(self, data: Dataset, values: Mapping[str, Any]) -> None:
        check_distinct_counts("l", values["l"], data.sa_counts, data.sa_labels)

    planned = True

    def plan(self, summary: Combos, values: Mapping[str, Any], seed: int) -> AnatomyPlan:
        """Groups of l (or l + 1) distinct values from the SA counts; QIT(QI..., gid) per record, ST from counts."""
        layout = sorted_layout(summary.sa_counts, values["l"])
        r = layout.n_groups
        gid = shuffle.relabel(seed, "anatomy/gid", r)  # ids in random order: a GID reveals nothing of the sort
        gid = gid.astype(np.int32 if r < 2**31 else np.int64)  # the QIT's column: 4 bytes a record
        # ST: one row per (group, value), by (group, value); values are distinct in a group, so every count is 1
        g, v = layout.st_rows(gid)
        st = CodedTable(
            columns={"gid": g, summary.sa_name: v, "count": np.ones(len(g), dtype=np.uint8)},
            labels={"gid": None, summary.sa_name: summary.sa_labels, "count": None},
        )
        sizes = layout.sizes
        return AnatomyPlan(
            seed, layout, gid, tables={"st": st},
            published={"l": values["l"], "groups": r,
                       "group_sizes": {str(s): int(c) for s, c in zip(*np.unique(sizes, return_counts=True))}},
            privacy={"l_diversity": int(sizes.min()), "max_posterior": float(1 / sizes.min())},
            rows_out=summary.n,
        )

    def promise(self, values: Mapping[str, Any]) -> str:
        return (f"ℓ-diversity with ℓ = {values['l']}: in every published group no sensitive value accounts for more "
                f"than 1/ℓ = {1 / values['l']:.3g} of the group's records, so a person linked to their group is "
                f"guessed right with probability at most 1/ℓ (Xiao & Tao 2006).")

    def guarantee(self, data: Dataset, values: Mapping[str, Any], release: Release) -> G.Verdict:
        """The largest share of one value in each group, from the published ST."""
        st = release.tables["st"]
        gid = np.asarray(st.columns["gid"])
        cnt = np.asarray(st.columns["count"])
        n_groups = int(gid.max(initial=-1)) + 1
        if np.all(cnt == 1):  # one ST row per (group, value) with count 1 (as Anatomy writes it): no float copies
            size = np.bincount(gid, minlength=n_groups).astype(float)
            top = (size > 0).astype(float)
        else:
            cnt = cnt.astype(float)
            size = np.bincount(gid, weights=cnt, minlength=n_groups)
            top = np.zeros(n_groups)
            np.maximum.at(top, gid, cnt)
        share = np.divide(top, size, out=np.zeros(n_groups), where=size > 0)
        limit = 1.0 / int(values["l"])
        bad = share > limit + 1e-12
        figures = {"groups": n_groups, "largest_share": float(share.max(initial=0.0)), "limit": limit,
                   "smallest_group": int(size.min()) if n_groups else 0}
        fail = (G.failure(f"largest share of one value ≤ 1/ℓ = {limit:.3g}", float(share.max()), limit,
                          int(bad.sum()), n_groups, f"groups ({int(size[bad].sum()):,} records)")
                if bad.any() else None)
        return G.judge(self.name, self.promise(values), figures, [fail])

    def estimate_many(self, release: Release, batches, rng: np.random.Generator) -> list[np.ndarray]:
        """The estimator for a whole workload: every attribute subset's index first, larger subsets first."""
        self._records(release).prepare(batches)
        return [self.estimate(release, b, rng) for b in batches]

    def estimate(self, release: Release, batch: QueryBatch, rng: np.random.Generator) -> np.ndarray:
        """``sum_g c(g, C) c(g, x) / |g|`` from the published QIT and ST."""
        return select(self._records(release).counts(batch), batch.sa)

    def estimate_grid(self, release: Release, conditions: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        return grid_select(grid_counts(self._records(release), conditions))  # each condition counted once

    def _records(self, release: Release) -> Records:
        """The release's weighted cells (:meth:`core.counting.Records.from_groups`), cached on the release."""
        cache = release.state.setdefault("_records", {})
        if "anatomy" not in cache:
            qit, st = release.tables["qit"], release.tables["st"]
            qi = release.source["qi"]
            sa = release.source["sensitive"]
            rows, count = rows_of(qit)  # a Dask QIT: its distinct rows, weighted by their counts
            cache["anatomy"] = Records.from_groups(
                [rows[c] for c in qi], [len(qit.labels[c]) for c in qi], rows["gid"],
                st.columns["gid"], st.columns[sa], st.columns["count"], len(st.labels[sa]), record_weights=count,
                groups=cache.get(SHARED_GROUPS))
        return cache["anatomy"]


MECHANISMS = [Anatomy()]
