"""Sanitize's sliders show the setting's value from their first paint (issue 23 item 4 of the open list).

They used to appear at the parameter's minimum (γ = 1.01, ρ₁ = 0.0001) and jump to the
setting's value a moment later.  Every value each slider's thumb shows is recorded in the page
from before the app's first script runs (a MutationObserver installed by an init script).
"""

from __future__ import annotations

import time

import pytest

from test_browser import browser, server  # noqa: F401  (the module's fixtures: a server and chromium)

pytestmark = pytest.mark.browser

_RECORD = """() => {
  window.__thumbs = [];
  const seen = (el) => window.__thumbs.push([el.getAttribute('aria-label'), el.getAttribute('aria-valuetext')
                                               || el.getAttribute('aria-valuenow')]);
  new MutationObserver((changes) => {
    for (const c of changes) {
      if (c.type === 'attributes' && c.target.matches && c.target.matches('input[type="range"], [role="slider"]')) {
        seen(c.target);
      }
      for (const n of c.addedNodes || []) {
        if (!n.querySelectorAll) continue;
        if (n.matches('input[type="range"], [role="slider"]')) seen(n);
        n.querySelectorAll('input[type="range"], [role="slider"]').forEach(seen);
      }
    }
  }).observe(document, {subtree: true, childList: true, attributes: true,
                        attributeFilter: ['aria-valuetext', 'aria-valuenow']});
}"""
_STATE = '() => document.querySelector(\'[data-testid="stApp"]\')?.getAttribute("data-test-script-state")'


def _settled(page, timeout: float = 180.0) -> None:
    deadline = time.time() + timeout
    quiet = None
    while time.time() < deadline:
        if page.evaluate(_STATE) == "notRunning" and page.locator('[data-testid="stMain"] h1').count():
            quiet = quiet or time.time()
            if time.time() - quiet > 1.5:
                return
        else:
            quiet = None
        time.sleep(0.05)
    raise TimeoutError("the page did not settle")


@pytest.mark.parametrize("mech, query, label, value", [
    ("splu", "gamma=7", "γ (gamma)", "7"),
    ("uniform", "rho1=0.2", "ρ₁ (rho1)", "0.2"),
])
def test_a_slider_shows_the_settings_value_from_its_first_paint(server, browser, mech, query, label,  # noqa: F811
                                                                value):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.add_init_script(f"({_RECORD})()")
        page.goto(f"{server}/Sanitize?data=adult&sa=occupation&seed=1&mech={mech}&{query}", timeout=60_000)
        # the slider first (a condition: under load the app can rest between its first runs for longer than
        # _settled's quiet time before the sliders are drawn), then the page's quiet
        page.locator(f'input[type="range"][aria-label="{label}"], [role="slider"][aria-label="{label}"]').first \
            .wait_for(state="attached", timeout=180_000)
        _settled(page)
        thumbs = page.evaluate("() => window.__thumbs")
        shown = [v for name, v in thumbs if name == label]
        assert shown, thumbs
        assert set(shown) == {value}, f"{label} showed {shown} (the first paint must be {value})"
    finally:
        page.close()
