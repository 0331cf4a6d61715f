"""AppTest of reload safety and session files on the Home page (issue 13 §3)."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from conftest import app, metrics, no_exception, plain, use_upload
from core import session as S
from core.table import load_table

FRAME = pd.DataFrame({"age": [30, 40, 50, 60] * 10, "sex": ["F", "M"] * 20,
                      "diagnosis": ["flu", "cold", "hiv", "cancer", "flu"] * 8})


def _parquet(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    return buf.getvalue()


def test_reload_after_an_upload_asks_for_the_same_file_and_refuses_another():
    good = _parquet(FRAME)
    chash = load_table(good, "ward.parquet").content_hash
    # a reload is a new session on the same URL
    at = app(query={"data": f"upload:{chash}", "sa": "diagnosis", "qi": "age", "mech": "uniform"})
    no_exception(at)
    assert at.radio(key="w_source").value == "upload"
    assert any(f"content hash {chash}" in plain(w.value) and "upload the same file again" in plain(w.value)
               for w in at.warning)
    assert "Records used" not in metrics(at)  # no table shown: Adult is not swapped in
    other = FRAME.assign(diagnosis=["flu"] * 40)
    use_upload(at.file_uploader(key="w_upload").set_value(("other.parquet", _parquet(other), "application/octet-stream")).run())
    no_exception(at)
    assert len(at.error) == 1 and f"not the {chash} this link names" in plain(at.error[0].value)
    assert "Records used" not in metrics(at)
    use_upload(at.file_uploader(key="w_upload").set_value(("ward.parquet", good, "application/octet-stream")).run())
    no_exception(at)
    assert not at.error
    assert metrics(at)["Records used"] == "40 rows"
    assert at.selectbox(key="w_sa").value == "diagnosis" and at.multiselect(key="w_qi").value == ["age"]
    assert at.query_params["data"] == f"upload:{chash}"


def test_the_sanitize_page_after_a_reload_says_the_upload_is_missing():
    at = app("pages/1_Sanitize.py", query={"data": "upload:0123456789abcdef"})
    no_exception(at)
    assert any("upload the same file again" in plain(i.value) for i in at.info)


def _adult_session(**change):
    adult = load_table("adult")
    pins = (S.Pin("five", S.Setting("splu", {"gamma": 5}, 3)), S.Pin("up", S.Setting("uniform", {}, 3)))
    s = S.Session(S.TableRef("sample", "adult", adult.content_hash, len(adult)), "occupation", ("age", "sex"),
                  S.Setting("splu", {"gamma": 5}, 3), {"splu": {"gamma": 5}}, pins,
                  (S.Setting("splu", {"gamma": 6}, 3), S.Setting("splu", {"gamma": 5}, 3)),
                  S.make_decision("five", pins, "hides small counts", ["Ann"], "2026-11-24"))
    doc = s.to_json()
    for key, value in change.items():
        doc[key] = value
    return json.dumps(doc).encode()


@pytest.mark.slow
def test_open_a_session_applies_everything_and_a_bad_one_nothing():
    at = app()
    at.file_uploader(key="w_session_file").set_value(("s.workbench.json", _adult_session(),
                                                      "application/json")).run()
    no_exception(at)
    assert any("Opened 's.workbench.json'" in plain(s.value) for s in at.success)
    ss = at.session_state
    assert [p.name for p in ss["wb_pins"]] == ["five", "up"]
    assert ss["wb_mech"] == "splu" and ss["wb_seed"] == 3 and ss["wb_decision"].chosen == "five"
    assert at.multiselect(key="w_qi").value == ["age", "sex"]
    at.switch_page("pages/1_Sanitize.py").run()
    no_exception(at)
    assert at.slider(key="w_m_splu_gamma").value == 5 and at.number_input(key="w_seed").value == 3
    assert any("chosen in the decision record" in plain(c.value) for c in at.caption)
    assert at.button(key="w_undo").disabled is False  # the history came back too
    at.switch_page("pages/0_Home.py").run()
    # a session of another table (hash edited): one sentence, nothing changed
    bad = _adult_session(table={"kind": "sample", "name": "adult", "content_hash": "0" * 16})
    at.file_uploader(key="w_session_file").set_value(("other.json", bad, "application/json")).run()
    no_exception(at)
    assert len(at.error) == 1 and "saved on the sample 'adult'" in plain(at.error[0].value)
    assert [p.name for p in at.session_state["wb_pins"]] == ["five", "up"]
    # a damaged file
    at.file_uploader(key="w_session_file").set_value(("cut.json", _adult_session()[:300], "application/json")).run()
    assert len(at.error) == 1 and "not valid JSON" in plain(at.error[0].value)


@pytest.mark.slow  # over 1 s of CPU (the conftest check)
def test_open_a_zip_session_brings_the_uploaded_table_back():
    table = load_table(_parquet(FRAME), "ward.parquet")
    s = S.Session(S.TableRef("upload", "ward.parquet", table.content_hash, len(table)), "diagnosis", ("age",),
                  S.Setting("uniform", {}, 4))
    at = app()
    at.file_uploader(key="w_session_file").set_value(("w.zip", S.to_bytes(s, table.frame), "application/zip")).run()
    no_exception(at)
    assert metrics(at)["Records used"] == "40 rows"
    assert at.radio(key="w_source").value == "upload"
    assert at.session_state["wb_mech"] == "uniform"
    assert any("Save with the table inside" in d.proto.label for d in at.get("download_button"))
