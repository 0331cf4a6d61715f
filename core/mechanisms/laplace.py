"""Laplace mechanism: epsilon-differentially private answers to count queries.

The curator keeps the table and answers each count query with
``true count + Lap(Delta f / epsilon)``, Delta f = 1 (seed 000 §6.2.3.1,
seed 003 Part 1).  Each answer is epsilon-DP on its own; k answers about the
same people compose to k * epsilon (we report per-answer epsilon, as the
papers do).  ``sanitize`` publishes the noisy histogram of the SA (itself
epsilon-DP, sensitivity 1); queries are answered with fresh noise.

Guarantee (:meth:`Laplace.guarantee`): epsilon-differential privacy per
answer, checked on the release: the published noise scale must be at least
``Delta f / epsilon``.  Not guaranteed, and said beside the verdict: k
answers about the same records compose to k epsilon, and small counts come
out with small absolute error (seed 000 §6.2.3.1: DP may violate small-sum
privacy).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from .. import guarantee as G
from ..counting import QueryBatch, select
from ..params import Param
from .. import rng as _rng
from ..engine.combos import Combos
from ..engine.protocol import Plan
from ..release import CodedTable, Release
from ..table import Dataset
from .base import Mechanism, grid_counts, grid_select


def laplace_noise(seed: int, purpose: str, start: int, n: int, scale: float) -> np.ndarray:
    """Laplace(0, ``scale``) draws for counters ``start .. start + n - 1`` of ``purpose`` (inverse CDF).

    ``u`` in (0, 1) from :func:`core.rng.uniforms` (shifted by half a step,
    so it is never 0); noise ``= -scale sign(u - 1/2) ln(1 - 2 |u - 1/2|)``.
    """
    u = _rng.uniforms(seed, purpose, start, n) + 2.0 ** -54
    c = u - 0.5
    return -scale * np.sign(c) * np.log1p(-2.0 * np.abs(c))


class Laplace(Mechanism):
    name = "laplace"
    title = "Laplace noise (ε-differential privacy)"
    paper = "baseline in seeds 000, 001, 003 (Dwork et al.)"
    summary = ("The data stay with the curator, who answers each count query with its true value plus random "
               "Laplace noise of scale 1/ε. Smaller ε means more noise and more privacy; the noise does not "
               "grow with the count, so large counts come out almost exact and so do ratios of them.")
    order = 80
    params = (
        Param("epsilon", "ε", "Privacy budget per answer: noise scale is 1/ε, so smaller ε means noisier answers.",
              math.log(3), low=0, high=10, closed="right", step=0.01, safer="lower",
              paper="seed 000 §6.2.3.1: ε in {0.01, 0.1, ln 2, ln 3}",
              presets=(0.01, 0.1, math.log(2), math.log(3), 1.0, 2.0)),
    )
    main_param = "epsilon"
    sweep = (0.01, 0.1, math.log(2), math.log(3), 2.0)
    publishes = "answers"
    record_table = None  # noisy answers only
    #: seed 003 Theorem 2: the ratio of two Laplace answers still reveals y/x
    bounds = ("differential-inference",)

    planned = True

    def plan(self, summary: Combos, values: Mapping[str, Any], seed: int) -> Plan:
        """The release of an interactive mechanism is answers: the plan holds all of it, ``apply`` publishes nothing.

        Laplace publishes no record, so its plan has no per-record table
        (``table = None``): the noisy SA histogram is a static table drawn
        at group level (value v's noise from the first word of counter v of
        purpose ``"laplace"``, by the inverse CDF), and the curator's
        state is the table's weighted :class:`core.engine.combos.Combos`
        records, which answer every count query exactly as the table would.
        Answers to queries get fresh noise at query time
        (:func:`core.mechanisms.estimate`'s generator: answers, not the release).
        """
        eps = values["epsilon"]
        m = summary.m
        hist = CodedTable(columns={summary.sa_name: np.arange(m),
                                   "noisy_count": summary.sa_counts + laplace_noise(seed, "laplace", 0, m, 1.0 / eps)},
                          labels={summary.sa_name: summary.sa_labels, "noisy_count": None})
        return Plan(
            seed=seed, table=None, tables={"histogram": hist},
            published={"epsilon": eps, "noise_scale": 1.0 / eps, "sensitivity": 1},
            privacy={"epsilon_per_answer": eps,
                     "note": "each answer is ε-DP; k answers about the same records compose to k·ε"},
            # interactive: the curator keeps the data (as counts) to answer queries
            state={"records": summary.records(), "epsilon": eps},
            rows_out=m,
        )

    def promise(self, values: Mapping[str, Any]) -> str:
        return (f"ε-differential privacy per answer with ε = {values['epsilon']:.4g}: each count gets Laplace noise "
                f"of scale Δf/ε = {1 / values['epsilon']:.4g} (Δf = 1), so adding or removing one person changes "
                f"the chance of any answer by at most a factor e^ε (Dwork et al.).")

    def guarantee(self, data: Dataset, values: Mapping[str, Any], release: Release) -> G.Verdict:
        """The published noise scale against Δf/ε."""
        pub = release.published
        eps, scale, sens = float(values["epsilon"]), float(pub["noise_scale"]), float(pub["sensitivity"])
        effective = sens / scale if scale > 0 else float("inf")
        figures = {"epsilon": eps, "noise_scale": scale, "sensitivity": sens, "epsilon_effective": effective}
        fail = (G.failure(f"noise scale ≥ Δf/ε = {sens / eps:.4g}", effective, eps, 1, 1, "answers' noise scale")
                if effective > eps * (1 + 1e-9) else None)
        return G.judge(self.name, self.promise(values), figures, [fail],
                       notes=(f"Per answer: k answers about the same records compose to k·ε (k = 10 gives "
                              f"{10 * eps:.3g}).",))

    def estimate(self, release: Release, batch: QueryBatch, rng: np.random.Generator) -> np.ndarray:
        true = select(release.state["records"].counts(batch), batch.sa)
        return true + rng.laplace(0.0, 1.0 / release.state["epsilon"], size=len(true))

    def estimate_grid(self, release: Release, conditions: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        """Each condition counted once; the noise drawn as for the grid's queries in their order (row by row)."""
        true = grid_select(grid_counts(release.state["records"], conditions))
        return true + rng.laplace(0.0, 1.0 / release.state["epsilon"], size=true.size).reshape(true.shape)


MECHANISMS = [Laplace()]
