"""Uniform perturbation (UP): retention p, or (rho1, rho2)-privacy -> gamma -> p.

Each record keeps its SA value with probability p; otherwise the value is
replaced by one drawn uniformly from the whole SA domain (possibly the same
value).  QI values are never changed.  This is k-ary randomized response
with epsilon_LDP = ln(gamma).

References
----------
seed 002 (Chaytor & Wang), eqs. (4), (6), (7); seed 001 Lemma 1;
MECHANISMS.md section 0.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..bounds.retention import gamma_from_rho, retention_from_gamma
from ..counting import QueryBatch
from ..errors import ParameterError
from ..params import Param
from ..release import Published, Release
from ..table import Dataset
from .base import Mechanism, observed, qi_table, shuffled

RHO1 = Param("rho1", "ρ₁", "Prior belief bound: values believed with at most this probability beforehand are protected.",
             1 / 13, low=0, high=1, closed="neither", step=0.005, safer="higher", paper="seed 002 §6.2: 1/13")
RHO2 = Param("rho2", "ρ₂", "Posterior belief bound: after seeing the release, the adversary's belief stays below this.",
             1 / 6, low=0, high=1, closed="neither", step=0.005, safer="lower", paper="seed 002 §6.2: 1/6 (L = 6)")


def check_rho(values: Mapping[str, Any], owner: str) -> None:
    if values["rho1"] >= values["rho2"]:
        raise ParameterError(
            f"{owner} needs rho1 < rho2 (a posterior bound above the prior); got rho1 = {values['rho1']:.4g} "
            f"and rho2 = {values['rho2']:.4g}."
        )


def up_parameters(p: float, m: int) -> dict[str, float]:
    """gamma, the transition entries and p for retention ``p`` over ``m`` values (seed 002 eq. 4)."""
    q = (1 - p) / m
    return {"p": p, "m": m, "gamma": (p + q) / q if q > 0 else float("inf"),
            "diagonal": p + q, "off_diagonal": q}


def perturb(sa: np.ndarray, p: float, m: int, rng: np.random.Generator) -> np.ndarray:
    """Keep each value with probability p, else draw uniformly from 0..m-1 (vectorised)."""
    keep = rng.random(len(sa)) < p
    return np.where(keep, sa, rng.integers(0, m, size=len(sa))).astype(sa.dtype)


def mle(observed_count: np.ndarray, set_size: np.ndarray, selected: np.ndarray, p: float, m: int) -> np.ndarray:
    """Unbiased estimate of the true count of the selected values in a set of records.

    ``F'_x = (O_x/|S| - (1-p)/m) / p`` per value (seed 001 Lemma 1, seed 002
    eq. 7), times |S|, summed over the ``selected`` values.  May be negative;
    callers report it as is.
    """
    return (observed_count - selected * set_size * (1 - p) / m) / p


class Uniform(Mechanism):
    name = "uniform"
    title = "Uniform perturbation (UP)"
    paper = "seeds 001 and 002 (retention replacement, Agrawal et al.)"
    summary = ("Every record keeps its sensitive value with probability p and otherwise gets a value drawn "
               "uniformly from the whole domain. Counts are reconstructed with an unbiased estimator. "
               "Set p directly, or let (ρ₁, ρ₂)-privacy fix the largest p allowed.")
    order = 10
    params = (
        Param("p", "p", "Retention: chance a record keeps its true value. Empty = the largest p that (ρ₁, ρ₂)-privacy allows.",
              None, low=0, high=1, closed="right", optional=True, step=0.01, safer="lower",
              paper="derived from ρ₁, ρ₂ (seed 002 eq. 4, 6)"),
        RHO1,
        RHO2,
    )
    main_param = "p"
    sweep = (0.1, 0.2, 0.3, 0.46, 0.6, 0.8)
    bounds = ("retention",)

    def check_params(self, values: dict[str, Any]) -> None:
        if values["p"] is None:
            check_rho(values, self.name)

    def derived(self, data: Dataset, values: Mapping[str, Any]) -> dict[str, Any]:
        m = data.m
        if values["p"] is None:
            gamma = gamma_from_rho(values["rho1"], values["rho2"])
            p = retention_from_gamma(gamma, m)
        else:
            p = values["p"]
        out = up_parameters(p, m)
        # the smallest rho2 this p guarantees for the given rho1 (seed 002 eq. 6 solved for rho2)
        g, r1 = out["gamma"], values["rho1"]
        out["rho2_guaranteed"] = g * r1 / (1 - r1 + g * r1) if np.isfinite(g) else 1.0
        return out

    def sanitize(self, data: Dataset, values: Mapping[str, Any], rng: np.random.Generator) -> Published:
        d = self.derived(data, values)
        p, m = d["p"], data.m
        sa = perturb(data.sa_codes, p, m, rng)
        order = shuffled(rng, data.n)
        kept = float(np.mean(sa == data.sa_codes))
        return Published(
            tables={"release": qi_table(data, order, sa)},
            published={"p": p, "m": m, "gamma": d["gamma"], "domain": [str(v) for v in data.sa_labels]},
            privacy={"gamma": d["gamma"], "rho1": values["rho1"], "rho2_guaranteed": d["rho2_guaranteed"],
                     "share_unchanged": kept},
            state={"p": p, "m": m},
        )

    def estimate(self, release: Release, batch: QueryBatch, rng: np.random.Generator) -> np.ndarray:
        o, size = observed(release, batch)
        return mle(o, size, batch.sa.sum(axis=1), release.state["p"], release.state["m"])


MECHANISMS = [Uniform()]
