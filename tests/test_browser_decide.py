"""Decide and defend in a real browser (issue 13 §2-§3): pin, undo, compare, save, reload, reopen; reload after an upload.

``streamlit run app.py`` driven by Debian's chromium through Playwright;
the server is started here and stopped by its PID (fixtures of
``test_browser``).
"""

from __future__ import annotations

import json
import re

import pytest

from test_browser import _wait_for, browser, server  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser

#: the trace names of every plotly chart on the page (the Compare charts have one per pin)
_TRACES = "() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(g => (g.data || []).map(t => t.name))"


def _sidebar(page, title: str) -> None:
    """Switch page through the sidebar (a new URL would start a new session)."""
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=title).click()


def _text(page, text: str, timeout: float = 60) -> bool:
    return bool(_wait_for(lambda: page.get_by_text(text).count() > 0, timeout=timeout))


def _pin(page, name: str) -> None:
    box = page.get_by_role("textbox", name="Pin name")
    box.fill(name)
    box.press("Enter")
    page.get_by_role("button", name="📌 Pin this setting").click()
    assert _text(page, f"Pinned '{name}'"), f"pinning '{name}' gave no confirmation"


def _seed_in_url(page) -> str | None:
    """The seed the Sanitize page shows (its number input; the address bar follows one run later after a button)."""
    box = page.get_by_role("spinbutton", name="Seed (whole number)")
    return box.input_value() if box.count() else None


def test_pin_compare_undo_save_reload_and_reopen(server, browser, tmp_path):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1100}, accept_downloads=True)
    try:
        page.goto(f"{server}/Sanitize?data=adult&mech=splu&gamma=5&seed=1", timeout=60_000)
        page.wait_for_selector(".js-plotly-plot", timeout=60_000)
        _pin(page, "five")
        # a new seed is a new setting: pin it, undo back to seed 1, then pin a third one
        page.get_by_role("button", name="New random seed").click()
        assert _wait_for(lambda: _seed_in_url(page) not in (None, "1"), timeout=90), "the seed did not change"
        moved = _seed_in_url(page)
        _pin(page, "moved")
        page.get_by_role("button", name="Undo (one step back)").first.click()
        assert _wait_for(lambda: _seed_in_url(page) == "1", timeout=90), "undo did not bring seed 1 back"
        page.get_by_role("button", name="New random seed").click()
        assert _wait_for(lambda: _seed_in_url(page) not in (None, "1", moved), timeout=90)
        _pin(page, "five, new seed")

        _sidebar(page, "Compare")
        page.wait_for_selector('[data-testid="stTable"]', timeout=120_000)
        assert _text(page, "Side by side")
        names = _wait_for(lambda: (n := page.evaluate(_TRACES)) and "five, new seed" in n and n, timeout=90)
        assert names and {"five", "moved", "five, new seed"} <= set(names), names  # band errors and SA overlay
        # make the moved pin current again
        assert _text(page, "Decision record")  # the page ran to its end
        page.get_by_role("button", name="Make current").nth(1).click()
        assert _text(page, "is current again"), "make current gave no confirmation"
        _sidebar(page, "Sanitize")
        assert _wait_for(lambda: _seed_in_url(page) == moved, timeout=90), "the pin was not made current"
        _sidebar(page, "Compare")
        page.wait_for_selector('[data-testid="stTable"]', timeout=120_000)
        # the decision record
        page.get_by_role("textbox", name="Rationale (why this setting, why not the others)").fill("Small counts stay hidden.")
        page.get_by_role("textbox", name="Reviewers (comma separated)").fill("Ann, Bob")
        page.get_by_role("textbox", name="Reviewers (comma separated)").press("Enter")
        page.get_by_role("button", name="Record the decision").click()
        assert _text(page, "Decision recorded: 'five'.")

        _sidebar(page, "Home")
        button = page.get_by_role("button", name="Save the session (JSON)")
        button.wait_for(timeout=120_000)
        with page.expect_download(timeout=60_000) as info:
            button.click()
        saved = tmp_path / "adult-session.workbench.json"
        info.value.save_as(saved)
        doc = json.loads(saved.read_text(encoding="utf-8"))
        assert [p["name"] for p in doc["pins"]] == ["five", "moved", "five, new seed"]
        assert doc["decision"]["chosen"] == "five" and doc["decision"]["reviewers"] == ["Ann", "Bob"]
        assert doc["table"]["name"] == "adult" and len(doc["history"]) >= 3

        # a reload is a new session: the address bar brings the pins back, not the decision record
        page.reload()
        assert _text(page, "5. Save this session", timeout=120)
        assert "pins=" in _address(page)
        _sidebar(page, "Compare")
        assert _text(page, "Side by side", timeout=120)  # the three pins, from the link
        assert _wait_for(lambda: page.get_by_text("Recorded:").count() == 0 and _text(page, "Decision record"), 60)
        _sidebar(page, "Home")
        assert _text(page, "5. Save this session", timeout=120)
        page.get_by_text("Open a saved session").click()
        page.locator('[data-testid="stFileUploader"]').first.locator('input[type="file"]').set_input_files(str(saved))
        assert _text(page, "Opened 'adult-session.workbench.json'"), "opening the session gave no confirmation"
        assert _text(page, "3 pins")
        _sidebar(page, "Compare")
        names = _wait_for(lambda: (n := page.evaluate(_TRACES)) and "five, new seed" in n and n, timeout=120)
        assert names and {"five", "moved", "five, new seed"} <= set(names), names
        # the decision form is drawn below the charts: wait for the run that fills it, do not read it once
        box = page.get_by_role("textbox", name="Rationale (why this setting, why not the others)")
        rationale = _wait_for(lambda: box.count() and box.input_value() == "Small counts stay hidden.", timeout=60)
        assert rationale, box.input_value() if box.count() else "no rationale box on Compare"
    finally:
        page.close()


