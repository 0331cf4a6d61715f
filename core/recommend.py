"""The parameter recommender: settings that meet a steward's stated targets with the best utility.

A steward states targets such as

* small counts: at least 60% chance of a 30% error (``small_privacy = 0.6``);
* large counts: mean relative error below 10% for queries of at least 1%
  selectivity (``large_error = 0.1``, ``large_selectivity = 0.01``);
* inference: lift over guessing the global mode below 1.5x (``max_lift = 1.5``);
* the risk scale (issue 22): added risk at most R, read at the upper end of
  its 95% interval (``max_risk = 0.1``; :func:`core.risk.assess`), so a
  setting is put forward only when the measurement rules out more than R.

For every mechanism the recommender measures each setting of its main
parameter's grid (:func:`core.risk.sweep_points`; an exhaustive search over
the grid, so nothing is missed between two tried values that the grid
holds), keeps the settings that meet every target, and returns the one with
the lowest large-count error.  When none meets them all, it returns the
nearest miss (the smallest largest relative shortfall) and names the target
that binds.

Where an exact analytical value exists it is used and labelled
``analytical (exact)``: the small-count privacy of SPLU-Gen (the binomial
sawtooth T_p of seed 000 Lemma 2, for counts 1..10) and of the Laplace
mechanism (``P(|Lap(1/eps)| >= 0.3 f) = exp(-0.3 f eps)``, smallest over
f = 1..10).  Everything else is ``empirical`` (measured on this table's
release with the stated seed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .params import Param, format_value
from .risk import Point, SMALL_SUM_TOLERANCE, Targets, sweep_points
from .table import Dataset
from .workload import Workload

ALPHA = 10  # small counts are 1..ALPHA (seed 000)

#: the explorer's settings, declared once for the Trade-offs page, its link and the CLI
SETTINGS = (
    Param("queries", "Q", "Size of the seed 000 workload measuring utility and small-sum disclosure.", 2000,
          kind="int", low=100, high=20_000, paper="seed 000 §6.1: pools of 5,000"),
    Param("records", "R", "Records sampled for the inference attack (the same sample for every setting).", 2000,
          kind="int", low=100, high=20_000),
    Param("small_privacy", "P_small", "Target: at least this chance that a small count (1-10) is off by 30% or "
          "more. Empty = no target.", 0.6, low=0, high=1, optional=True, step=0.05, safer="higher",
          paper="issue example: 60%"),
    Param("large_error", "E_large", "Target: mean relative error of large counts at most this (0.1 = 10%). "
          "Empty = no target.", 0.10, low=0, high=10, closed="right", optional=True, step=0.01, safer="higher",
          paper="issue example: 10%",
          # errors span three decades: steps that a linear 0.01-10 slider cannot hit
          presets=(0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0, 10.0)),
    Param("selectivity", "s", "Large counts are queries answering at least this share of the table.", 0.01,
          low=0.005, high=0.05, step=0.005, paper="issue example: 1%"),
    Param("max_lift", "L_max", "Target: the adversary's accuracy at most this many times that of always guessing "
          "the most common value. Empty = no target.", 1.5, low=0.5, high=10, optional=True, step=0.1,
          safer="lower", paper="issue example: 1.5x"),
    Param("max_risk", "R", "Target: the added risk (what the release teaches about people in the table beyond "
          "people not in it, 0-1) at most this, at the upper end of its 95% interval. Empty = no target.", 0.10,
          low=0, high=1, optional=True, step=0.01, safer="lower", paper="issue 22: added risk at most R"),
)


OWNER = "the recommender"
#: Goals field -> the declared setting whose range it must respect
_GOAL_SETTINGS = {"small_privacy": "small_privacy", "large_error": "large_error",
                  "large_selectivity": "selectivity", "max_lift": "max_lift", "max_risk": "max_risk"}


@dataclass(frozen=True)
class Goals:
    """A steward's targets; each is checked against its declared range in :data:`SETTINGS` (None = no target).

    >>> Goals(small_privacy=2)
    Traceback (most recent call last):
    ...
    core.errors.ParameterError: The 'small_privacy' parameter of the recommender must be a number in [0, 1]. Got 2.0.
    """

    small_privacy: float | None = 0.6  # min share of small counts off by >= 30%
    large_error: float | None = 0.10  # max mean relative error of large counts
    large_selectivity: float = 0.01  # ... counting queries of at least this selectivity
    max_lift: float | None = 1.5  # max inference lift over the global mode
    max_risk: float | None = None  # max added risk (upper end of its 95% interval), core.risk.assess

    def __post_init__(self):
        declared = {p.name: p for p in SETTINGS}
        for attr, name in _GOAL_SETTINGS.items():
            value = getattr(self, attr)
            if value is None and declared[name].optional:
                continue
            # the declared Param is optional ("empty = no target"); a value given must lie in its range
            checked = replace(declared[name], optional=False).validate(value, OWNER)
            object.__setattr__(self, attr, checked)

    @classmethod
    def from_settings(cls, values: Mapping[str, Any]) -> "Goals":
        return cls(small_privacy=values.get("small_privacy"), large_error=values.get("large_error"),
                   large_selectivity=values.get("selectivity", 0.01), max_lift=values.get("max_lift"),
                   max_risk=values.get("max_risk"))

    def describe(self) -> list[str]:
        out = []
        if self.small_privacy is not None:
            out.append(f"small counts (1-{ALPHA}): at least {self.small_privacy:.0%} chance of a "
                       f"{SMALL_SUM_TOLERANCE:.0%} error")
        if self.large_error is not None:
            out.append(f"large counts (>= {self.large_selectivity:.1%} selectivity): mean error below "
                       f"{self.large_error:.0%}".replace(".0%", "%"))
        if self.max_lift is not None:
            out.append(f"inference lift below {self.max_lift:g}x")
        if self.max_risk is not None:
            out.append(f"added risk at most {self.max_risk:g} (upper end of its 95% interval)")
        return out


@dataclass(frozen=True)
class Check:
    target: str
    value: float | None
    limit: float
    ok: bool
    shortfall: float  # relative distance to the limit (0 when met)
    source: str  # "analytical (exact)" or "empirical"


@dataclass(frozen=True)
class Recommendation:
    mechanism: str
    point: Point | None
    checks: list[Check] = field(default_factory=list)
    meets: bool = False
    binding: str | None = None  # the target that fails (nearest miss) or is closest to failing
    tried: int = 0
    skipped: list[str] = field(default_factory=list)
    #: what the targets do not capture about this setting (e.g. a budget spent per answer), or None
    caveat: str | None = None

    def to_json(self) -> dict[str, Any]:
        from .release import jsonable

        return jsonable({
            "mechanism": self.mechanism,
            "meets_targets": self.meets,
            "caveat": self.caveat,
            "params": dict(self.point.params) if self.point else None,
            "binding_target": self.binding,
            "checks": [c.__dict__ for c in self.checks],
            "point": self.point.to_json() if self.point else None,
            "settings_tried": self.tried,
            "not_eligible": self.skipped,
        })


def analytical_small_privacy(point: Point, data: Dataset) -> float | None:
    """Exact min over f = 1..10 of P(relative error > 30%) where a closed form exists, else None."""
    params = point.params
    f = np.arange(1, ALPHA + 1)
    if point.mechanism == "splu":
        from .mechanisms.splu import privacy_tail

        gamma = int(params["gamma"])
        p = params.get("p") or 1.0 / gamma
        return float(np.min(privacy_tail(f, gamma, p, SMALL_SUM_TOLERANCE)))
    if point.mechanism == "laplace":
        eps = float(params["epsilon"])
        # P(|Lap(1/eps)| > 0.3 f) = exp(-0.3 f eps), smallest at the largest small count
        return float(np.min(np.exp(-SMALL_SUM_TOLERANCE * f * eps)))
    return None


def large_error_at(point: Point, selectivity: float) -> float | None:
    """Mean relative error over the selectivity bands starting at or above ``selectivity``."""
    total, count = 0.0, 0
    for b in point.bands:
        if b["unit"] == "selectivity" and b["lo"] >= selectivity - 1e-12 and b["mean_relative_error"] is not None:
            total += b["mean_relative_error"] * b["queries"]
            count += b["queries"]
    return total / count if count else None


def check(point: Point, goals: Goals, data: Dataset) -> list[Check]:
    out = []
    if goals.small_privacy is not None:
        exact = analytical_small_privacy(point, data)
        value = exact if exact is not None else (
            None if point.small_sum_disclosure is None else 1.0 - point.small_sum_disclosure)
        out.append(_check("small counts", value, goals.small_privacy, higher=True,
                          source="analytical (exact)" if exact is not None else "empirical"))
    if goals.large_error is not None:
        out.append(_check("large counts", large_error_at(point, goals.large_selectivity), goals.large_error,
                          higher=False, source="empirical"))
    if goals.max_lift is not None:
        out.append(_check("inference lift", point.inference_lift, goals.max_lift, higher=False,
                          source="empirical"))
    if goals.max_risk is not None:
        # a point measured without the risk scale (its measurement release could not be made) has no value: missed
        out.append(_check("added risk", point.risk_high, goals.max_risk, higher=False,
                          source="empirical (95% upper end)"))
    return out


def _check(target: str, value: float | None, limit: float, higher: bool, source: str) -> Check:
    if value is None or not math.isfinite(value):
        return Check(target, value, limit, False, math.inf, source)
    ok = value >= limit if higher else value <= limit
    if ok:
        gap = 0.0
    elif higher:
        gap = (limit - value) / max(limit, 1e-12)
    else:
        gap = (value - limit) / max(limit, 1e-12)
    return Check(target, value, limit, ok, gap, source)


def per_answer_budget(mechanism: str, params: Mapping[str, Any] | None = None) -> str | None:
    """The caveat of a mechanism that answers queries one by one (``publishes == "answers"``), else None.

    Its privacy parameter (Laplace's ε) is the budget of *each* answer: k
    answers about the same people spend up to k times it (sequential
    composition), while the map and the targets measure one answer at a
    time.  Said wherever such a setting is put forward.
    """
    from . import mechanisms

    mech = mechanisms.get(mechanism)
    if mech.publishes != "answers":
        return None
    sym = mech.param(mech.main_param).symbol if mech.main_param else "the budget"
    value = (params or {}).get(mech.main_param) if mech.main_param else None
    at = f"{sym} = {format_value(value)}" if value is not None else sym
    return (f"{at} is per answer: k answers about the same people spend up to k·{sym} (sequential "
            "composition); the map and the targets measure each answer on its own.")


def choose(points: Sequence[Point], goals: Goals, data: Dataset, mechanism: str,
           skipped: Sequence[str] = ()) -> Recommendation:
    """The best point of one mechanism for ``goals`` (or its nearest miss)."""
    mine = [p for p in points if p.mechanism == mechanism]
    if not mine:
        return Recommendation(mechanism, None, tried=0, skipped=list(skipped))
    scored = [(p, check(p, goals, data)) for p in mine]
    good = [(p, c) for p, c in scored if all(x.ok for x in c)]
    if good:
        p, c = min(good, key=lambda pc: (pc[0].large_error if pc[0].large_error is not None else math.inf))
        # closest to failing: the smallest margin among the met targets
        margins = [(abs((x.value or 0) - x.limit) / max(abs(x.limit), 1e-12), x.target) for x in c]
        return Recommendation(mechanism, p, c, True, min(margins)[1] if margins else None, len(mine), list(skipped),
                              per_answer_budget(mechanism, p.params))
    p, c = min(scored, key=lambda pc: (max(x.shortfall for x in pc[1]),
                                       pc[0].large_error if pc[0].large_error is not None else math.inf))
    binding = max(c, key=lambda x: x.shortfall).target
    return Recommendation(mechanism, p, c, False, binding, len(mine), list(skipped),
                          per_answer_budget(mechanism, p.params))


def recommend(data: Dataset, names: Sequence[str], goals: Goals, workload: Workload, targets: Targets,
              seed: int = 0, sweeps: Mapping[str, Sequence[Any]] | None = None,
              points: Sequence[Point] | None = None,
              progress: Callable[[float, str], None] | None = None) -> list[Recommendation]:
    """One recommendation per mechanism, best first (those meeting every target before the misses)."""
    skipped: list[str] = []
    if points is None:
        points, skipped = sweep_points(data, names, workload, targets, seed, sweeps=sweeps, progress=progress)
    recs = [choose(points, goals, data, n, [s for s in skipped if s.startswith(_title(n))]) for n in names]
    recs = [r for r in recs if r.point is not None] + [r for r in recs if r.point is None]
    return sorted(recs, key=lambda r: (not r.meets, r.point is None,
                                       (r.point.large_error if r.point and r.point.large_error is not None
                                        else math.inf)))


def _title(name: str) -> str:
    from . import mechanisms

    return mechanisms.get(name).title
