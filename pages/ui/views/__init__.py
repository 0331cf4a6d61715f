"""Mechanism-specific views for the Sanitize page (a plug-in hook).

The Sanitize page draws the same generic view for every release (notes,
previews, SA histogram, published metadata, privacy checks, downloads).
A mechanism that has more to show (SDR's sub-tables with their SA_i, gamma_i
and p_i; bucketization's QIT/ST; reconstruction privacy's resampled micro
groups) adds one module here, named after the mechanism
(``core.mechanisms.MECHANISMS`` key, dashes replaced by underscores)::

    # pages/ui/views/sdr.py
    import streamlit as st

    def render(release, data):
        '''Draw extra views for an SDR release; ``data`` is the input Dataset.'''
        st.subheader("Sub-tables")
        ...

The page calls ``render(release, data)`` below the generic view when the
module exists, inside an expander drawn only while it is open; a module's
``TOPIC`` (optional) says in that expander's label what the view shows.
Nothing else needs editing.  Keep views cheap (the page
reruns on every slider move) and free of side effects; use figures from
:mod:`core.figures` so the HTML report can reuse them.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Callable


def _module(mechanism: str):
    stem = mechanism.replace("-", "_")
    if not stem.isidentifier():
        return None
    module_name = f"{__name__}.{stem}"
    if importlib.util.find_spec(module_name) is None:
        return None
    return importlib.import_module(module_name)


def find(mechanism: str) -> Callable | None:
    """The ``render`` function of ``pages/ui/views/<mechanism>.py``, or None."""
    render = getattr(_module(mechanism), "render", None)
    return render if callable(render) else None


def topic(mechanism: str) -> str:
    """What the view of ``mechanism`` shows (its module's ``TOPIC``), for the label of the expander that holds it."""
    return str(getattr(_module(mechanism), "TOPIC", "how it was built"))
