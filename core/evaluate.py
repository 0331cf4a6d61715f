"""Empirical query error: run a workload against a release, summarise by band.

Metric (seed 000 §6.1, seed 002 §6.1): relative error ``|a - a'| / a`` per
query with true answer ``a > 0``; the mean per band.  Estimates are used as
the estimators return them (possibly negative for unbiased reconstruction,
MECHANISMS.md section 0); clipping is for display only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import mechanisms
from .release import Release, jsonable
from .table import Dataset
from .workload import Workload
from .workloads import WORKLOADS, WorkloadKind, make_workload  # noqa: F401 (re-exported)


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Estimates of every query of a workload from one release."""

    mechanism: str
    params: Mapping[str, Any]
    seed: int
    workload: Workload
    estimates: np.ndarray

    @property
    def true(self) -> np.ndarray:
        return self.workload.true

    @property
    def relative_error(self) -> np.ndarray:
        """``|a - a'| / a`` per query; NaN where the true answer is 0."""
        true = self.true
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(true > 0, np.abs(true - self.estimates) / np.where(true > 0, true, 1), np.nan)

    def bands(self) -> list[dict[str, Any]]:
        """Mean relative error per band (the CLI's ``bands``).

        Each band carries ``queries`` (those with a true answer above 0) and
        ``thin``: fewer than :data:`core.workload.THIN_QUERIES` (30)
        queries, too few for its mean to be trusted.
        """
        from .workload import THIN_QUERIES

        err = self.relative_error
        out = []
        for band, member in zip(self.workload.bands, self.workload.membership):
            sel = member & np.isfinite(err)
            out.append({
                "name": band.name,
                "unit": band.unit,
                "lo": band.lo,
                "hi": band.hi,
                "queries": int(sel.sum()),
                "thin": bool(sel.sum() < THIN_QUERIES),
                "mean_relative_error": float(err[sel].mean()) if sel.any() else None,
            })
        return out

    def mse(self) -> float:
        return float(np.mean((self.estimates - self.true) ** 2)) if len(self.true) else float("nan")

    def to_json(self) -> dict[str, Any]:
        return jsonable({
            "mechanism": self.mechanism,
            "params": dict(self.params),
            "seed": self.seed,
            "workload": {"kind": self.workload.kind, **self.workload.settings, "queries_total": len(self.workload)},
            "bands": self.bands(),
        })


def evaluate_release(release: Release, workload: Workload) -> Evaluation:
    est = mechanisms.estimate(release, workload)
    return Evaluation(release.mechanism, dict(release.params), release.seed, workload, est)


def evaluate(data: Dataset, mechanism: str, raw: Mapping[str, Any] | None, workload: Workload,
             seed: int | None = None) -> Evaluation:
    """Sanitize ``data`` with ``mechanism`` and estimate every query of ``workload``."""
    release = mechanisms.sanitize(data, mechanism, raw, seed)
    return evaluate_release(release, workload)


def sweep(data: Dataset, mechanism: str, param: str, values: Sequence[Any], workload: Workload,
          base: Mapping[str, Any] | None = None, seed: int = 0,
          progress: Callable[[float], None] | None = None) -> list[Evaluation | str]:
    """Evaluate ``mechanism`` at each value of ``param``; an ineligible setting gives its message instead."""
    from .errors import WorkbenchError

    out: list[Evaluation | str] = []
    for i, value in enumerate(values):
        raw = {**(base or {}), param: value}
        try:
            out.append(evaluate(data, mechanism, raw, workload, seed))
        except WorkbenchError as exc:
            out.append(str(exc))
        if progress:
            progress((i + 1) / len(values))
    return out
