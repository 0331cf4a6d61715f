"""One value for a setting in a real browser (issue 23 §1): what the widgets show is what the release uses.

Mondrian's one-click fix, a switch to another mechanism and back: the
widgets must show the fixed values (the release and the link use them),
not their lowest ends, and one arrow-key press must move from them.
"""

from __future__ import annotations

import os
from urllib.parse import parse_qs, urlparse

import pytest

from test_browser import _quiet, browser, streamlit_server  # noqa: F401  (chromium; a server started here)
from test_browser_import import _choose, _settle, _wait_for

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server():
    """A server that looks for the nearest setting behind the page, as it does for a steward (the page tests'
    conftest asks for it inline)."""
    saved = os.environ.pop("WORKBENCH_VERDICT_SEARCH", None)
    try:
        with streamlit_server() as url:
            yield url
    finally:
        if saved is not None:
            os.environ["WORKBENCH_VERDICT_SEARCH"] = saved


def _query(page) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlparse(page.evaluate("location.href")).query).items()}


def _shown(page) -> dict[str, object]:
    beta = page.locator('[data-testid="stMain"] input[type="range"][aria-label="β (beta)"]')
    k = page.locator('[data-testid="stMain"] [data-testid="stNumberInput"]').filter(has_text="k").locator("input")
    auto = page.get_by_role("checkbox", name="derive ℓ automatically")
    return {"beta": beta.get_attribute("aria-valuetext"), "k": k.first.input_value(),
            "auto": auto.is_checked()}


def test_fix_switch_and_back_shows_the_fixed_setting(server, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(120_000)
    try:
        page.goto(f"{server}/Sanitize?data=adult&sa=occupation&mech=mondrian&k=20&seed=1", timeout=60_000)
        fix = page.get_by_role("button", name="Use β")
        fix.first.wait_for(timeout=120_000)
        fix.first.click()
        _settle(page)
        # the fix raises β at k = 20 (issue 23 §2: every parameter searched, ranked by groups)
        assert _wait_for(lambda: _query(page).get("beta") not in (None, "0.1"), 60), _query(page)
        fixed = _query(page)
        before = _shown(page)
        assert before["k"].replace(",", "") == fixed.get("k", "20")
        _choose(page, "Mechanism", "Anatomy")
        assert _wait_for(lambda: _query(page).get("mech") == "anatomy", 60), (_query(page), page.screenshot(
            path="/tmp/browser_setting_failure.png"))
        _choose(page, "Mechanism", "Mondrian")
        assert _wait_for(lambda: _query(page).get("mech") == "mondrian", 60)
        _settle(page)
        _quiet(page, 1.0)  # no run for a second: the widgets are drawn from the setting the page ends with
        after = _shown(page)
        assert after == before, (before, after, _query(page))
        assert {k: _query(page).get(k) for k in ("beta", "k")} == {k: fixed.get(k) for k in ("beta", "k")}
    finally:
        page.close()


def test_a_link_keeps_its_seed_and_derived_values_once_the_page_is_quiet(server, browser):  # noqa: F811
    """Opened afresh eight times, a link's seed and its "derived" parameters stay as the link says.

    Before the fix, 3 to 7 fresh loads in 12 to 23 ended with seed 0, p = 0.2 and S₂ = '' in the address
    bar, the sidebar and the seed box: a fragment's timed rerun raced the first run, the browser dropped
    the widgets' state and sent back their defaults (tests/test_app_dropped_state.py has the mechanism).
    Each load is watched until no run has started for 2.5 s (the fragments measuring risk and searching
    the nearest setting have stopped polling): a condition, not a fixed time.
    """
    wrong = []
    for seed in range(201, 209):
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.goto(f"{server}/Sanitize?data=adult&sa=occupation&mech=splu&gamma=5&seed={seed}", timeout=60_000)
            page.wait_for_selector(".js-plotly-plot", timeout=120_000)
            _quiet(page, 2.5)
            query = _query(page)
            box = page.locator('input[aria-label="Seed (whole number)"]').input_value()
            side = page.locator('[data-testid="stSidebar"]').inner_text()
            got = {"seed": query.get("seed"), "p": query.get("p"), "sa2": query.get("sa2"), "gamma": query.get("gamma"),
                   "box": box, "sidebar": f"Seed: {seed}" in side}
            want = {"seed": str(seed), "p": "auto", "sa2": "auto", "gamma": "5", "box": str(seed), "sidebar": True}
            if got != want:
                wrong.append((seed, got))
        finally:
            page.close()
    assert wrong == [], wrong
