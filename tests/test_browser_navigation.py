"""A fresh server whose first request is a page URL still shows the app's own sidebar.

Streamlit runs a page file directly ("pages folder" mode, sidebar entry "app"
above Home) when the first request of a process is ``/Sanitize`` and no run
of app.py has called ``st.navigation`` yet; ``pages.ui.layout.page_setup``
leaves that mode.  The server is started here (its own, so this request is
its first) and stopped by its PID.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.test_browser import ARGS, CHROMIUM, ROOT, _free_port, _wait_for, _wait_healthy

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_first_request_on_a_page_url_gets_the_navigation_sidebar():
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_healthy(port, proc)
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(f"http://127.0.0.1:{port}/Sanitize", timeout=60_000)
                page.get_by_text("Sanitize: build a release").first.wait_for(timeout=90_000)
                nav = page.locator('[data-testid="stSidebarNav"]')
                entries = _wait_for(lambda: [t.strip() for t in nav.inner_text().splitlines() if t.strip()
                                             and t.strip().isascii() and len(t.strip()) > 2], timeout=30)
                assert entries and entries[0] == "Home", entries
                assert "app" not in entries, entries
                assert {"Sanitize", "Compare", "Papers"} <= set(entries), entries
            finally:
                browser.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
