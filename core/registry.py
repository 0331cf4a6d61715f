"""Discovery of plug-in modules (mechanisms, bounds, experiments).

Each mechanism lives in its own module under ``core/mechanisms`` and each
family of analytical curves under ``core/bounds``; a package's registry is
built by importing every module in it and collecting what the module
exports under an agreed name (``MECHANISMS`` or ``BOUNDS``, a list).  A new
mechanism is therefore one new file, not an edit in five places.

The light half, for a command line that starts at once: :data:`MAX_SEED`
and the help texts listing the samples, mechanisms, workloads and curves
(:func:`help_text`), kept in the generated module :mod:`core._helptext`, so
``python -m core --help`` imports none of the algorithms (nor pandas or
scipy).  ``python -m core.helptext`` writes that module again from the
registries; a test fails when it is out of date.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Any, Callable

#: largest release seed: fresh seeds draw 31 bits, and the pages take 0 .. MAX_SEED (one range everywhere)
MAX_SEED = 2**31 - 1
#: the help texts kept in core/_helptext.py, each built by the function of core.cli named here
HELP_TEXTS = {"samples": "_sample_help", "mechanisms": "_mechanism_help", "workloads": "_workload_help",
              "bounds": "_bound_help"}


def collect(package: ModuleType, attribute: str) -> dict[str, Any]:
    """Import every submodule of ``package`` and gather ``module.<attribute>``.

    Items must have ``name`` and ``order`` attributes; the result is ordered
    by ``(order, name)`` and names must be unique.
    """
    items: dict[str, Any] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for item in getattr(module, attribute, ()):
            if item.name in items:
                raise RuntimeError(f"{attribute} name {item.name!r} declared twice")
            items[item.name] = item
    return dict(sorted(items.items(), key=lambda kv: (kv[1].order, kv[0])))


def help_text(name: str, build: Callable[[], str]) -> str:
    """The help text ``name`` as kept in :mod:`core._helptext`, or ``build()`` when it is not kept there."""
    try:
        from ._helptext import TEXT
    except ImportError:  # pragma: no cover - the generated module is part of the package
        TEXT = {}
    text = TEXT.get(name)
    return text if text is not None else build()
