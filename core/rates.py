"""A success rate and the added risk with anonymeter's 95% interval (issue 22).

Used by both attacks of the risk scale: attribute inference (:mod:`core.risk`)
and singling out (:mod:`core.singling_out`).  anonymeter's
``stats/confidence.py``: Wilson score rates (Wilson 1927), the residual risk
(attack - control) / (1 - control) with its error propagated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

_Z = 1.959963984540054  # the 97.5% normal quantile (scipy.stats.norm.ppf(0.975))


@dataclass(frozen=True)
class Rate:
    """A success rate as anonymeter states it: Wilson score centre and half-width at 95%.

    >>> r = Rate.of(1000, 276)
    >>> round(r.share, 3), round(r.value, 4), round(r.error, 4)
    (0.276, 0.2769, 0.0277)
    """

    n: int
    k: float  # successes (a sum of chances of success for the record-reading attacker)
    value: float  # Wilson centre
    error: float  # half-width

    @property
    def share(self) -> float:
        return self.k / self.n if self.n else float("nan")

    @classmethod
    def of(cls, n: int, k: int) -> "Rate":
        # anonymeter.stats.confidence.success_rate (Wilson 1927)
        z2 = _Z * _Z
        var = k * (n - k) / n if n else 0.0
        den = n + z2
        return cls(int(n), float(k), (k + 0.5 * z2) / den, (_Z / den) * math.sqrt(var + 0.25 * z2))


def residual(attack: Rate, control: Rate) -> tuple[float, float, float]:
    """``(risk, low, high)``: (attack - control) / (1 - control), error propagated, clipped to [0, 1].

    anonymeter's ``residual_success`` and ``bind_value`` (stats/confidence.py).
    """
    a, c = attack.value, control.value
    if c >= 1.0:
        return float("nan"), 0.0, 1.0
    value = (a - c) / (1.0 - c)
    err = math.hypot(attack.error / abs(1.0 - c), control.error * (a - 1.0) / (1.0 - c) ** 2)
    clip = lambda v: min(max(v, 0.0), 1.0)  # noqa: E731
    return clip(value), clip(value - err), clip(value + err)
