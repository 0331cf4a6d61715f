"""Attack views for the Attacks page.

Each module in this folder is one attack shown as a tab of
``pages/4_Attacks.py``.  A module defines::

    TITLE = "Reconstruction of a micro group"   # the tab label
    ORDER = 10                                  # tab order
    def render(data: core.table.Dataset) -> None: ...

``render`` draws the attack for the current table with streamlit calls
(widgets with unique keys prefixed by the module name) and must handle its
own empty and error states.  Attacks that are plain figure reproductions
can instead be registered as :mod:`core.experiments` with
``page="attacks"``; the page lists those too.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def discover() -> list[ModuleType]:
    """Every attack module, in ``ORDER``."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "render") and hasattr(module, "TITLE"):
            found.append(module)
    return sorted(found, key=lambda m: (getattr(m, "ORDER", 100), m.TITLE))
