"""A fresh server's first visit paints the title and a progress bar at once (app.py), then Home as usual.

The page records, from before its own scripts run, every text that appears
in the main area and whether the sidebar's page list was visible then; the
test waits for Home's first section and checks the order: the title and
"Starting the workbench" came first, never beside the file-named page list
("app" above Home) that Streamlit sends before app.py runs, and are gone
once Home is drawn.
"""

from __future__ import annotations

import json

import pytest

from tests.test_browser import browser, server  # noqa: F401  (fixtures: a fresh server for this module)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

_RECORD = """
window.__seen = [];
new MutationObserver(() => {
  const main = document.querySelector('[data-testid="stMain"]');
  if (!main) return;
  const text = main.innerText;
  const nav = document.querySelector('[data-testid="stSidebarNav"]');
  const navShown = !!nav && getComputedStyle(nav).visibility !== 'hidden' && nav.innerText.trim() !== '';
  const last = window.__seen[window.__seen.length - 1];
  const entry = {starting: text.includes('Starting the workbench'), title: text.includes('Privacy-utility workbench'),
                 home: text.includes('1. Choose a table'), nav: navShown ? nav.innerText : ''};
  if (!last || JSON.stringify(last) !== JSON.stringify(entry)) window.__seen.push(entry);
}).observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
"""


def test_first_visit_shows_title_and_progress_before_home(server, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.add_init_script(_RECORD)
        page.goto(server, timeout=120_000)
        page.get_by_text("1. Choose a table").wait_for(timeout=120_000)
        page.locator('[data-testid="stSidebarNav"]').get_by_text("Home").wait_for(timeout=30_000)
        seen = page.evaluate("() => window.__seen")
        skeleton = [s for s in seen if s["starting"]]
        assert skeleton, seen
        assert all(s["title"] and not s["home"] for s in skeleton)
        # Streamlit lists the pages folder's file names ("app" first) before app.py runs: hidden while the progress
        # shows (from its first frames), never shown again once it is gone
        assert not skeleton[-1]["nav"].startswith("app"), json.dumps(seen)
        assert all(not s["nav"].startswith("app") for s in seen[seen.index(skeleton[-1]):]), json.dumps(seen)
        first_home = next(i for i, s in enumerate(seen) if s["home"])
        assert seen.index(skeleton[0]) < first_home
        assert "Starting the workbench" not in page.locator('[data-testid="stMain"]').inner_text()
    finally:
        page.close()
