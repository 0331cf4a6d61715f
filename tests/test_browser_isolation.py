"""Uploads are private to their session: four browser contexts on one ``streamlit run app.py``.

Session 1 uploads table A as ``alpha_ward.csv``; session 2 uploads the same
bytes as ``beta_ward.csv``; session 3 uploads a different table B as
``gamma_ward.csv``.  Each must see only its own file name and data on Home
(the success line, the columns, the record count) and on Sanitize (the
reproduce command, the manifest shown and downloaded, the download file
name), also after the others have uploaded; a fourth session that uploads
nothing sees none of them.  Before the fix, the parsed upload was cached
across sessions by content hash, so session 2 got ``alpha_ward.csv`` in its
manifest.  The server is started here on loopback and stopped by its PID.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.test_browser import browser, server  # noqa: F401 (fixtures: this module gets its own server)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NAMES = ("alpha_ward.csv", "beta_ward.csv", "gamma_ward.csv")


def _csv(columns: tuple[str, str, str], rows: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        columns[0]: rng.integers(20, 70, rows),
        columns[1]: rng.choice([f"Z{i:02d}" for i in range(12)], rows),
        columns[2]: rng.choice([f"cond_{i}" for i in range(8)], rows),
    })
    return frame.to_csv(index=False).encode()


TABLE_A = _csv(("age_a", "zip_a", "dx_alpha"), 400, 1)
TABLE_B = _csv(("age_b", "zone_b", "dx_bravo"), 300, 2)



def _open(browser, server):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    # every auto-waiting action (clicks, text waits) waits for its element up to this bound, not Playwright's
    # 30 s default: on a loaded machine a page run can take longer than that, and that is not a failure
    context.set_default_timeout(90_000)
    page = context.new_page()
    page.goto(server, timeout=60_000)
    page.get_by_text("Choose a table").first.wait_for(timeout=60_000)
    return context, page


def _idle(page) -> None:
    """Until the app has finished its current run (Streamlit's script state on the app root)."""
    page.wait_for_function(
        "() => { const a = document.querySelector('[data-testid=\"stApp\"]'); "
        "return a && a.getAttribute('data-test-script-state') === 'notRunning'; }",
        timeout=60_000, polling=50)


def _upload(page, name: str, data: bytes) -> None:
    page.get_by_text("Upload a file (", exact=False).first.click()
    uploader = page.locator('[data-testid="stFileUploader"]', has_text="Upload a table")
    uploader.wait_for(timeout=60_000)
    _idle(page)
    uploader.locator('input[type="file"]').set_input_files(
        files=[{"name": name, "mimeType": "text/csv", "buffer": data}])
    page.get_by_role("button", name="Use this table").click(timeout=60_000)  # the preview step (issue 14)
    page.get_by_text(f"Using '{name}'").wait_for(timeout=60_000)
    page.locator('[data-testid="stMetricValue"]').first.wait_for(timeout=60_000)
    _idle(page)


def _home_text(page) -> str:
    """Home's text once its run has finished.

    Waiting for Home's own header first (a metric may still be the Sanitize
    page's, left on screen until the new run replaces it), then for the run
    to end, so the text read is all of Home and nothing stale.
    """
    page.locator('[data-testid="stSidebarNav"] a', has_text="Home").click()
    page.get_by_text("Which mechanisms can sanitize it").wait_for(timeout=90_000)
    _idle(page)
    page.locator('[data-testid="stMetricValue"]').first.wait_for(timeout=60_000)
    return page.inner_text("body")


def _sanitize(page) -> tuple[str, str, dict, str]:
    """(page text, reproduce command, downloaded manifest, manifest download name) on Sanitize."""
    page.locator('[data-testid="stSidebarNav"] a', has_text="Sanitize").click()
    page.get_by_text("Its guarantee", exact=True).wait_for(timeout=90_000)  # Sanitize's own, not a stale element
    code = page.locator('[data-testid="stCode"]').first
    code.wait_for(timeout=90_000)
    _idle(page)  # the download's file belongs to a finished run, not one a rerun is replacing
    if not page.locator('[data-testid="stJson"]').count():  # an earlier visit may have left it open: a click closes
        page.get_by_text("Manifest as JSON").click()  # drawn when opened (pages.ui.lazy): a rerun brings it
    page.locator('[data-testid="stJson"]').first.wait_for(timeout=60_000)
    _idle(page)
    with page.expect_download(timeout=60_000) as info:
        page.get_by_role("button", name="Manifest (JSON)").click()
    download = info.value
    manifest = json.loads(Path(download.path()).read_text(encoding="utf-8"))
    return page.content(), code.inner_text(), manifest, download.suggested_filename


def _assert_only(text: str, own: str | None) -> None:
    for name in NAMES:
        if name == own:
            assert name in text, f"{name} missing from its own session"
        else:
            at = text.find(name)  # where, so that a failure says which part of the page showed it
            assert at < 0, f"{name} shown in the session of {own}: ...{text[max(0, at - 600):at + 200]}..."


def _check_session(page, own: str, rows: int, columns: tuple[str, ...], others: tuple[str, ...]) -> None:
    home = _home_text(page)
    _assert_only(home, own)
    assert f"{rows:,} rows" in home
    for c in columns:
        assert c in home
    for c in others:
        assert not re.search(rf"\b{c}\b", home), f"column {c} of another table shown to {own}"
    content, command, manifest, filename = _sanitize(page)
    _assert_only(content, own)
    _assert_only(command, own)
    _assert_only(json.dumps(manifest), own)
    assert filename.startswith(own), filename
    assert own in command.split()


def test_two_browsers_see_only_their_own_upload(server, browser):
    opened = []
    try:
        c1, p1 = _open(browser, server)
        opened.append(c1)
        _upload(p1, "alpha_ward.csv", TABLE_A)
        _check_session(p1, "alpha_ward.csv", 400, ("dx_alpha",), ("dx_bravo", "zone_b"))

        c2, p2 = _open(browser, server)
        opened.append(c2)
        _upload(p2, "beta_ward.csv", TABLE_A)  # the same bytes under another name
        _check_session(p2, "beta_ward.csv", 400, ("dx_alpha",), ("dx_bravo", "zone_b"))

        c3, p3 = _open(browser, server)
        opened.append(c3)
        _upload(p3, "gamma_ward.csv", TABLE_B)
        _check_session(p3, "gamma_ward.csv", 300, ("dx_bravo",), ("dx_alpha", "zip_a"))

        # the first two still see only their own, after the others uploaded
        _check_session(p1, "alpha_ward.csv", 400, ("dx_alpha",), ("dx_bravo", "zone_b"))
        _check_session(p2, "beta_ward.csv", 400, ("dx_alpha",), ("dx_bravo", "zone_b"))

        # a session that uploads nothing sees no upload, on a sample or with the upload source chosen
        c4, p4 = _open(browser, server)
        opened.append(c4)
        _assert_only(_home_text(p4), None)
        p4.get_by_text("Upload a file (", exact=False).first.click()
        p4.get_by_text("Upload a file above").wait_for(timeout=60_000)
        _assert_only(p4.content(), None)
        p4.locator('[data-testid="stSidebarNav"] a', has_text="Sanitize").click()
        p4.get_by_text("No file is uploaded yet").wait_for(timeout=60_000)
        _assert_only(p4.content(), None)
    finally:
        for context in opened:
            context.close()
