"""Download buttons make their bytes on the click from what they name (pages/ui/downloads.py).

Streamlit keeps a download button's callable for the rest of the session
when a later run draws no button at its place; a lambda written in a page
held that run's namespace (on census 5M, a release of 160 MB per mechanism
looked at).  These tests check that the callables hold neither the release
nor the table, give the same bytes as the release in hand, and give them
again, byte for byte, once nothing else holds the release.
"""

from __future__ import annotations

import ast
import gc
import io
import json
import weakref
import zipfile
from pathlib import Path

import pytest

from core import api
from core.errors import WorkbenchError
from core.release import csv_bytes, manifest_bytes, parquet_bytes, zip_bytes
from core.session import Setting
from pages.ui import cached, downloads
from pages.ui import risk as uirisk

ROOT = Path(__file__).resolve().parents[1]


def _adult():
    return api.dataset(api.Request(Setting("uniform", {}, 3), data="adult", sensitive="occupation"))


def _args(data, mechanism, params, seed=3):
    return data, data.key, mechanism, cached.items(params), seed


@pytest.mark.slow
@pytest.mark.parametrize("mechanism, params, kinds", [
    ("uniform", {"p": 0.5}, ("csv", "parquet", "manifest")),
    ("anatomy", {"l": 4}, ("zip-csv", "zip-parquet", "manifest")),
])
def test_the_bytes_are_the_release_s_and_come_again_once_nothing_holds_it(mechanism, params, kinds):
    data = _adult()
    args = _args(data, mechanism, params)
    release = api.build(data, Setting(mechanism, params, 3))
    off = api.beside_verdict(uirisk.OFF, release.verdict)
    expected = {
        "csv": lambda r: csv_bytes(r.main_table.to_frame()),
        "parquet": lambda r: parquet_bytes(r.main_table.to_frame()),
        "manifest": lambda r: manifest_bytes(r, {"chosen": "A"}, off),
        "zip-csv": lambda r: zip_bytes(r, "csv", {"chosen": "A"}, off),
        "zip-parquet": lambda r: zip_bytes(r, "parquet", {"chosen": "A"}, off),
    }
    made = {k: downloads.release_file(k, args, release, {"chosen": "A"}, "off") for k in kinds}
    first = {k: f() for k, f in made.items()}
    assert first == {k: expected[k](release) for k in kinds}
    held = weakref.ref(release)
    del release
    gc.collect()
    assert held() is None, "a download callable kept the release alive"
    assert {k: f() for k, f in made.items()} == first  # made again from its seed: the same bytes


@pytest.mark.slow
def test_the_manifest_carries_the_measured_risk_when_the_risk_is_on():
    data = _adult()
    args = _args(data, "uniform", {"p": 0.5})
    release = api.build(data, Setting("uniform", {"p": 0.5}, 3))
    got = json.loads(downloads.release_file("manifest", args, release, None, "background")())
    block = got["risk"]
    assert block["measured"] is True and block["risk"] == pytest.approx(
        api.assess_risk(data, Setting("uniform", {"p": 0.5}, 3))["risk"])
    off = json.loads(downloads.release_file("manifest", args, release, None, "off")())["risk"]
    assert off["measured"] is False  # the page said the risk is off: the manifest says so, it measures nothing


def test_a_button_of_a_table_no_longer_loaded_says_so():
    data = _adult()
    release = api.build(data, Setting("uniform", {"p": 0.5}, 3))
    make = downloads.release_file("csv", _args(data, "uniform", {"p": 0.5}), release, None, "off")
    del data, release
    gc.collect()
    with pytest.raises(WorkbenchError, match="no longer loaded"):
        make()
    with pytest.raises(ValueError, match="Unknown download"):
        downloads.release_file("xlsx", (None,), None, None, "off")


def test_home_s_session_with_the_table_holds_the_table_weakly():
    from core import session as session_file
    from core.table import load_table

    table = load_table("adult")
    make = downloads.table_inside(lambda small, frame: f"{small}:{len(frame)}".encode(), "s", table)
    assert make() == f"s:{len(table.frame)}".encode()
    held = weakref.ref(table)
    del table
    gc.collect()
    assert held() is None
    with pytest.raises(WorkbenchError, match="no longer loaded"):
        make()
    assert callable(session_file.to_bytes)  # what Home passes as ``make``


def _inline_download_data(source: str) -> list[int]:
    """Lines where a page passes a download button a lambda or a function defined in the page itself."""
    tree = ast.parse(source)
    local = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "download_button":
            data = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "data"),
                                                                   None)
            if isinstance(data, ast.Lambda) or (isinstance(data, ast.Name) and data.id in local):
                bad.append(node.lineno)
    return bad


def test_no_page_script_gives_a_download_button_a_lambda():
    pages = sorted((ROOT / "pages").glob("*.py"))
    assert len(pages) >= 9
    found = {p.name: _inline_download_data(p.read_text(encoding="utf-8")) for p in pages}
    assert not any(found.values()), f"download callables that hold a run's namespace: {found}"
    # the check finds what it looks for
    assert _inline_download_data("import streamlit as st\nst.download_button('x', lambda: b'', key='k')\n") == [2]
    assert _inline_download_data("def f():\n    return b''\nst.download_button('x', f)\n") == [3]


def test_a_zip_download_carries_no_clock():
    data = _adult()
    release = api.build(data, Setting("anatomy", {"l": 4}, 3))
    with zipfile.ZipFile(io.BytesIO(zip_bytes(release, "csv"))) as zf:
        infos = zf.infolist()
    assert [i.filename for i in infos] == [f"{n}.csv" for n in release.tables] + ["manifest.json"]
    assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}


def test_a_pool_thread_lets_go_of_the_script_s_context_after_its_task():
    """A background thread that kept the last task's script context kept that session alive after it closed."""
    import threading
    from types import SimpleNamespace

    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = SimpleNamespace(pages_manager=SimpleNamespace(main_script_hash=""))
    seen = {}

    def task():
        with cached._script_context(ctx):
            seen["during"] = get_script_run_ctx(suppress_warning=True)
        seen["after"] = get_script_run_ctx(suppress_warning=True)

    t = threading.Thread(target=task)
    t.start()
    t.join(30)
    assert seen == {"during": ctx, "after": None}


@pytest.mark.slow
def test_a_finished_page_run_empties_the_one_before_it():
    """What Streamlit still references of an earlier run (stale widgets' callbacks) no longer holds its release."""
    from pages.ui import state
    from tests.conftest import app

    at = app("pages/1_Sanitize.py", {"data": "adult", "sa": "occupation", "mech": "uniform"})
    first = at.session_state[state.LAST_RUN]
    assert first["release"].mechanism == "uniform"
    at.selectbox(key="w_mech").set_value("anatomy").run()
    assert not at.exception
    second = at.session_state[state.LAST_RUN]
    assert second is not first and second["release"].mechanism == "anatomy"
    assert first == {}  # emptied: the uniform release is no longer reachable through it
    at.switch_page("pages/0_Home.py").run()
    assert second == {} and at.session_state[state.LAST_RUN]["__file__"].endswith("0_Home.py")
