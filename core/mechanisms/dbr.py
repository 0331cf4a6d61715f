"""DBR: distribution-based randomization (the baseline of seed 000 §6.2.3.3).

Every record's SA value is replaced by a value drawn independently from the
table's SA distribution.  The marginal distribution survives; the link
between QI and SA does not.  The estimate of a count is the published count
(seed 000: "the maximum likelihood estimations ... are the corresponding
counts in the published data").
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..counting import QueryBatch
from ..release import Published, Release
from ..table import Dataset
from .base import Mechanism, observed, qi_table, shuffled


class DBR(Mechanism):
    name = "dbr"
    title = "Distribution-based randomization (DBR)"
    paper = "baseline in seed 000 §6.2.3.3"
    summary = ("Every record gets a sensitive value drawn at random from the table's overall distribution of "
               "sensitive values. Totals per value stay about right; any link between a person's other "
               "attributes and their sensitive value is lost.")
    order = 70

    def sanitize(self, data: Dataset, values: Mapping[str, Any], rng: np.random.Generator) -> Published:
        probs = data.sa_counts / data.n
        sa = rng.choice(data.m, size=data.n, p=probs).astype(data.sa_codes.dtype)
        order = shuffled(rng, data.n)
        return Published(
            tables={"release": qi_table(data, order, sa)},
            published={"distribution": {str(v): float(p) for v, p in zip(data.sa_labels, probs)}},
            privacy={"share_unchanged": float(np.mean(sa == data.sa_codes))},
        )

    def estimate(self, release: Release, batch: QueryBatch, rng: np.random.Generator) -> np.ndarray:
        return observed(release, batch)[0]


MECHANISMS = [DBR()]
