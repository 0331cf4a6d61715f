"""Analytical privacy and utility curves.

A :class:`Bound` declares its parameters (:class:`core.params.Param`) and a
``compute`` function returning a :class:`Curve`: one x axis and named
series (``exact``, ``chebyshev``, ``published`` ...).  The Bounds page draws
any curve from the declaration; ``python -m core bound NAME`` prints
``Curve.to_json()``.  Each family lives in its own module in this package
and exports ``BOUNDS = [...]``; :data:`BOUNDS` here collects them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from .. import params as _params
from ..errors import ParameterError, clip


@dataclass(frozen=True, eq=False)
class Curve:
    """An analytical curve: x values and one or more named y series.

    ``labels`` gives each series its display label (e.g. the paper's wrong
    formula is labelled "as published (incorrect)"), ``styles`` optional
    plotly line dashes / modes per series (``"dash"``, ``"markers"``,
    ``"step"``), ``hlines`` horizontal reference lines (e.g. delta), ``vlines``
    vertical markers (e.g. the chosen relative error),
    ``notes`` scalar read-outs shown beside the chart (e.g. ``T_p`` and the
    ``f`` that binds it).
    """

    name: str
    title: str
    x: np.ndarray
    x_label: str
    y_label: str
    series: Mapping[str, np.ndarray]
    caption: str
    labels: Mapping[str, str] = field(default_factory=dict)
    styles: Mapping[str, str] = field(default_factory=dict)
    hlines: Mapping[str, float] = field(default_factory=dict)
    vlines: Mapping[str, float] = field(default_factory=dict)
    notes: Mapping[str, Any] = field(default_factory=dict)
    log_x: bool = False
    log_y: bool = False

    def label(self, key: str) -> str:
        return self.labels.get(key, key)

    def to_json(self) -> dict[str, Any]:
        """The CLI contract: ``x`` and named ``series`` (plus labels and notes)."""
        return {
            "name": self.name,
            "title": self.title,
            "x_label": self.x_label,
            "y_label": self.y_label,
            "x": _jsonable(self.x),
            "series": {k: _jsonable(v) for k, v in self.series.items()},
            "labels": {k: self.label(k) for k in self.series},
            "hlines": {k: float(v) for k, v in self.hlines.items()},
            "vlines": {k: float(v) for k, v in self.vlines.items()},
            "notes": {k: _jsonable(v) for k, v in self.notes.items()},
            "caption": self.caption,
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return v if np.isfinite(v) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


@dataclass(frozen=True, eq=False)
class Bound:
    """A named analytical curve with declared parameters."""

    name: str
    title: str
    paper: str
    params: tuple[_params.Param, ...]
    compute: Callable[[dict[str, Any]], Curve]
    explain: str
    order: int = 100

    def resolve(self, raw: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return _params.resolve(self.params, raw, f"bound {self.name}")

    def curve(self, raw: Mapping[str, Any] | None = None) -> Curve:
        return self.compute(self.resolve(raw))

    def linked(self, params: Mapping[str, Any], data: Any = None) -> dict[str, Any]:
        """The parameters of this curve that a release fixes: what to draw for *this* release.

        ``params`` are a release's resolved parameters with its derived
        values (``Release.params``, e.g. SPLU's gamma and p); every curve
        parameter of the same name takes that value when it lies in the
        curve's range.  With the release's table (a :class:`core.table.Dataset`)
        a curve's ``m`` is the table's SA domain size and its ``counts`` the
        table's SA value counts.  Used by the Bounds page ("follow the
        release") and the review report, so both draw the guarantees of the
        settings actually chosen.
        """
        out: dict[str, Any] = {}
        names = {p.name: p for p in self.params}
        given = dict(params)
        if data is not None:
            given.setdefault("m", int(data.m))
            given.setdefault("counts", ",".join(str(int(c)) for c in data.sa_counts if c > 0))
        for name, value in given.items():
            p = names.get(name)
            if p is None or value is None:
                continue
            try:
                _params.resolve((p,), {name: value}, f"bound {self.name}")
            except (ParameterError, TypeError, ValueError):
                continue  # outside this curve's range (e.g. m beyond its axis): keep the curve's own value
            out[name] = value
        return out


def _load() -> dict[str, Bound]:
    import sys

    from ..registry import collect

    return collect(sys.modules[__name__], "BOUNDS")


BOUNDS: dict[str, Bound] = _load()


def get(name: str) -> Bound:
    try:
        return BOUNDS[name]
    except KeyError:
        raise ParameterError(
            f"There is no bound named '{clip(name)}'; choose one of: {', '.join(BOUNDS)}."
        ) from None


def compute(name: str, raw: Mapping[str, Any] | None = None) -> Curve:
    """Compute the curve ``name`` with parameters ``raw`` (typed or strings)."""
    return get(name).curve(raw)
