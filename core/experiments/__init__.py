"""Registry of paper-figure experiments (error against a parameter, retention tables ...).

An :class:`Experiment` reproduces one of the papers' figures or tables on
the loaded table: it declares its settings as :class:`core.params.Param`
and ``run(data, settings, progress) -> ExperimentResult`` returns plotly
figures and tables with captions.  The Query error page (``page =
"query_error"``) or the Attacks page (``page = "attacks"``) lists them;
each module in this package exports ``EXPERIMENTS = [...]``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import pandas as pd

from .. import params as _params
from ..errors import ParameterError, clip
from ..registry import collect
from ..table import Dataset


@dataclass(frozen=True, eq=False)
class ExperimentResult:
    """Figures (title, plotly figure, caption), tables (title, frame, caption), notes and raw data."""

    figures: list[tuple[str, Any, str]] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    data: Mapping[str, Any] = field(default_factory=dict)


Progress = Callable[[float, str], None]


@dataclass(frozen=True, eq=False)
class Experiment:
    name: str
    title: str
    paper: str
    explain: str
    params: tuple[_params.Param, ...]
    run: Callable[[Dataset, dict[str, Any], Progress | None], ExperimentResult]
    page: str = "query_error"
    order: int = 100

    def resolve(self, raw: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return _params.resolve(self.params, raw, f"experiment {self.name}")

    def __call__(self, data: Dataset, raw: Mapping[str, Any] | None = None,
                 progress: Progress | None = None) -> ExperimentResult:
        return self.run(data, self.resolve(raw), progress)


EXPERIMENTS: dict[str, Experiment] = collect(sys.modules[__name__], "EXPERIMENTS")


def get(name: str) -> Experiment:
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise ParameterError(f"There is no experiment '{clip(name)}'; choose one of: {', '.join(EXPERIMENTS)}.") from None


def for_page(page: str) -> list[Experiment]:
    return [e for e in EXPERIMENTS.values() if e.page == page]
