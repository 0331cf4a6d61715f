"""A closed tab's session is closed by the server, and what it held goes with it (issue 27: one session's memory).

Streamlit keeps a disconnected session for ``server.disconnectedSessionTTL``
seconds in a store whose entries cannot be read once that time is up; the
app closed sessions one second *after* it, found nothing to close, and the
session (its state, its pages' last releases) stayed in memory until another
tab disconnected.  Here a server runs with a 4 s TTL; a tab opens Sanitize
and closes; the server's log must say it closed that session while Streamlit
still had it.  The server is started here on loopback and stopped by its PID.
"""

from __future__ import annotations

import re
import time

import pytest

from pages.ui import cached
from tests.test_browser import _idle, browser, streamlit_server  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TTL = 4


def test_the_app_closes_a_session_before_streamlit_forgets_it():
    assert cached._close_after(120) == 119
    assert cached._close_after(TTL) == TTL - 0.4  # a tenth of a short TTL
    assert cached._close_after(0) == 0


def test_the_app_closes_a_session_while_streamlit_s_store_still_finds_it():
    """Streamlit's store stops finding a session at its TTL while still holding it (until it is next written to);
    the app's closing time must fall before that, or ``close_session`` finds nothing and the session stays."""
    from streamlit.runtime.memory_session_storage import MemorySessionStorage

    class Info:
        class session:
            id = "s1"

    for ttl in (120.0, float(TTL)):
        clock = [0.0]
        store = MemorySessionStorage(ttl_seconds=ttl)
        store._cache._timer = lambda: clock[0]
        store.save(Info)  # the tab disconnects at 0
        clock[0] = cached._close_after(ttl)
        assert store.get("s1") is Info  # when the app closes it, Streamlit still finds it
        clock[0] = ttl + 1  # the app's earlier closing time
        assert store.get("s1") is None and store.list() == []
        assert len(store._cache._data) == 1  # not found, yet still held


def test_a_closed_tab_s_session_is_closed_while_streamlit_still_has_it(browser, tmp_path):  # noqa: F811
    log = tmp_path / "server.log"
    with streamlit_server(args=("--server.disconnectedSessionTTL", str(TTL), "--logger.level", "info"),
                          log=log) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}/Sanitize?data=adult&sa=occupation&mech=uniform", timeout=180_000)
        page.wait_for_selector('[data-testid="stMain"] h1', timeout=180_000)
        _idle(page)
        page.close()
        deadline = time.time() + 120
        closed = []
        while time.time() < deadline and not closed:
            closed = re.findall(r"Closed session \S+ after .*", log.read_text(errors="replace"))
            time.sleep(0.2)
    assert closed, f"no session was closed; the server said:\n{log.read_text(errors='replace')[-2000:]}"
    assert "no longer had it" not in closed[0], closed[0]


def test_home_saves_an_upload_s_session_with_the_table_inside(browser, tmp_path):  # noqa: F811
    """The zip is made on the click (pages/ui/downloads.table_inside, the table held weakly): it holds the session
    and the uploaded table."""
    import io
    import zipfile

    import pandas as pd

    from core import session as session_file
    from tests.test_browser_isolation import _upload

    rows = 300
    frame = pd.DataFrame({"ward": [f"w{i % 7}" for i in range(rows)], "age": [20 + i % 50 for i in range(rows)],
                          "diagnosis": [f"d{i % 5}" for i in range(rows)]})
    with streamlit_server() as url:
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
        context.set_default_timeout(90_000)
        page = context.new_page()
        try:
            page.goto(url, timeout=60_000)
            page.get_by_text("Choose a table").first.wait_for(timeout=60_000)
            _upload(page, "wards.csv", frame.to_csv(index=False).encode())
            with page.expect_download(timeout=120_000) as info:
                page.get_by_role("button", name="Save with the table inside (zip)").click()
            data = (tmp_path / "s.zip")
            info.value.save_as(data)
        finally:
            context.close()
    with zipfile.ZipFile(io.BytesIO(data.read_bytes())) as zf:
        names = set(zf.namelist())
        table = pd.read_parquet(io.BytesIO(zf.read(session_file.TABLE_NAME)))
    assert names == {session_file.JSON_NAME, session_file.TABLE_NAME}
    assert len(table) == rows and list(table.columns) == list(frame.columns)
