"""Entry point: ``streamlit run app.py``.

The pages live in ``pages/`` (``0_Home.py`` first) and are listed once in
:data:`pages.ui.layout.PAGES`; ``st.navigation`` draws the sidebar from that
list, so Home is called "Home" there (classic ``pages/`` discovery named it
after this file). The shared UI code is in ``pages/ui/``.
"""

from __future__ import annotations

import streamlit as st

from core.lru import freeze_startup
from pages.ui.layout import PAGES

freeze_startup()  # once per process, before any session's data exists: the modules leave the collector's full scans
st.navigation([st.Page(path, title=title, icon=icon, default=(i == 0))
               for i, (path, title, icon) in enumerate(PAGES)]).run()
