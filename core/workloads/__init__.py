"""Registry of query workload kinds (the papers' generators).

Each module in this package exports ``WORKLOADS = [WorkloadKind(...)]``.
A kind declares its settings as :class:`core.params.Param` (so pages build
inputs and the CLI parses ``--workload-param``) and a ``build(data,
**settings) -> core.workload.Workload`` function.  The base types and the
seed 000 / seed 002 generators live in :mod:`core.workload`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import params as _params
from ..errors import ParameterError, clip
from ..registry import collect
from ..table import Dataset
from ..workload import Workload


@dataclass(frozen=True)
class WorkloadKind:
    name: str
    title: str
    build: Callable[..., Workload]
    size_setting: str  # the setting that controls the number of queries (CLI --queries)
    explain: str
    params: tuple[_params.Param, ...] = field(default=())
    paper: str = ""
    metric: str = "relative error"  # what the paper reports for it
    order: int = 100

    def resolve(self, raw: dict[str, Any] | None = None) -> dict[str, Any]:
        return _params.resolve(self.params, raw, f"workload {self.name}")

    def make(self, data: Dataset, raw: dict[str, Any] | None = None) -> Workload:
        return self.build(data, **self.resolve(raw))


WORKLOADS: dict[str, WorkloadKind] = collect(sys.modules[__name__], "WORKLOADS")


def get(name: str) -> WorkloadKind:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise ParameterError(f"There is no workload '{clip(name)}'; choose one of: {', '.join(WORKLOADS)}.") from None


def make_workload(data: Dataset, kind: str = "seed000", **settings: Any) -> Workload:
    """Build a workload of ``kind`` with typed or string settings (defaults for the rest)."""
    return get(kind).make(data, settings)
