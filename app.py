"""Entry point: ``streamlit run app.py``.

The pages live in ``pages/`` (``0_Home.py`` first) and are listed once in
:data:`pages.ui.layout.PAGES`; ``st.navigation`` draws the sidebar from that
list, so Home is called "Home" there (classic ``pages/`` discovery named it
after this file). The shared UI code is in ``pages/ui/``.
"""

from __future__ import annotations

import importlib
import sys

import streamlit as st


def _first_run():
    """A fresh server's first run paints the page's title and a progress bar at once, then imports the pages.

    Importing what the first page needs (pandas, the eleven mechanisms, the
    pages' shared code) takes seconds on a fresh server, during which the
    browser would show a blank page; later runs find it imported and skip
    this.  Returns the skeleton's placeholder (None on later runs), emptied
    once ``st.navigation`` has replaced Streamlit's file-named page list.
    """
    if "pages.ui.layout" in sys.modules:
        return None
    box = st.empty()
    with box.container():
        # until st.navigation below runs, Streamlit lists pages/ as files ("app" first): hidden with the skeleton
        st.markdown("<style>[data-testid='stSidebarNav']{visibility:hidden}</style>", unsafe_allow_html=True)
        st.title("Privacy-utility workbench")
        bar = st.progress(0.0, text="Starting the workbench")
    steps = (("pandas", "tables"), ("core.mechanisms", "the mechanisms"), ("pages.ui.layout", "the pages"))
    for i, (module, what) in enumerate(steps):
        bar.progress(i / len(steps), text=f"Starting the workbench: loading {what}")
        importlib.import_module(module)
    return box


_skeleton = _first_run()

from core.lru import freeze_startup  # noqa: E402  (after the first paint)
from pages.ui.layout import PAGES  # noqa: E402

freeze_startup()  # once per process, before any session's data exists: the modules leave the collector's full scans
navigation = st.navigation([st.Page(path, title=title, icon=icon, default=(i == 0))
                            for i, (path, title, icon) in enumerate(PAGES)])
if _skeleton is not None:
    _skeleton.empty()
navigation.run()
