"""DBR: distribution-based randomization (the baseline of seed 000 §6.2.3.3).

Every record's SA value is replaced by a value drawn independently from the
table's SA distribution.  The marginal distribution survives; the link
between QI and SA does not.  The estimate of a count is the published count
(seed 000: "the maximum likelihood estimations ... are the corresponding
counts in the published data").

Guarantee (:meth:`DBR.guarantee`; the paper states none, this is what DBR
gives): independence.  Every published value is drawn from the published
distribution independently of the record, so the release tells nothing
about which record holds which value beyond that distribution: an
adversary's belief about any record's value is the value's share of the
table (at most the largest share).  Checked on the release: the share of
records whose published value equals their true value must be what
independence gives (``sum_x f_x^2``), within 4 binomial standard errors.
What it does not hide: the published distribution gives every value's
count exactly (share times N), small counts included.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .. import guarantee as G
from ..counting import QueryBatch
from .. import rng as _rng
from ..engine.combos import Combos
from ..engine.protocol import Chunk, Plan
from ..release import Release
from ..table import Dataset
from .base import Mechanism, grid_counts, grid_select, observed, published_records


class DBRPlan(Plan):
    """DBR's plan: the SA counts' cumulative sums; no ranks.

    Record i draws ``x = floor(u n)`` (``u`` the first word of its block of
    purpose ``"dbr"``, :mod:`core.rng`) and publishes the value v with
    ``cum[v-1] <= x < cum[v]``: value v with probability ``count(v) / n``
    exactly (up to ``2**-53``), in integers.  ``privacy.share_unchanged`` is
    tallied over the records.
    """

    def __init__(self, seed: int, sa: str, cum: np.ndarray, n: int, **fields):
        super().__init__(seed=seed, **fields)
        self.sa, self.cum, self.n = sa, cum, int(n)

    def apply(self, chunk: Chunk) -> dict[str, np.ndarray]:
        u = _rng.uniforms(self.seed, "dbr", chunk.start, len(chunk))
        x = np.minimum(np.floor(u * self.n).astype(np.int64), self.n - 1)
        return {self.sa: np.searchsorted(self.cum, x, side="right").astype(chunk.sa.dtype)}

    def tally(self, chunk: Chunk, out) -> dict[str, int]:
        return {"unchanged": int(np.count_nonzero(out[self.sa] == chunk.sa))}

    def finish(self, totals) -> dict[str, Any]:
        return {"share_unchanged": totals.get("unchanged", 0) / self.n if self.n else 0.0}


class DBR(Mechanism):
    name = "dbr"
    title = "Distribution-based randomization (DBR)"
    paper = "baseline in seed 000 §6.2.3.3"
    summary = ("Every record gets a sensitive value drawn at random from the table's overall distribution of "
               "sensitive values. Totals per value stay about right; any link between a person's other "
               "attributes and their sensitive value is lost.")
    order = 70

    planned = True

    def plan(self, summary: Combos, values: Mapping[str, Any], seed: int) -> "DBRPlan":
        """Each record's value drawn from the table's SA distribution (:class:`DBRPlan`)."""
        counts = summary.sa_counts
        n = summary.n
        return DBRPlan(seed, summary.sa_name, np.cumsum(counts).astype(np.int64), n,
                       labels={summary.sa_name: summary.sa_labels},
                       published={"distribution": {str(v): float(c / n) for v, c in zip(summary.sa_labels, counts)}})

    def estimate(self, release: Release, batch: QueryBatch, rng: np.random.Generator) -> np.ndarray:
        return observed(release, batch)[0]

    def estimate_grid(self, release: Release, conditions: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        return grid_select(grid_counts(published_records(release), conditions))  # each condition counted once

    #: standard errors beyond which the share of unchanged values contradicts independence
    Z_LIMIT = 4.0

    def promise(self, values: Mapping[str, Any]) -> str:
        return ("Independence: every published value is drawn from the table's distribution regardless of the "
                "record, so an adversary's belief about any record's value is that value's share of the table "
                "(seed 000 §6.2.3.3).")

    def guarantee(self, data: Dataset, values: Mapping[str, Any], release: Release) -> G.Verdict:
        """Unchanged values at the rate independence gives (module docstring)."""
        shares = np.array(list(release.published["distribution"].values()), dtype=float)
        expected = float(np.sum(shares ** 2))
        got = float(release.privacy["share_unchanged"])
        se = float(np.sqrt(expected * (1 - expected) / max(data.n, 1)))
        z = (got - expected) / se if se > 0 else 0.0
        figures = {"largest_posterior": float(shares.max(initial=0.0)), "share_unchanged": got,
                   "share_unchanged_if_independent": expected, "z": z}
        fail = None
        if z > self.Z_LIMIT:
            fail = G.failure(f"values unchanged at the independent rate {expected:.4g} (± {self.Z_LIMIT:g} "
                             f"standard errors)", got, expected + self.Z_LIMIT * se, data.n, data.n, "records")
        return G.judge(self.name, self.promise(values), figures, [fail],
                       notes=("The published distribution gives every value's count exactly (share × N), "
                              "small counts included.",))


MECHANISMS = [DBR()]
