"""Discovery of plug-in modules (mechanisms, bounds, experiments).

Each mechanism lives in its own module under ``core/mechanisms`` and each
family of analytical curves under ``core/bounds``; a package's registry is
built by importing every module in it and collecting what the module
exports under an agreed name (``MECHANISMS`` or ``BOUNDS``, a list).  A new
mechanism is therefore one new file, not an edit in five places.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Any


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
