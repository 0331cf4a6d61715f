"""Shared fixtures for the page tests (AppTest) and the browser test."""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
# core imports scipy's heavy parts only where it uses them (so the CLI starts at once); imported here once, so
# that the CPU guard below does not charge their import to whichever test happens to use them first
import scipy.optimize  # noqa: E402,F401
import scipy.signal  # noqa: E402,F401
import scipy.special  # noqa: E402,F401
import scipy.stats  # noqa: E402,F401

#: AppTest runs no fragment timers: Sanitize must draw the nearest-setting fix before its run ends
os.environ.setdefault("WORKBENCH_VERDICT_SEARCH", "inline")
# the measured risk on the pages (pages/ui/risk.py): off in page tests but those that turn it on (inline) to check it
os.environ.setdefault("WORKBENCH_RISK", "off")
ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
#: AppTest's default of 3 s is too short for a first load of Adult plus a release
TIMEOUT = 60


#: the CPU seconds (this process's, all its threads: time.process_time) a test's call may use without the
#: ``slow`` mark; CPU, not wall time, so a loaded machine neither trips nor hides it (issue 24, item 6).  CPU
#: time still grows under load (shared caches): 0.84 s quiet was 1.03 s with two suites beside it, so a test
#: over 0.5 s quiet is marked slow (``WORKBENCH_TEST_CPU_LIMIT=0`` lists them)
CPU_LIMIT = float(os.environ.get("WORKBENCH_TEST_CPU_LIMIT", "1.0"))


_WARM: set[str] = set()


def _warm_up(item) -> None:
    """Pay the process's one-time costs (imports; for page tests a first AppTest run) before a test is measured.

    Without this the first test of a process (of a file run alone, or of an
    xdist worker) is charged for importing pandas, the mechanisms or
    streamlit, and the CPU check would flag whichever test happens to run
    first.
    """
    if "core" not in _WARM:
        _WARM.add("core")
        import pyarrow.parquet  # noqa: F401

        import core.cli  # noqa: F401
        import core.mechanisms  # noqa: F401
        import core.release  # noqa: F401
        import core.report  # noqa: F401
        import core.risk  # noqa: F401
        import core.session  # noqa: F401
        import core.table  # noqa: F401
    name = item.module.__name__.rpartition(".")[2] if getattr(item, "module", None) else ""
    if name.startswith("test_app_") and "app" not in _WARM:
        _WARM.add("app")
        import importlib
        import pkgutil

        import pages.ui

        for info in pkgutil.walk_packages(pages.ui.__path__, "pages.ui."):
            importlib.import_module(info.name)
        import streamlit as st

        app()  # Home, once: streamlit's own first-run costs
        st.cache_data.clear()
        st.cache_resource.clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    if CPU_LIMIT >= 0 and not (item.get_closest_marker("slow") or item.get_closest_marker("browser")):
        _warm_up(item)
    yield


#: the least CPU seconds :func:`_reference_work` took in this process (the machine's quiet pace, as near as seen)
_QUIET: list[float] = []


def _reference_work() -> float:
    """CPU seconds of a fixed piece of work like the tests' (numpy sorts and a Python loop; about 0.05 s quiet)."""
    import numpy as np

    start = time.process_time()
    values = np.random.default_rng(0).random(200_000)
    for _ in range(3):
        np.sort(values)
    total = 0
    for i in range(150_000):
        total += i
    return time.process_time() - start


def _slowdown() -> float:
    """How much more CPU the reference work takes now than at its quietest in this process (at least 1)."""
    if not _QUIET:
        _QUIET.append(min(_reference_work() for _ in range(3)))
    now = min(_reference_work() for _ in range(2))
    _QUIET[0] = min(_QUIET[0], now)
    return max(1.0, now / _QUIET[0])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Fail a test without the ``slow`` (or ``browser``) mark whose call used more than :data:`CPU_LIMIT` s of CPU.

    Only the test's own call is measured (not its fixtures' set-up), and
    only this process's CPU time: a test that runs its work in a child
    process is not seen (the CLI tests that do so are few and quick).
    CPU time grows under load too (caches and memory shared with the other
    jobs: 0.41 s quiet took 1.03 s with two suites beside it), so a test
    over the limit is charged at the machine's pace: its CPU divided by how
    much slower a fixed piece of work runs now than at its quietest in this
    process (:func:`_slowdown`).  A test that needs the limit on a quiet
    machine still fails on a loaded one.
    ``WORKBENCH_TEST_CPU_LIMIT=0`` lists every unmarked test's time
    (each fails with its figure); a negative value turns the check off.
    """
    marked = item.get_closest_marker("slow") or item.get_closest_marker("browser")
    if not marked and CPU_LIMIT > 0 and not _QUIET:
        _slowdown()  # the quiet pace, measured before the first test is
    start = time.process_time()
    outcome = yield
    used = time.process_time() - start
    if marked or CPU_LIMIT < 0 or outcome.excinfo is not None:
        return
    if used > CPU_LIMIT:
        slower = _slowdown() if CPU_LIMIT > 0 else 1.0
        if used / slower > CPU_LIMIT:
            outcome.force_exception(pytest.fail.Exception(
                f"{item.nodeid} used {used:.2f} s of CPU (more than {CPU_LIMIT:g} s; {used / slower:.2f} s at the "
                f"machine's quiet pace, it runs {slower:.2f}x slower now) without @pytest.mark.slow: mark it slow "
                "or make it smaller", pytrace=False))


@pytest.fixture(autouse=True)
def _fresh_streamlit_caches(request):
    """Streamlit's caches outlive an AppTest instance: start every page test from empty caches."""
    if not request.module.__name__.rpartition(".")[2].startswith("test_app_"):
        yield
        return
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


