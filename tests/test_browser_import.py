"""Issue 14's browser test: a headerless whitespace-separated ``.data`` file, uploaded, banded and sanitized.

A real ``streamlit run app.py`` driven by Debian's chromium: the test writes
a small table the way classic repositories ship them (no header row, fields
separated by runs of spaces, a ``.data`` name), uploads it on Home, checks
the preview found the whitespace delimiter and no header, names the columns,
presses "Use this table", bands the numeric QI ``age`` by equal width, opens
Sanitize and downloads the release and its manifest: every published age is
a band label ``[k·10, (k+1)·10)`` holding the original ages, and the manifest
records the band.  The server is started here and stopped by its PID.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.test_browser import _idle, _wait_for, browser, server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser


def _write_data_file(path: Path) -> pd.DataFrame:
    rng = np.random.default_rng(14)
    n = 300
    frame = pd.DataFrame({"age": rng.integers(18, 90, n), "sex": rng.choice(["F", "M"], n),
                          "zip": rng.choice(["A1", "B2", "C3"], n),
                          "diagnosis": rng.choice(["flu", "asthma", "copd", "diabetes", "hiv"], n)})
    lines = [f"{a:<4}{s}   {z}  {d}" for a, s, z, d in frame.itertuples(index=False)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return frame


_STATE = "() => document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state')"


def _settle(page, timeout: float = 60) -> None:
    """Wait until Streamlit has finished the run the last action started: conditions, not a fixed time.

    First until that run has started (the app's script state "running"; a
    run that ended before the first look is missed, which only costs the
    two-second bound), then until the state is "notRunning" with no status
    widget on three polls in a row (a fragment's run may follow the page's).
    """
    _wait_for(lambda: page.evaluate(_STATE) == "running", timeout=2, interval=0.01)
    calm, deadline = 0, time.time() + timeout
    while calm < 3 and time.time() < deadline:
        idle = page.evaluate(_STATE) == "notRunning" and page.locator('[data-testid="stStatusWidget"]').count() == 0
        calm = calm + 1 if idle else 0
        time.sleep(0.1)


def _choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the selectbox labelled ``label``: once the page's run has ended, open the list, type
    to filter it, wait for the option to be drawn and click it; again if the combobox does not then hold it (a
    list opened while a run was redrawing the box closed without a choice in a full CI run)."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    for _ in range(3):
        _idle(page)
        box.click()
        page.keyboard.type(option)  # filters the list, so the option is drawn however long it is
        choice = page.locator('[role="option"]').filter(has_text=option).first
        try:
            choice.wait_for(timeout=20_000)
            choice.click()
        except pytest.importorskip("playwright.sync_api").TimeoutError:  # the list closed under us: open it again
            page.keyboard.press("Escape")
            continue
        _settle(page)
        if _wait_for(lambda: option in box.locator('input[role="combobox"]').input_value(), timeout=10):
            return
    raise AssertionError(f"the selectbox {label!r} did not take {option!r}")


def _download(page, label: str) -> bytes:
    with page.expect_download(timeout=60_000) as info:
        page.get_by_role("button", name=label).first.click()
    return Path(info.value.path()).read_bytes()


def test_headerless_data_file_previewed_banded_and_sanitized(server, browser, tmp_path):  # noqa: F811
    original = _write_data_file(tmp_path / "clinic.data")
    page = browser.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page.set_default_timeout(120_000)  # a cold server on two busy cores takes a while to draw Home
    try:
        page.goto(server, timeout=60_000)
        page.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
        _settle(page)
        page.get_by_text("Upload a file").first.click()
        _settle(page)
        uploader = page.locator('[data-testid="stFileUploader"]').filter(has_text="Upload a table")
        uploader.locator('input[type="file"]').set_input_files(str(tmp_path / "clinic.data"))
        _settle(page)

        # the preview says how the file was read: whitespace-separated, no header row
        assert _wait_for(lambda: page.get_by_text("How the file was read").count() > 0, timeout=60)
        text = page.locator('[data-testid="stMain"]').inner_text()
        assert re.search(r"Read as 300 rows, 4 columns", text), text[-1500:]
        assert "delimiter: whitespace (detected)" in text and "first row: data (detected)" in text
        names = page.get_by_role("textbox", name="Column names (optional, comma separated)")
        names.fill("age, sex, zip, diagnosis")
        names.press("Enter")
        _settle(page)
        page.get_by_role("button", name="Use this table").click()
        _settle(page)

        # the proposal: diagnosis is the SA, age/sex/zip the QIs; band age by equal width (10 suggested)
        assert _wait_for(lambda: page.get_by_text("Proposed: diagnosis").count() > 0, timeout=60)
        _choose(page, "Banding of age", "equal width")
        sidebar = page.locator('[data-testid="stSidebar"]')
        assert _wait_for(lambda: "Banded: age (equal width 10)" in sidebar.inner_text(), timeout=30)
        assert _wait_for(lambda: page.get_by_text("Micro groups").count() > 0, timeout=30)

        # sanitize (the default mechanism) and download the release and its manifest
        sidebar.get_by_role("link", name="Sanitize").click()
        _settle(page, timeout=120)
        assert _wait_for(lambda: page.get_by_role("button", name="Table as CSV").count() > 0, timeout=120)
        release = pd.read_csv(__import__("io").BytesIO(_download(page, "Table as CSV")))
        manifest = json.loads(_download(page, "Manifest (JSON)"))
    finally:
        page.close()

    assert len(release) == len(original)
    assert set(release.columns) >= {"age", "sex", "zip", "diagnosis"}
    bands = set(release["age"])
    assert bands <= {f"[{k}, {k + 10})" for k in range(10, 100, 10)}
    lows = sorted(int(b[1:].split(",")[0]) for b in bands)
    assert lows[0] == 10 and lows[-1] == 80  # ages 18..89
    # uniform perturbation keeps the QIs (rows shuffled): as many records per band as the original ages give
    published = release["age"].str.slice(1).str.split(",").str[0].astype(int).value_counts().sort_index()
    expected = (original["age"] // 10 * 10).value_counts().sort_index()
    assert published.to_dict() == expected.to_dict()
    assert manifest["input"]["bands"] == {"age": {"method": "width", "width": 10}}
    assert manifest["input"]["qi"] == ["age", "sex", "zip"] and manifest["input"]["sensitive"] == "diagnosis"
    assert "--band age=10" in manifest["reproduce"]
