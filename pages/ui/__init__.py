"""Shared UI for the workbench pages (Streamlit only looks at ``pages/*.py``, so this folder is no page).

Modules:

* :mod:`pages.ui.state`: the plain ``st.session_state`` keys that hold the
  shared choices across pages, and their mirror in ``st.query_params``;
* :mod:`pages.ui.cached`: thin caching wrappers around core, keyed by
  primitives, in one byte-bounded store (an upload's results private to
  its session);
* :mod:`pages.ui.data`: the current table and dataset, upload parsing,
  previews;
* :mod:`pages.ui.params`: widgets generated from declared parameters;
* :mod:`pages.ui.layout`: page config, sidebar status, empty states;
* :mod:`pages.ui.fmt`: number formatting, labels and units;
* :mod:`pages.ui.views`: the hook for mechanism-specific views;
* :mod:`pages.ui.attacks`: the attack views of the Attacks page (one module each);
* :mod:`pages.ui.experiments`: renders the paper-figure experiments of a page.

Figures live in :mod:`core.figures` (no streamlit), so a report can reuse them.
"""

from . import attacks, cached, columns, data, experiments, fmt, layout, params, state, views  # noqa: F401
from .layout import dataset_or_empty_state, need_table, page_setup, sidebar_status  # noqa: F401
