"""A fresh server whose first request is a page URL still shows the app's own sidebar.

Streamlit runs a page file directly ("pages folder" mode, sidebar entry "app"
above Home) when the first request of a process is ``/Sanitize`` and no run
of app.py has called ``st.navigation`` yet; ``pages.ui.layout.page_setup``
leaves that mode.  The server is started here (its own, so this request is
its first) and stopped by its PID.
"""

from __future__ import annotations

import pytest

from tests.test_browser import ARGS, CHROMIUM, _wait_for, streamlit_server

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_first_request_on_a_page_url_gets_the_navigation_sidebar():
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with streamlit_server() as url, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{url}/Sanitize", timeout=60_000)
            page.get_by_text("Sanitize: build a release").first.wait_for(timeout=90_000)
            nav = page.locator('[data-testid="stSidebarNav"]')
            entries = _wait_for(lambda: [t.strip() for t in nav.inner_text().splitlines() if t.strip()
                                         and t.strip().isascii() and len(t.strip()) > 2], timeout=30)
            assert entries and entries[0] == "Home", entries
            assert "app" not in entries, entries
            assert {"Sanitize", "Compare", "Papers"} <= set(entries), entries
        finally:
            browser.close()