#: the key of the Sanitize page's expander that holds the mechanism's own view (drawn only while open)
OPEN_VIEW = ("w_open_view",)


def app(page: str | None = None, query: dict | None = None, opened: tuple[str, ...] = ()):
    """A fresh AppTest of the whole app, run once on ``page`` (``"pages/1_Sanitize.py"``) or Home.

    ``opened``: keys of expanders drawn only while open (:mod:`pages.ui.lazy`) that start open, as when the
    steward has opened them.
    """
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key in opened:
        open_box(at, key)
    if query:
        at.query_params.update(query)
    if page is not None:
        # the session's first run happens on ``page``, as when a shared link is opened
        at.switch_page(page)
    return at.run()


def opened_boxes(at) -> set[str]:
    """The keys of the lazily drawn expanders (:mod:`pages.ui.lazy`) open in ``at``'s session."""
    return set(at.session_state["wb_opened"]) if "wb_opened" in at.session_state else set()


def open_box(at, key: str) -> None:
    """Open the lazily drawn expander ``key`` from the next run on, as the steward's click does."""
    at.session_state["wb_opened"] = opened_boxes(at) | {key}


def places(at) -> dict:
    """Where each table, chart and download button sits in the page: ``(kind, n-th of its kind) -> path``."""
    out, seen = {}, {}

    def walk(node, path):
        for i, child in getattr(node, "children", {}).items():
            kind = getattr(child, "type", None)
            if kind in {"dataframe", "table", "plotly_chart", "download_button", "code"}:
                n = seen[kind] = seen.get(kind, -1) + 1
                out[(kind, n)] = path + (i,)
            walk(child, path + (i,))

    walk(at.main, ())
    return out


def no_exception(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def charts(at) -> dict[str, dict]:
    """Plotly figures on the page: element key (``chart_sa``) -> figure JSON."""
    out = {}
    for el in at.get("plotly_chart"):
        key = el.proto.id.split("-", 2)[-1]  # ids look like "$$ID-<hash>-<key>"
        out[key] = json.loads(el.proto.spec)
    return out


def plotly_array(values) -> np.ndarray:
    """An array as plotly sends it to the browser (``{"dtype", "bdata"}`` base64, or a plain list), as floats."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).astype(float)
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def chart_data(at) -> list[str]:
    """The data part of every plotly figure on the page, as JSON text (for before/after comparisons)."""
    return [json.dumps(json.loads(el.proto.spec)["data"], sort_keys=True) for el in at.get("plotly_chart")]


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def frame_with(at, column: str):
    """The first ``st.dataframe`` (or ``st.table``, its index as a column) on the page that has ``column``."""
    for el in at.dataframe:
        value = el.value
        if column in value.columns:
            return value
    for el in at.table:  # key-value read-outs are st.table (every cell wraps) indexed by their item
        value = el.value
        if column in value.columns:
            return value
        if value.index.name == column:
            return value.reset_index()
    raise KeyError(f"no dataframe with a column {column!r}")


def plain(markdown: str) -> str:
    """Text of a Markdown body with backslash escapes removed (pages escape user data)."""
    import re

    return re.sub(r"\\(.)", r"\1", markdown)


def use_upload(at):
    """Press "Use this table" under an upload's preview (Home), when the file read; returns ``at``.

    An upload is previewed first (how it was read, with controls); the
    table is used only once the button is pressed.  A file that does not
    read has no button: the preview shows its one-sentence error.
    """
    buttons = [b for b in at.button if b.key == "w_use_upload"]
    if buttons:
        buttons[0].click().run()
    return at


def upload(at, name: str, content: bytes, mime: str = "text/csv", use: bool = True):
    """Choose "upload" on Home, upload ``content`` as ``name`` and (``use``) press "Use this table"."""
    if at.radio(key="w_source").value != "upload":
        at.radio(key="w_source").set_value("upload").run()
    at.file_uploader(key="w_upload").set_value((name, content, mime)).run()
    return use_upload(at) if use else at


@pytest.fixture
def app_memo(monkeypatch):
    """The app's memos (published order, QI columns, per-record arrays) on a fresh byte-bounded store of 64 MB,
    and the session id their entries are scoped by (``session["id"]``, changeable)."""
    from core.engine import local
    from core.engine import memo as record_memo
    from core.lru import ByteLRU
    from pages.ui import cached

    lru = ByteLRU(64 * 2**20)
    monkeypatch.setattr(cached, "_STORES", [lru])
    monkeypatch.setattr(local, "ORDER_MEMO", cached._order_memo)
    monkeypatch.setattr(local, "QI_MEMO", cached._qi_memo)
    monkeypatch.setattr(record_memo, "RECORD_MEMO", cached._record_memo)
    session = {"id": "session-a"}
    monkeypatch.setattr(cached, "session_id", lambda: session["id"])
    return cached, lru, session


@pytest.fixture
def thresholds(monkeypatch):
    """The sizes glibc's mmap threshold is set to (recorded, not set), from a resting 128 KiB."""
    from core import lru

    if lru._TRIM is None:
        pytest.skip("not glibc")
    calls = []
    monkeypatch.setattr(lru, "_set_threshold", lambda size, trim: calls.append(size) or True)
    monkeypatch.setattr(lru, "_RESTING", [128 * 1024])
    monkeypatch.setattr(lru, "_LARGE", [0])
    return calls