def test_reload_after_an_upload_asks_for_the_file_again(server, browser, tmp_path):  # noqa: F811
    good = tmp_path / "ward.csv"
    good.write_text("age,sex,diagnosis\n" + "".join(f"{30 + i % 40},{'FM'[i % 2]},{['flu', 'cold', 'hiv'][i % 3]}\n"
                                                    for i in range(60)), encoding="utf-8")
    other = tmp_path / "other.csv"
    other.write_text(good.read_text(encoding="utf-8").replace("hiv", "flu"), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    try:
        page.goto(server, timeout=60_000)
        page.get_by_text(re.compile(r"^Upload a file \(")).first.click()
        assert _text(page, "Upload a file above")  # the radio's run has finished
        assert _wait_for(lambda: "data=" not in _address(page), timeout=30)  # and its address bar is written
        _upload(page, good)
        assert _text(page, "Using 'ward.csv'")
        # the address bar names the upload by its content hash as soon as it is used (not a run later)
        assert _wait_for(lambda: "data=upload%3A" in _address(page), timeout=10), _address(page)
        assert "ward" not in _address(page)
        page.reload()
        assert _text(page, "upload the same file again"), "a reload after an upload did not ask for the file"
        assert page.get_by_text("UCI Adult").count() == 0  # Adult is not swapped in
        _upload(page, other)
        assert _text(page, "this link names, so it was not loaded")
        _upload(page, good)
        assert _text(page, "Using 'ward.csv'")
        assert _wait_for(lambda: page.locator('[data-testid="stMetricValue"]').count() > 0, timeout=60)
    finally:
        page.close()


def _address(page) -> str:
    """The address bar's query as the browser has it now.

    ``page.url`` is Playwright's copy, updated from events it only reads
    while a call waits on the browser: polled alone it can stay a run
    behind (this test's old flakiness was partly that).
    """
    return page.evaluate("() => location.search")


def _script_state(page) -> str | None:
    return page.evaluate("() => document.querySelector('[data-testid=\"stApp\"]')"
                         "?.getAttribute('data-test-script-state')")


def _upload(page, path) -> None:
    """Upload through the table uploader (Home also has the session-file uploader) and its preview step.

    The preview of the file before may still be on the page: wait for the
    run the new file starts, and for it to end, before pressing its button.
    """
    uploader = page.locator('[data-testid="stFileUploader"]', has_text="Upload a table")
    uploader.wait_for(timeout=60_000)
    _wait_for(lambda: _script_state(page) == "notRunning", timeout=60)
    uploader.locator('input[type="file"]').set_input_files(str(path))
    _wait_for(lambda: _script_state(page) == "running", timeout=10, interval=0.01)
    assert _wait_for(lambda: _script_state(page) == "notRunning", timeout=60)
    page.get_by_role("button", name="Use this table").click(timeout=60_000)
