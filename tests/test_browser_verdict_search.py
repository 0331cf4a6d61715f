"""Sanitize in a real browser with the nearest-setting search behind the page (issue 13 §5 latency).

The rerun after a slider move draws the release and its verdict at once;
the nearest setting that meets the guarantee (up to 16 more releases) is
looked for on a background thread and a fragment brings the one-click fix
when it is found.  Here the server runs with the default (background)
search, which the AppTests cannot exercise (they run no fragment timers).
"""

from __future__ import annotations

import re
import time

import pytest

from test_browser import _quiet, browser, streamlit_server  # noqa: F401  (chromium fixture, the server recipe)

pytestmark = pytest.mark.browser
QUERY = "data=adult&sa=occupation&seed=1&mech=mondrian"


@pytest.fixture(scope="module")
def server_bg():
    mp = pytest.MonkeyPatch()
    mp.setenv("WORKBENCH_VERDICT_SEARCH", "background")  # the server inherits it; the page tests use inline
    try:
        with streamlit_server() as url:
            yield url
    finally:
        mp.undo()


def _main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def test_the_fix_arrives_after_the_release_and_the_search_note_goes(server_bg, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{server_bg}/Sanitize?{QUERY}", timeout=120_000)
        page.get_by_text("The release", exact=True).wait_for(timeout=120_000)
        fix = page.get_by_role("button", name=re.compile(r"^Use "))
        fix.first.wait_for(timeout=120_000)  # Mondrian at its defaults fails on Adult: a fix is offered
        deadline = time.time() + 30
        while "Looking for the nearest setting" in _main_text(page) and time.time() < deadline:
            time.sleep(0.1)
        text = _main_text(page)
        assert "Looking for the nearest setting" not in text
        assert text.count("Does not meet") + text.count("does not meet") >= 1
        assert fix.count() == 1  # the verdict's fix once (the box is drawn once, not by the fragment too)
        # one click applies it: the page reruns at the suggested setting, whose release meets the guarantee
        # (on a loaded machine a click that lands while the search's own rerun redraws the box can be lost, as a
        # steward's would be: click once more if the button is still there, never more than three times)
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        meets = page.get_by_text(re.compile("^Meets")).first
        for attempt in range(3):
            if attempt == 0 or (fix.count() and not meets.is_visible()):
                fix.first.click()
            try:
                meets.wait_for(timeout=40_000 if attempt < 2 else 120_000)
                break
            except PlaywrightTimeout:
                if attempt == 2:
                    raise
    finally:
        page.close()


@pytest.fixture(scope="module")
def server_all_behind():
    """A server that searches the nearest setting and measures the risk behind the page, as a steward's does."""
    mp = pytest.MonkeyPatch()
    mp.setenv("WORKBENCH_VERDICT_SEARCH", "background")
    mp.setenv("WORKBENCH_RISK", "background")  # the suite's default is off (tests/conftest.py)
    try:
        with streamlit_server() as url:
            yield url
    finally:
        mp.undo()


def test_quick_moves_leave_no_search_or_measurement_hanging(server_all_behind, browser):  # noqa: F811
    """Four quick presses: what the slider left behind is cancelled (cached.release_background), and the
    setting it rests on gets its verdict's fix, its measured risk and its count in people all the same."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{server_all_behind}/Sanitize?{QUERY}", timeout=120_000)
        page.get_by_text("The release", exact=True).wait_for(timeout=120_000)
        slider = page.locator('[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]').first
        slider.wait_for(state="attached", timeout=60_000)
        # the opening setting's runs over (its figures in): a press while a run redraws the slider can be lost
        # (one CI run lost all four); the presses below then supersede one another while their work runs
        _quiet(page, 1.0)
        before = slider.input_value()
        for _ in range(4):  # not waiting for the runs: each press supersedes the one before
            slider.focus()
            page.keyboard.press("ArrowRight")
        _quiet(page, 3.0)
        text = _main_text(page)
        assert slider.input_value() != before
        for hanging in ("Looking for the nearest setting", "Measuring the risk", "Measuring how far",
                        "failed", "CancelledError", "Cancelled"):
            assert hanging not in text, (hanging, text[:2000])
        assert "Added risk" in text and "A count in people" in text
    finally:
        page.close()


def test_a_fix_drawn_while_the_risk_is_measured_applies_in_one_click(server_all_behind, browser):  # noqa: F811
    """With the risk measured behind the page too, the search's fragment draws the fix while the risk is still
    being measured (PriView: its search ends first on this machine in most runs) and the page is run once, when
    both are in; a click on the fix, wherever it was drawn, runs the page at the fixed setting."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{server_all_behind}/Sanitize?data=adult&sa=occupation&seed=11&mech=priview", timeout=120_000)
        fix = page.get_by_role("button", name=re.compile(r"^Use "))
        fix.first.wait_for(timeout=120_000)
        fix.first.click()
        page.get_by_text(re.compile("^Meets")).first.wait_for(timeout=120_000)
        _quiet(page, 1.0)
        text = _main_text(page)
        assert "construction=exact" in page.url and not page.locator('[data-testid="stException"]').count()
        for hanging in ("Looking for the nearest setting", "Measuring the risk", "Measuring how far"):
            assert hanging not in text, (hanging, text[:2000])
    finally:
        page.close()
