"""Entry point: ``streamlit run app.py``.

The pages live in ``pages/`` (``0_Home.py`` first) and are listed once in
:data:`pages.ui.layout.PAGES`; ``st.navigation`` draws the sidebar from that
list, so Home is called "Home" there (classic ``pages/`` discovery named it
after this file). The shared UI code is in ``pages/ui/``.  With ``[auth]`` in
``.streamlit/secrets.toml`` every address shows a sign-in page until the
visitor signs in (docs/deployment.md).
"""

from __future__ import annotations

import streamlit as st

from core.lru import freeze_startup
from pages.ui.layout import PAGES, sign_in_page, sign_in_required, signed_in_bar

freeze_startup()  # once per process, before any session's data exists: the modules leave the collector's full scans
if sign_in_required() and not st.user.is_logged_in:  # [auth] in the secrets: every address shows the sign-in page
    st.navigation([st.Page(sign_in_page, title="Sign in", icon="🔑", url_path="sign-in")], position="hidden").run()
else:
    signed_in_bar()
    st.navigation([st.Page(path, title=title, icon=icon, default=(i == 0))
                   for i, (path, title, icon) in enumerate(PAGES)]).run()
