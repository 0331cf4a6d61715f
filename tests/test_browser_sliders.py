"""Sliders in a real browser: ArrowRight moves one fine step from a paper's value (issue 13 §5).

ε = ln 3 used to jump to 2, θ = 8 to 16; now each key press moves to the
next stop of a fine grid that holds the papers' values exactly, and the
thumb shows the value as the papers write it.
"""

from __future__ import annotations

import time

import pytest

from test_browser import _quiet, browser, server  # noqa: F401  (the module's fixtures: a server and chromium)

pytestmark = pytest.mark.browser

CASES = [  # (mechanism, slider label, shown before, shown after one ArrowRight, link value after)
    ("laplace", "ε (epsilon)", "ln 3 ≈ 1.099", "1.1", "epsilon=1.1"),
    ("bucketization", "θ (theta)", "8", "8.5", "theta=8.5"),
    ("uniform", "ρ₁ (rho1)", "1/13 ≈ 0.07692", "0.08", "rho1=0.08"),
]


def _wait(fn, timeout=60.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.1)
    return None


def sidebar_has(page, text: str) -> bool:
    return text.split(" = ")[1] in page.locator('[data-testid="stSidebar"]').inner_text()


@pytest.mark.parametrize("mech, label, before, after, link", CASES)
def test_arrow_right_moves_one_fine_step_from_the_papers_value(server, browser, mech, label, before,  # noqa: F811
                                                               after, link):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{server}/Sanitize?data=adult&sa=occupation&seed=1&mech={mech}", timeout=60_000)
        thumb = page.locator(f'[data-testid="stMain"] input[type="range"][aria-label="{label}"]')
        thumb.wait_for(state="attached", timeout=60_000)
        assert _wait(lambda: thumb.get_attribute("aria-valuetext") == before), thumb.get_attribute("aria-valuetext")
        thumb.focus()
        page.keyboard.press("ArrowRight")
        assert _wait(lambda: thumb.get_attribute("aria-valuetext") == after), thumb.get_attribute("aria-valuetext")
        # the rerun ends with the server holding the new value (the thumb is redrawn from it)
        state = '() => document.querySelector(\'[data-testid="stApp"]\').getAttribute("data-test-script-state")'
        assert _wait(lambda: page.evaluate(state) == "notRunning", 120)
        _quiet(page, 1.0)  # and no run has started for a second since: a later run would have redrawn it
        assert thumb.get_attribute("aria-valuetext") == after
        assert _wait(lambda: sidebar_has(page, link.replace("=", " = ")), 30) or link in page.url
    finally:
        page.close()


def test_opened_boxes_stay_open_through_a_slider_move(server, browser):  # noqa: F811
    """The history and the mechanism's view, drawn only while open (pages.ui.lazy), stay open after a move.

    The history's label changes with each setting tried ("History: 1 setting" -> "2 settings"), and
    Streamlit names an expander by its label: kept by the widget alone, the box closed at every move.
    """
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    state = '() => document.querySelector(\'[data-testid="stApp"]\').getAttribute("data-test-script-state")'
    try:
        page.goto(f"{server}/Sanitize?data=adult&sa=occupation&seed=1&mech=bucketization", timeout=60_000)
        thumb = page.locator('[data-testid="stMain"] input[type="range"][aria-label="θ (theta)"]')
        thumb.wait_for(state="attached", timeout=60_000)
        history = page.locator('[data-testid="stExpander"]', has_text="History: ")
        view = page.locator('[data-testid="stExpander"]', has_text="More about this")
        view.wait_for(timeout=60_000)
        assert view.get_by_text("buckets in").count() == 0  # closed: not drawn
        for box in (history, view):
            assert _wait(lambda: page.evaluate(state) == "notRunning", 120)
            box.locator("summary").click()
        assert _wait(lambda: history.locator('[data-testid="stDataFrame"]').count() == 1, 60)
        assert _wait(lambda: view.get_by_text("buckets in").count() > 0, 60)
        assert _wait(lambda: page.evaluate(state) == "notRunning", 120)
        thumb.focus()
        page.keyboard.press("ArrowRight")
        assert _wait(lambda: "History: 2 settings" in history.locator("summary").inner_text(), 60)
        assert _wait(lambda: page.evaluate(state) == "notRunning", 120)
        assert history.locator('[data-testid="stDataFrame"]').count() == 1
        assert view.get_by_text("buckets in").count() > 0
    finally:
        page.close()
